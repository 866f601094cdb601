/* ticket.c: tickets, the cheap two-step of the Lua binding's breaker
 * object: b:acquire() gives a ticket as a value and b:success(ticket),
 * b:failure(ticket), b:ignore(ticket) and breaker:call's _report report it,
 * nothing allocated; and the published quiet path in C under them, with
 * its Lua state's stripe of counter cells (LB_LUA_QUIET_MT). Part of
 * objects.c's unit (objects.h).
 */
#include "objects.h"

/* ---- tickets: the cheap two-step ------------------------------------------------ */
/* The published quiet path (lazybreaker/fastpath.h, layout 1), in C for
 * Lua 5.4 (and LuaJIT without its ffi path): a CLOSED call admitted and its
 * success counted in a stripe of counter cells this Lua state claims (a
 * state runs on one thread at a time: one writer), without cb_allow and
 * cb_done; every other call goes to them. Rejections always do here: the
 * library's are cheap beside this crossing, and they need its state and
 * wait anyway. The stripe goes back when the state closes (__gc). */
#define LB_LUA_SLOT(h) ((h)&0xffffffu) /* layout 1: index_bits 24, line_words 8 */
#define LB_LUA_ASK_LIBRARY INT_MIN     /* no status of the library: cb_allow decides */

static void lb_lua_quiet_start(lb_lua_quiet *q) {
  cb_fastpath fp;
  cb_fastpath_cells cells;
  fp.struct_size = sizeof fp;
  cells.struct_size = sizeof cells;
  q->state = -1;
  /* LAZYBREAKER_FASTPATH=0: the off switch (docs/lua.md) */
  const char *env = getenv("LAZYBREAKER_FASTPATH");
  if ((env && strcmp(env, "0") == 0) || cb_fastpath_describe(&fp) != CB_OK || fp.layout != 1 ||
      fp.index_bits != 24 || fp.line_words != 8 || cb_fastpath_claim_cells(&cells) != CB_OK)
    return;
  q->lines = fp.lines;
  q->cells = cells.cells;
  q->stripe = cells.stripe;
  q->fold_at = fp.fold_at;
  q->state = 1;
}

static const lb_lua_quiet *lb_lua_quiet_of(lb_lua_breaker *b) {
  lb_lua_quiet *q = b->quiet;
  if (q->state == 0) lb_lua_quiet_start(q);
  return q->state > 0 ? q : NULL;
}

static int lb_lua_quiet_gc(lua_State *L) {
  lb_lua_quiet *q = (lb_lua_quiet *)lua_touserdata(L, 1);
  if (q->state > 0) (void)cb_fastpath_release_cells(q->stripe);
  q->state = -1; /* a __gc that runs after this one calls the library */
  return 0;
}

static uint64_t lb_lua_quiet_word(const lb_lua_quiet *q, cb_handle h) {
  return __atomic_load_n(q->lines + LB_LUA_SLOT(h) * 8, __ATOMIC_ACQUIRE);
}

static int lb_lua_quiet_is_quiet(cb_handle h, uint64_t w) {
  return ((h ^ w) >> 24) == 0 && (w >> 63) == 1;
}

static void lb_lua_quiet_count(const lb_lua_quiet *q, cb_handle h, int f) {
  uint64_t *cell = q->cells + LB_LUA_SLOT(h);
  const uint64_t v = __atomic_load_n(cell, __ATOMIC_RELAXED) + (1ull << (16 * f));
  __atomic_store_n(cell, v, __ATOMIC_RELEASE);
  if ((v >> (16 * f)) & q->fold_at) (void)cb_fastpath_fold(q->stripe, h, f);
}

/* The quiet path's admission (rules quiet and admit), or LB_LUA_ASK_LIBRARY for
 * cb_allow to decide. */
static int lb_lua_quiet_allow(const lb_lua_quiet *q, cb_handle h, cb_ticket *ticket) {
  const uint64_t w = lb_lua_quiet_word(q, h);
  if (lb_lua_quiet_is_quiet(h, w)) {
    *ticket = h + w;
  } else {
    const unsigned mode = (unsigned)(w >> 60);
    if ((h >> 24) != (0xb0000ull << 20 | ((w >> 24) & 0xfffff)) ||
        (mode != CB_FASTPATH_MODE_WINDOW && mode != CB_FASTPATH_MODE_RUN))
      return LB_LUA_ASK_LIBRARY;
    *ticket = h + ((uint64_t)CB_FASTPATH_CALL_TICKET << 60 | (w & 0xffffff));
  }
  lb_lua_quiet_count(q, h, CB_FASTPATH_ADMITTED);
  return CB_OK;
}

/* b:acquire(): cb_allow with the ticket as a value, nothing allocated: a Lua
 * integer on Lua 5.4, the ticket's 64 bits as they are (bit for bit, as
 * Java's long). Rejected: nil, reason, retry_after, as allow. On LuaJIT,
 * whose numbers hold 53 bits, lazybreaker.lua replaces this with its ffi
 * path (uint64_t cdata); this C form then gives the ticket as an exact
 * decimal string. */
static int lb_lua_breaker_acquire(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const lb_lua_quiet *q = lb_lua_quiet_of(b);
  cb_ticket ticket = 0;
  int st = q ? lb_lua_quiet_allow(q, b->handle, &ticket) : LB_LUA_ASK_LIBRARY;
  if (st == LB_LUA_ASK_LIBRARY) st = cb_allow(b->handle, &ticket);
  if (st == CB_OK) {
#if LUA_VERSION_NUM >= 503
    lua_pushinteger(L, (lua_Integer)ticket);
#else
    lb_lua_push_u64_string(L, ticket);
#endif
    return 1;
  }
  if (st == CB_REJECTED) return lb_lua_push_rejection(L, b);
  return lb_lua_raise_status(L, st);
}

/* A ticket from acquire: the integer as it came (Lua 5.4), else any exact
 * form lb_lua_to_u64 takes. */
static cb_ticket lb_lua_check_ticket(lua_State *L, int idx) {
#if LUA_VERSION_NUM >= 503
  int is_integer = 0;
  const lua_Integer t = lua_tointegerx(L, idx, &is_integer);
  if (is_integer) return (cb_ticket)t;
#endif
  return lb_lua_check_u64(L, idx);
}

/* b:success(ticket), b:failure(ticket), b:ignore(ticket): cb_done for a
 * ticket of acquire; a quiet success is only counted. */
static int lb_lua_breaker_report(lua_State *L, int outcome) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const cb_ticket ticket = lb_lua_check_ticket(L, 2);
  const lb_lua_quiet *q = outcome == CB_SUCCESS ? lb_lua_quiet_of(b) : NULL;
  if (q) {
    const uint64_t w = lb_lua_quiet_word(q, b->handle);
    if (lb_lua_quiet_is_quiet(b->handle, w) && ticket == b->handle + w) {
      lb_lua_quiet_count(q, b->handle, CB_FASTPATH_SUCCESSES);
      return 0;
    }
  }
  const int st = cb_done(b->handle, ticket, outcome);
  if (st < 0) return lb_lua_raise_status(L, st);
  return 0;
}
static int lb_lua_breaker_success(lua_State *L) { return lb_lua_breaker_report(L, CB_SUCCESS); }
static int lb_lua_breaker_failure(lua_State *L) { return lb_lua_breaker_report(L, CB_FAILURE); }
static int lb_lua_breaker_ignore(lua_State *L) { return lb_lua_breaker_report(L, CB_IGNORED); }

/* b:_report(ticket, outcome): breaker:call's verdict, a cb_outcome_t. */
static int lb_lua_breaker_report_outcome(lua_State *L) {
  const int outcome = (int)luaL_checkinteger(L, 3);
  if (outcome < CB_SUCCESS || outcome > CB_IGNORED)
    return luaL_error(L, "lazybreaker: unknown outcome %d", outcome);
  return lb_lua_breaker_report(L, outcome);
}
