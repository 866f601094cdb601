/* ticket.c: tickets, the cheap two-step of the Lua binding's breaker
 * object: b:acquire() gives a ticket as a value and b:success(ticket),
 * b:failure(ticket), b:ignore(ticket) and breaker:call's _report report it,
 * nothing allocated. Both call the library (cb_allow, cb_done), whose own
 * quiet path serves a healthy call. A port of the published quiet path
 * (lazybreaker/fastpath.h) here would save one C call inside a Lua call
 * several times its cost: within the noise of bench/lua (docs/lua.md, "The
 * cheap two-step"). Part of objects.c's unit (objects.h).
 */
#include "objects.h"

/* ---- tickets: the cheap two-step ------------------------------------------------ */
/* b:acquire(): cb_allow with the ticket as a value, nothing allocated: a Lua
 * integer on Lua 5.4, the ticket's 64 bits as they are (bit for bit, as
 * Java's long). Rejected: nil, reason, retry_after, as allow. On LuaJIT,
 * whose numbers hold 53 bits, lazybreaker.lua replaces this with its ffi
 * path (uint64_t cdata); this C form then gives the ticket as an exact
 * decimal string. */
static int lb_lua_breaker_acquire(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  cb_ticket ticket = 0;
  const int st = cb_allow(b->handle, &ticket);
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
 * ticket of acquire. */
static int lb_lua_breaker_report(lua_State *L, int outcome) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const cb_ticket ticket = lb_lua_check_ticket(L, 2);
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
