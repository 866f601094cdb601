/* objects.c: the registry, breaker and permit objects of the Lua binding,
 * hand-written with luaL_newmetatable because SWIG cannot express them: a
 * permit that reports a failure from __gc and __close, objects that keep
 * each other alive by reference counts, 64-bit handles and tickets that
 * never cross into a Lua number (a LuaJIT number holds 53 bits).
 *
 * This file is compiled inside the SWIG wrapper of bindings/swig/lua.i (it
 * takes cb_config and cb_registry_options from SWIG's proxies), once for
 * Lua 5.4 and once for LuaJIT; it uses only the C API common to both.
 *
 * Ownership. Three C records, each freed when its count reaches 0:
 *   lb_lua_reg      a registry; counted by its Lua object and every breaker
 *                   record. Closed (cb_registry_close) when the count
 *                   reaches 0, or at once by reg:close().
 *   lb_lua_breaker  a breaker handle; counted by its Lua object and every
 *                   permit not yet reported. Destroyed (cb_destroy) when the
 *                   count reaches 0 if the object was made by new/create
 *                   (not by lookup or breakers()), or at once by b:close()
 *                   (unless made by get_or_create: a shared breaker, which
 *                   close only lets go of).
 *   permit          the Lua userdata itself: a ticket and its breaker.
 * A Lua state is single-threaded, so the counts are plain ints. The state
 * machine stays in the library: nothing here decides a transition.
 */

#define LB_LUA_REGISTRY_MT "lazybreaker.registry"
#define LB_LUA_BREAKER_MT "lazybreaker.breaker"
#define LB_LUA_PERMIT_MT "lazybreaker.permit"

#if LUA_VERSION_NUM >= 504
#define lb_lua_newuserdata(L, size) lua_newuserdatauv(L, size, 0)
#else
#define lb_lua_newuserdata(L, size) lua_newuserdata(L, size)
#endif
#if LUA_VERSION_NUM < 502 && !defined(lua_rawlen) /* SWIG's runtime may have defined it */
#define lua_rawlen(L, idx) lua_objlen(L, idx)
#endif

typedef struct lb_lua_reg {
  cb_registry *reg;
  int refs;
  int closed;
  int is_default;
} lb_lua_reg;

typedef struct lb_lua_quiet {
  const uint64_t *lines;
  uint64_t *cells;
  uint32_t stripe;
  uint32_t fold_at;
  int state; /* 0: not tried yet, 1: counting in `stripe`, -1: the library's path */
} lb_lua_quiet;

typedef struct lb_lua_breaker {
  cb_handle handle;
  lb_lua_reg *reg;
  int refs;
  int owned;
  int shared; /* from get_or_create: close lets go, never destroys */
  int closed;
  lb_lua_quiet *quiet; /* its Lua state's (acquire, success) */
} lb_lua_breaker;

typedef struct lb_lua_permit {
  lb_lua_breaker *breaker; /* NULL once reported */
  cb_ticket ticket;
} lb_lua_permit;

/* The userdata of registry and breaker objects: a pointer to the record. */
typedef struct lb_lua_ref {
  void *record;
} lb_lua_ref;

/* ---- errors ---------------------------------------------------------------- */
static int lb_lua_raise_status(lua_State *L, int status) {
  lb_lua_push_status_message(L, status);
  return lua_error(L);
}

/* ---- records ---------------------------------------------------------------- */
static void lb_lua_reg_release(lb_lua_reg *r) {
  if (--r->refs > 0) return;
  if (!r->closed && !r->is_default) cb_registry_close(r->reg);
  free(r);
}

static void lb_lua_breaker_release(lb_lua_breaker *b) {
  if (--b->refs > 0) return;
  if (b->owned && !b->closed && !b->reg->closed) cb_destroy(b->handle);
  lb_lua_reg_release(b->reg);
  free(b);
}

/* ---- checks: the metatables are upvalues 1..3 of every function ------------ */
#define LB_LUA_UP_REGISTRY lua_upvalueindex(1)
#define LB_LUA_UP_BREAKER lua_upvalueindex(2)
#define LB_LUA_UP_PERMIT lua_upvalueindex(3)
/* Reported permits that breaker:call may hand out again (see _enter). */
#define LB_LUA_UP_POOL lua_upvalueindex(4)
/* This Lua state's lb_lua_quiet (acquire, success). */
#define LB_LUA_UP_QUIET lua_upvalueindex(5)
#define LB_LUA_UPVALUES 5
#define LB_LUA_POOL_MAX 64

static void *lb_lua_check(lua_State *L, int idx, int mt_upvalue, const char *what) {
  void *p = lua_touserdata(L, idx);
  if (p && lua_getmetatable(L, idx)) {
    const int same = lua_rawequal(L, -1, mt_upvalue);
    lua_pop(L, 1);
    if (same) return p;
  }
  luaL_error(L, "lazybreaker: expected a %s, got %s", what, luaL_typename(L, idx));
  return NULL;
}

static lb_lua_reg *lb_lua_check_reg(lua_State *L, int idx) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, idx, LB_LUA_UP_REGISTRY, "registry");
  lb_lua_reg *r = (lb_lua_reg *)ref->record;
  if (r->closed) luaL_error(L, "lazybreaker: the registry is closed");
  return r;
}

static lb_lua_breaker *lb_lua_check_breaker(lua_State *L, int idx) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, idx, LB_LUA_UP_BREAKER, "breaker");
  lb_lua_breaker *b = (lb_lua_breaker *)ref->record;
  if (!b || b->closed) luaL_error(L, "lazybreaker: the breaker is closed");
  if (b->reg->closed) luaL_error(L, "lazybreaker: the breaker's registry is closed");
  return b;
}

/* ---- numbers ------------------------------------------------------------------ */
/* Seconds (a non-negative number) to nanoseconds, rounded to the nearest. */
static uint64_t lb_lua_check_seconds(lua_State *L, int idx) {
  const lua_Number s = luaL_checknumber(L, idx);
  const double ns = floor((double)s * 1e9 + 0.5);
  if (!(ns >= 0) || ns >= 18446744073709551616.0)
    luaL_error(L, "lazybreaker: expected a duration in seconds, 0 or more, got %f", (double)s);
  return (uint64_t)ns;
}

static uint64_t lb_lua_check_u64(lua_State *L, int idx) {
  uint64_t v = 0;
  if (!lb_lua_to_u64(L, idx, &v)) lua_error(L);
  return v;
}

/* Nanoseconds to seconds; "never" (UINT64_MAX) is math.huge. */
static void lb_lua_push_seconds(lua_State *L, uint64_t ns) {
  lua_pushnumber(L, ns == UINT64_MAX ? (lua_Number)HUGE_VAL : (lua_Number)((double)ns / 1e9));
}

/* A uint64_t as a decimal string: exact on every interpreter. */
static void lb_lua_push_u64_string(lua_State *L, uint64_t v) {
  char buf[24];
  char *p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  lua_pushstring(L, p);
}

static const char *lb_lua_state_name(int state) {
  const char *name = cb_state_name(state);
  return name ? name : "unknown";
}

/* ---- breaker objects ---------------------------------------------------------------- */
static void lb_lua_push_breaker(lua_State *L, lb_lua_reg *r, cb_handle h, int owned) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_newuserdata(L, sizeof *ref);
  ref->record = NULL;
  lua_pushvalue(L, LB_LUA_UP_BREAKER);
  lua_setmetatable(L, -2);
  lb_lua_breaker *b = (lb_lua_breaker *)calloc(1, sizeof *b);
  if (!b) {
    if (owned) cb_destroy(h);
    luaL_error(L, "lazybreaker: out of memory");
  }
  b->handle = h;
  b->reg = r;
  b->refs = 1;
  b->owned = owned;
  b->quiet = (lb_lua_quiet *)lua_touserdata(L, LB_LUA_UP_QUIET);
  r->refs++;
  ref->record = b;
}

static int lb_lua_breaker_gc(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lua_touserdata(L, 1);
  if (ref && ref->record) {
    lb_lua_breaker *b = (lb_lua_breaker *)ref->record;
    ref->record = NULL;
    lb_lua_breaker_release(b);
  }
  return 0;
}

/* Why a call was just rejected, read without moving the state machine. */
static int lb_lua_push_rejection(lua_State *L, const lb_lua_breaker *b) {
  const int state = cb_state(b->handle);
  uint64_t retry_ns = 0;
  cb_retry_after(b->handle, &retry_ns);
  lua_pushnil(L);
  lua_pushstring(L, state == CB_STATE_HALF_OPEN     ? "half_open_full"
                    : state == CB_STATE_FORCED_OPEN ? "forced_open"
                                                    : "open");
  lb_lua_push_seconds(L, retry_ns);
  return 3;
}

static int lb_lua_breaker_allow(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  cb_ticket ticket = 0;
  const int st = cb_allow(b->handle, &ticket);
  if (st == CB_OK) {
    lb_lua_permit *p = (lb_lua_permit *)lb_lua_newuserdata(L, sizeof *p);
    p->breaker = b;
    p->ticket = ticket;
    b->refs++;
    lua_pushvalue(L, LB_LUA_UP_PERMIT);
    lua_setmetatable(L, -2);
    return 1;
  }
  if (st == CB_REJECTED) return lb_lua_push_rejection(L, b);
  return lb_lua_raise_status(L, st);
}

/* breaker:call's own allow: as allow, but the permit may be one that an
 * earlier call reported (the pool), so a call allocates nothing in the
 * steady state. Safe only because breaker:call never lets its permit
 * escape: it reports it with _done, which returns it to the pool, and if
 * the call never returns (a coroutine dropped mid-call) the permit is
 * collected and its __gc reports the failure, as any permit's. allow()
 * always makes a new permit: a user may keep one after its verdict, or
 * close it (<close>) later, and a reused one would take someone else's
 * call with it. */
static int lb_lua_breaker_enter(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  cb_ticket ticket = 0;
  const int st = cb_allow(b->handle, &ticket);
  if (st == CB_OK) {
    const int n = (int)lua_rawlen(L, LB_LUA_UP_POOL);
    lb_lua_permit *p;
    if (n > 0) {
      lua_rawgeti(L, LB_LUA_UP_POOL, n);
      lua_pushnil(L);
      lua_rawseti(L, LB_LUA_UP_POOL, n);
      p = (lb_lua_permit *)lua_touserdata(L, -1);
    } else {
      p = (lb_lua_permit *)lb_lua_newuserdata(L, sizeof *p);
      lua_pushvalue(L, LB_LUA_UP_PERMIT);
      lua_setmetatable(L, -2);
    }
    p->breaker = b;
    p->ticket = ticket;
    b->refs++;
    return 1;
  }
  if (st == CB_REJECTED) return lb_lua_push_rejection(L, b);
  return lb_lua_raise_status(L, st);
}

static int lb_lua_breaker_state(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const int state = cb_state(b->handle);
  if (state < 0) return lb_lua_raise_status(L, state);
  lua_pushstring(L, lb_lua_state_name(state));
  return 1;
}

static uint64_t lb_lua_retry_after_ns(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  uint64_t ns = 0;
  const int st = cb_retry_after(b->handle, &ns);
  if (st < 0) lb_lua_raise_status(L, st);
  return ns;
}

static int lb_lua_breaker_retry_after(lua_State *L) {
  lb_lua_push_seconds(L, lb_lua_retry_after_ns(L));
  return 1;
}

/* retry_after_ns(): an integer (Lua 5.4) or number; retry_after_ns(true):
 * the exact decimal string, on every interpreter. "Never" is math.huge,
 * or the string of UINT64_MAX. */
static int lb_lua_breaker_retry_after_ns(lua_State *L) {
  const uint64_t ns = lb_lua_retry_after_ns(L);
  if (lua_toboolean(L, 2))
    lb_lua_push_u64_string(L, ns);
  else if (ns == UINT64_MAX)
    lua_pushnumber(L, (lua_Number)HUGE_VAL);
  else
    lb_lua_push_u64(L, ns);
  return 1;
}

static void lb_lua_set_u64(lua_State *L, const char *key, uint64_t v, int exact) {
  if (exact)
    lb_lua_push_u64_string(L, v);
  else
    lb_lua_push_u64(L, v);
  lua_setfield(L, -2, key);
}

/* stats(): counters as integers (Lua 5.4) or numbers; stats(true): the
 * counters as exact decimal strings. */
static int lb_lua_breaker_stats(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const int exact = lua_toboolean(L, 2);
  cb_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  const int st = cb_stats_get(b->handle, &s);
  if (st < 0) return lb_lua_raise_status(L, st);
  lua_createtable(L, 0, 13);
  lb_lua_set_u64(L, "admitted", s.admitted, exact);
  lb_lua_set_u64(L, "rejected", s.rejected, exact);
  lb_lua_set_u64(L, "successes", s.successes, exact);
  lb_lua_set_u64(L, "failures", s.failures, exact);
  lb_lua_set_u64(L, "ignored", s.ignored, exact);
  lb_lua_set_u64(L, "trips", s.trips, exact);
  lb_lua_set_u64(L, "consecutive_failures", s.consecutive_failures, exact);
  lb_lua_set_u64(L, "slow", s.slow, exact);
  lua_pushnumber(L, s.failure_rate);
  lua_setfield(L, -2, "failure_rate");
  lua_pushnumber(L, s.slow_rate);
  lua_setfield(L, -2, "slow_rate");
  lb_lua_set_u64(L, "state_ns", s.state_ns, exact);
  lb_lua_push_seconds(L, s.state_ns);
  lua_setfield(L, -2, "state_seconds");
  const int state = cb_state(b->handle);
  lua_pushstring(L, lb_lua_state_name(state));
  lua_setfield(L, -2, "state");
  return 1;
}

/* b:_config(): the breaker's configuration read back (cb_config_get), a
 * table of cb_config's fields by their C names (lazybreaker.lua names the
 * policy). */
#define LB_LUA_SET_FIELD(field, type, since, unit, bounds, lo, hi, def)                         \
  _Generic(c.field, double : lua_pushnumber, default : lb_lua_push_config_integer)(L, c.field); \
  lua_setfield(L, -2, #field);
static void lb_lua_push_config_integer(lua_State *L, uint64_t v) {
#if LUA_VERSION_NUM >= 503
  lua_pushinteger(L, (lua_Integer)v); /* every field's largest value fits */
#else
  lua_pushnumber(L, (lua_Number)v);
#endif
}
static int lb_lua_breaker_config(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  cb_config c;
  cb_config_init(&c);
  const int st = cb_config_get(b->handle, &c);
  if (st < 0) return lb_lua_raise_status(L, st);
  lua_createtable(L, 0, 16);
  CB_CONFIG_FIELDS(LB_LUA_SET_FIELD)
  return 1;
}
#undef LB_LUA_SET_FIELD

static int lb_lua_breaker_manual(lua_State *L, int (*fn)(cb_handle)) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const int st = fn(b->handle);
  if (st < 0) return lb_lua_raise_status(L, st);
  lua_settop(L, 1);
  return 1; /* the breaker, so calls chain */
}
static int lb_lua_breaker_force_open(lua_State *L) {
  return lb_lua_breaker_manual(L, cb_force_open);
}
static int lb_lua_breaker_disable(lua_State *L) { return lb_lua_breaker_manual(L, cb_disable); }
static int lb_lua_breaker_reset(lua_State *L) { return lb_lua_breaker_manual(L, cb_reset); }

static int lb_lua_breaker_trip_for(lua_State *L, uint64_t ns) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  const int st = cb_trip(b->handle, ns);
  if (st < 0) return lb_lua_raise_status(L, st);
  lua_settop(L, 1);
  return 1;
}
static int lb_lua_breaker_trip(lua_State *L) {
  return lb_lua_breaker_trip_for(L, lb_lua_check_seconds(L, 2));
}
static int lb_lua_breaker_trip_ns(lua_State *L) {
  return lb_lua_breaker_trip_for(L, lb_lua_check_u64(L, 2));
}

/* The name, or nil for an anonymous breaker. */
static int lb_lua_breaker_name(lua_State *L) {
  lb_lua_breaker *b = lb_lua_check_breaker(L, 1);
  char buf[CB_MAX_NAME_BYTES + 1];
  const int st = cb_name(b->handle, buf, sizeof buf);
  if (st < 0) return lb_lua_raise_status(L, st);
  if (buf[0])
    lua_pushstring(L, buf);
  else
    lua_pushnil(L);
  return 1;
}

/* Destroys the breaker now: its name is free again, and every object for
 * it raises from now on. Closing twice is a no-op. A shared breaker's
 * object (get_or_create) is only closed: the breaker stays for every
 * process using it. */
static int lb_lua_breaker_close(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_BREAKER, "breaker");
  lb_lua_breaker *b = (lb_lua_breaker *)ref->record;
  if (b->closed || b->reg->closed) return 0;
  if (b->shared) {
    b->closed = 1;
    return 0;
  }
  const int st = cb_destroy(b->handle);
  b->closed = 1;
  if (st < 0 && st != CB_EHANDLE) return lb_lua_raise_status(L, st);
  return 0;
}

static int lb_lua_breaker_is_closed(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_BREAKER, "breaker");
  lb_lua_breaker *b = (lb_lua_breaker *)ref->record;
  lua_pushboolean(L, b->closed || b->reg->closed);
  return 1;
}

static int lb_lua_breaker_tostring(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_BREAKER, "breaker");
  lb_lua_breaker *b = (lb_lua_breaker *)ref->record;
  if (b->closed || b->reg->closed) {
    lua_pushstring(L, "lazybreaker.breaker(closed)");
    return 1;
  }
  char buf[CB_MAX_NAME_BYTES + 1];
  if (cb_name(b->handle, buf, sizeof buf) != CB_OK) buf[0] = '\0';
  const int state = cb_state(b->handle);
  lua_pushfstring(L, "lazybreaker.breaker(%s%s%s, %s)", buf[0] ? "\"" : "",
                  buf[0] ? buf : "anonymous", buf[0] ? "\"" : "", lb_lua_state_name(state));
  return 1;
}

/* Two objects for one breaker (new, then lookup) are equal. */
static int lb_lua_breaker_eq(lua_State *L) {
  lb_lua_ref *a = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_BREAKER, "breaker");
  lb_lua_ref *b = (lb_lua_ref *)lb_lua_check(L, 2, LB_LUA_UP_BREAKER, "breaker");
  const lb_lua_breaker *x = (const lb_lua_breaker *)a->record;
  const lb_lua_breaker *y = (const lb_lua_breaker *)b->record;
  lua_pushboolean(L, x && y && x->handle == y->handle);
  return 1;
}

/* ---- tickets: the cheap two-step ------------------------------------------------ */
/* The published quiet path (lazybreaker/fastpath.h, layout 1), in C for
 * Lua 5.4 (and LuaJIT without its ffi path): a CLOSED call admitted and its
 * success counted in a stripe of counter cells this Lua state claims (a
 * state runs on one thread at a time: one writer), without cb_allow and
 * cb_done; every other call goes to them. Rejections always do here: the
 * library's are cheap beside this crossing, and they need its state and
 * wait anyway. The stripe goes back when the state closes (__gc). */
#define LB_LUA_QUIET_MT "lazybreaker.quiet"
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

/* ---- permits --------------------------------------------------------------------- */
static lb_lua_permit *lb_lua_check_permit(lua_State *L) {
  return (lb_lua_permit *)lb_lua_check(L, 1, LB_LUA_UP_PERMIT, "permit");
}

static int lb_lua_permit_report(lua_State *L, int outcome) {
  lb_lua_permit *p = lb_lua_check_permit(L);
  lb_lua_breaker *b = p->breaker;
  if (!b) return luaL_error(L, "lazybreaker: the permit was already reported");
  p->breaker = NULL;
  const int gone = b->closed || b->reg->closed;
  const int st = gone ? CB_OK : cb_done(b->handle, p->ticket, outcome);
  lb_lua_breaker_release(b);
  if (gone) return luaL_error(L, "lazybreaker: the permit's breaker is closed");
  if (st < 0) return lb_lua_raise_status(L, st);
  return 0;
}
static int lb_lua_permit_success(lua_State *L) { return lb_lua_permit_report(L, CB_SUCCESS); }
static int lb_lua_permit_failure(lua_State *L) { return lb_lua_permit_report(L, CB_FAILURE); }
static int lb_lua_permit_ignore(lua_State *L) { return lb_lua_permit_report(L, CB_IGNORED); }

/* permit:_done(outcome): breaker:call's verdict (a cb_outcome_t), then the
 * permit goes back to the pool for the next call (see _enter). */
static int lb_lua_permit_done(lua_State *L) {
  const int outcome = (int)luaL_checkinteger(L, 2);
  if (outcome < CB_SUCCESS || outcome > CB_IGNORED)
    return luaL_error(L, "lazybreaker: unknown outcome %d", outcome);
  lua_settop(L, 1);
  lb_lua_permit_report(L, outcome);
  const int n = (int)lua_rawlen(L, LB_LUA_UP_POOL);
  if (n < LB_LUA_POOL_MAX) lua_rawseti(L, LB_LUA_UP_POOL, n + 1);
  return 0;
}

/* __gc and __close: no verdict is a failure. They never raise: a breaker
 * closed meanwhile has nothing left to tell. */
static int lb_lua_permit_abandon(lua_State *L) {
  lb_lua_permit *p = (lb_lua_permit *)lua_touserdata(L, 1);
  if (!p || !p->breaker) return 0;
  lb_lua_breaker *b = p->breaker;
  p->breaker = NULL;
  if (!b->closed && !b->reg->closed) (void)cb_done(b->handle, p->ticket, CB_FAILURE);
  lb_lua_breaker_release(b);
  return 0;
}

/* The ticket as an exact decimal string, for breaker:done. */
static int lb_lua_permit_ticket(lua_State *L) {
  lb_lua_push_u64_string(L, lb_lua_check_permit(L)->ticket);
  return 1;
}

static int lb_lua_permit_is_reported(lua_State *L) {
  lua_pushboolean(L, lb_lua_check_permit(L)->breaker == NULL);
  return 1;
}

static int lb_lua_permit_tostring(lua_State *L) {
  lua_pushstring(L, lb_lua_check_permit(L)->breaker ? "lazybreaker.permit(pending)"
                                                    : "lazybreaker.permit(reported)");
  return 1;
}

/* ---- registries ------------------------------------------------------------------ */
static void lb_lua_push_reg(lua_State *L, cb_registry *reg, int is_default) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_newuserdata(L, sizeof *ref);
  ref->record = NULL;
  lua_pushvalue(L, LB_LUA_UP_REGISTRY);
  lua_setmetatable(L, -2);
  lb_lua_reg *r = (lb_lua_reg *)calloc(1, sizeof *r);
  if (!r) {
    if (!is_default) cb_registry_close(reg);
    luaL_error(L, "lazybreaker: out of memory");
  }
  r->reg = reg;
  r->refs = 1;
  r->is_default = is_default;
  ref->record = r;
}

/* registry_open([options [, path]]): options is a SWIG cb_registry_options
 * or nil; path, a string, opens the shared registry file there (the
 * options' path for this call: the proxy never holds a string). */
static int lb_lua_registry_open(lua_State *L) {
  cb_registry_options *opts = NULL;
  if (!lua_isnoneornil(L, 1) &&
      !SWIG_IsOK(SWIG_ConvertPtr(L, 1, (void **)&opts, SWIGTYPE_p_cb_registry_options, 0)))
    return luaL_error(L, "lazybreaker: registry_open expects cb_registry_options or nil");
  size_t path_len = 0;
  const char *path = luaL_optlstring(L, 2, NULL, &path_len);
  if (path && strlen(path) != path_len)
    return luaL_error(L, "lazybreaker: path: a NUL byte inside the path");
  cb_registry_options with_path;
  cb_registry_options_init(&with_path);
  if (opts) with_path = *opts;
  with_path.path = path;
  cb_registry *reg = NULL;
  const int st = cb_registry_open(&with_path, &reg);
  if (st < 0) return lb_lua_raise_status(L, st);
  lb_lua_push_reg(L, reg, 0);
  return 1;
}

static int lb_lua_default_registry(lua_State *L) {
  cb_registry *reg = cb_default_registry();
  if (!reg) return lb_lua_raise_status(L, CB_ENOMEM);
  lb_lua_push_reg(L, reg, 1);
  return 1;
}

static int lb_lua_reg_gc(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lua_touserdata(L, 1);
  if (ref && ref->record) {
    lb_lua_reg *r = (lb_lua_reg *)ref->record;
    ref->record = NULL;
    lb_lua_reg_release(r);
  }
  return 0;
}

/* Closes the registry now: every breaker and permit of it raises from now
 * on (a permit's __gc stays silent). Closing twice is a no-op; the default
 * registry cannot be closed (the library's CB_EINVAL). */
static int lb_lua_reg_close(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_REGISTRY, "registry");
  lb_lua_reg *r = (lb_lua_reg *)ref->record;
  if (r->closed) return 0;
  const int st = cb_registry_close(r->is_default ? cb_default_registry() : r->reg);
  if (st < 0) return lb_lua_raise_status(L, st);
  r->closed = 1;
  return 0;
}

static int lb_lua_reg_is_closed(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_REGISTRY, "registry");
  lua_pushboolean(L, ((lb_lua_reg *)ref->record)->closed);
  return 1;
}

/* A breaker's name from argument idx (nil is NULL, anonymous, when
 * optional): a NUL inside raises, since C would cut the name there. */
static const char *lb_lua_check_name(lua_State *L, int idx, int optional) {
  if (optional && lua_isnoneornil(L, idx)) return NULL;
  size_t len = 0;
  const char *name = luaL_checklstring(L, idx, &len);
  if (strlen(name) != len) luaL_error(L, "lazybreaker: name: a NUL byte inside the name");
  return name;
}

/* A create the library refused for a field (a bad setting, another
 * configuration under the name) returns nil, status, field, for
 * lazybreaker.lua to say in the settings' own words; any other error raises. */
static int lb_lua_refused(lua_State *L, int status) {
  const char *field = cb_last_error_field();
  if (field == NULL) return lb_lua_raise_status(L, status);
  lua_pushnil(L);
  lua_pushinteger(L, status);
  lua_pushstring(L, field);
  return 3;
}

/* create(name or nil, cb_config proxy or nil): the breaker, or nil, status,
 * field (lb_lua_refused) */
static int lb_lua_reg_create(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  const char *name = lb_lua_check_name(L, 2, 1);
  cb_config *cfg = NULL;
  if (!lua_isnoneornil(L, 3) &&
      !SWIG_IsOK(SWIG_ConvertPtr(L, 3, (void **)&cfg, SWIGTYPE_p_cb_config, 0)))
    return luaL_error(L, "lazybreaker: create expects a cb_config or nil");
  cb_handle h = 0;
  const int st = cb_create(r->reg, name, cfg, &h);
  if (st < 0) return lb_lua_refused(L, st);
  lb_lua_push_breaker(L, r, h, 1);
  return 1;
}

/* get_or_create(name, cb_config proxy or nil): the breaker of that name if
 * its configuration is cfg's, else a new one; shared, so the object does not
 * own it (neither __gc nor close destroys it: other processes use it). */
static int lb_lua_reg_get_or_create(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  const char *name = lb_lua_check_name(L, 2, 0);
  cb_config *cfg = NULL;
  if (!lua_isnoneornil(L, 3) &&
      !SWIG_IsOK(SWIG_ConvertPtr(L, 3, (void **)&cfg, SWIGTYPE_p_cb_config, 0)))
    return luaL_error(L, "lazybreaker: get_or_create expects a cb_config or nil");
  cb_handle h = 0;
  const int st = cb_get_or_create(r->reg, name, cfg, &h);
  if (st < 0) return lb_lua_refused(L, st);
  lb_lua_push_breaker(L, r, h, 0);
  ((lb_lua_breaker *)((lb_lua_ref *)lua_touserdata(L, -1))->record)->shared = 1;
  return 1;
}

/* lookup(name): a breaker object that does not own the breaker (its __gc
 * leaves it in the registry), or nil when no breaker has that name. */
static int lb_lua_reg_lookup(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  const char *name = lb_lua_check_name(L, 2, 0);
  cb_handle h = 0;
  const int st = cb_lookup(r->reg, name, &h);
  if (st == CB_ENOENT) {
    lua_pushnil(L);
    return 1;
  }
  if (st < 0) return lb_lua_raise_status(L, st);
  lb_lua_push_breaker(L, r, h, 0);
  return 1;
}

/* breakers(): a list of breaker objects (not owning), in the registry's
 * order. */
static int lb_lua_reg_breakers(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  size_t count = 0;
  int st = cb_registry_list(r->reg, NULL, 0, &count);
  cb_handle *handles = NULL;
  while (st == CB_OK) {
    const size_t room = count + 16;
    cb_handle *grown = (cb_handle *)realloc(handles, room * sizeof *grown);
    if (!grown) {
      st = CB_ENOMEM;
      break;
    }
    handles = grown;
    st = cb_registry_list(r->reg, handles, room, &count);
    if (st == CB_OK && count <= room) break;
  }
  if (st < 0) {
    free(handles);
    return lb_lua_raise_status(L, st);
  }
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; i++) {
    lb_lua_push_breaker(L, r, handles[i], 0);
    lua_rawseti(L, -2, (int)(i + 1));
  }
  free(handles);
  return 1;
}

static int lb_lua_reg_advance_ns(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  const int st = cb_clock_advance(r->reg, lb_lua_check_u64(L, 2));
  if (st < 0) return lb_lua_raise_status(L, st);
  return 0;
}

static int lb_lua_reg_advance(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  const int st = cb_clock_advance(r->reg, lb_lua_check_seconds(L, 2));
  if (st < 0) return lb_lua_raise_status(L, st);
  return 0;
}

/* now_ns(): the registry's clock; now_ns(true): as an exact string. */
static int lb_lua_reg_now_ns(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  uint64_t ns = 0;
  const int st = cb_clock_now(r->reg, &ns);
  if (st < 0) return lb_lua_raise_status(L, st);
  if (lua_toboolean(L, 2))
    lb_lua_push_u64_string(L, ns);
  else
    lb_lua_push_u64(L, ns);
  return 1;
}

/* The registry as SWIG's (non-owning) pointer, for the low layer's
 * functions (events, Prometheus text). */
static int lb_lua_reg_swig(lua_State *L) {
  lb_lua_reg *r = lb_lua_check_reg(L, 1);
  SWIG_NewPointerObj(L, r->reg, SWIGTYPE_p_cb_registry, 0);
  return 1;
}

static int lb_lua_reg_tostring(lua_State *L) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, 1, LB_LUA_UP_REGISTRY, "registry");
  lb_lua_reg *r = (lb_lua_reg *)ref->record;
  lua_pushfstring(L, "lazybreaker.registry(%s%s)", r->is_default ? "default" : "private",
                  r->closed ? ", closed" : "");
  return 1;
}

/* Does nothing: the benchmark's floor, one empty call into this module
 * through the same method lookup as allow and success. */
static int lb_lua_noop(lua_State *L) {
  (void)L;
  return 0;
}

/* ---- LuaJIT's ffi path (lazybreaker.lua) ------------------------------------------ */
/* _ref_of(b): a breaker object's payload (its lb_lua_ref) as a light
 * userdata, after the same check every method makes; the ffi path reads
 * the record through it. */
static int lb_lua_ref_of(lua_State *L) {
  lua_pushlightuserdata(L, lb_lua_check(L, 1, LB_LUA_UP_BREAKER, "breaker"));
  return 1;
}

#define LB_LUA_FFI_FN(name)                           \
  lua_pushlightuserdata(L, (void *)(uintptr_t)&name); \
  lua_setfield(L, -2, #name);
#define LB_LUA_FFI_SIZE(name, value)        \
  lua_pushinteger(L, (lua_Integer)(value)); \
  lua_setfield(L, -2, name);
/* _ffi(): what lazybreaker.lua's ffi path needs from this module, since
 * the module is loaded RTLD_LOCAL and ffi.C cannot see the library: the
 * library's functions it calls as pointers, and the layout of the records
 * it reads, to check its own declarations against. */
static int lb_lua_ffi(lua_State *L) {
  lua_createtable(L, 0, 24);
  LB_LUA_FFI_FN(cb_fastpath_describe)
  LB_LUA_FFI_FN(cb_fastpath_claim_cells)
  LB_LUA_FFI_FN(cb_fastpath_release_cells)
  LB_LUA_FFI_FN(cb_fastpath_fold)
  LB_LUA_FFI_FN(cb_allow)
  LB_LUA_FFI_FN(cb_done)
  LB_LUA_FFI_FN(cb_state)
  LB_LUA_FFI_FN(cb_retry_after)
  LB_LUA_FFI_FN(clock_gettime)
  LB_LUA_FFI_SIZE("CLOCK_MONOTONIC", CLOCK_MONOTONIC)
  LB_LUA_FFI_SIZE("sizeof_ref", sizeof(lb_lua_ref))
  LB_LUA_FFI_SIZE("sizeof_breaker", sizeof(lb_lua_breaker))
  LB_LUA_FFI_SIZE("sizeof_reg", sizeof(lb_lua_reg))
  LB_LUA_FFI_SIZE("breaker_handle", offsetof(lb_lua_breaker, handle))
  LB_LUA_FFI_SIZE("breaker_reg", offsetof(lb_lua_breaker, reg))
  LB_LUA_FFI_SIZE("breaker_closed", offsetof(lb_lua_breaker, closed))
  LB_LUA_FFI_SIZE("reg_closed", offsetof(lb_lua_reg, closed))
  LB_LUA_FFI_SIZE("sizeof_fastpath", sizeof(cb_fastpath))
  LB_LUA_FFI_SIZE("sizeof_cells", sizeof(cb_fastpath_cells))
  LB_LUA_FFI_SIZE("sizeof_timespec", sizeof(struct timespec))
  return 1;
}
#undef LB_LUA_FFI_FN
#undef LB_LUA_FFI_SIZE

/* ---- metatables --------------------------------------------------------------------- */
static const luaL_Reg lb_lua_registry_methods[] = {{"create", lb_lua_reg_create},
                                                   {"lookup", lb_lua_reg_lookup},
                                                   {"get_or_create", lb_lua_reg_get_or_create},
                                                   {"breakers", lb_lua_reg_breakers},
                                                   {"advance", lb_lua_reg_advance},
                                                   {"advance_ns", lb_lua_reg_advance_ns},
                                                   {"now_ns", lb_lua_reg_now_ns},
                                                   {"close", lb_lua_reg_close},
                                                   {"is_closed", lb_lua_reg_is_closed},
                                                   {"_swig", lb_lua_reg_swig},
                                                   {NULL, NULL}};
static const luaL_Reg lb_lua_registry_meta[] = {
    {"__gc", lb_lua_reg_gc}, {"__tostring", lb_lua_reg_tostring}, {NULL, NULL}};

static const luaL_Reg lb_lua_breaker_methods[] = {{"allow", lb_lua_breaker_allow},
                                                  {"state", lb_lua_breaker_state},
                                                  {"retry_after", lb_lua_breaker_retry_after},
                                                  {"retry_after_ns", lb_lua_breaker_retry_after_ns},
                                                  {"stats", lb_lua_breaker_stats},
                                                  {"force_open", lb_lua_breaker_force_open},
                                                  {"disable", lb_lua_breaker_disable},
                                                  {"reset", lb_lua_breaker_reset},
                                                  {"trip", lb_lua_breaker_trip},
                                                  {"trip_ns", lb_lua_breaker_trip_ns},
                                                  {"name", lb_lua_breaker_name},
                                                  {"_config", lb_lua_breaker_config},
                                                  {"close", lb_lua_breaker_close},
                                                  {"_enter", lb_lua_breaker_enter},
                                                  {"acquire", lb_lua_breaker_acquire},
                                                  {"success", lb_lua_breaker_success},
                                                  {"failure", lb_lua_breaker_failure},
                                                  {"ignore", lb_lua_breaker_ignore},
                                                  {"_report", lb_lua_breaker_report_outcome},
                                                  {"is_closed", lb_lua_breaker_is_closed},
                                                  {"_noop", lb_lua_noop},
                                                  {NULL, NULL}};
static const luaL_Reg lb_lua_breaker_meta[] = {{"__gc", lb_lua_breaker_gc},
                                               {"__tostring", lb_lua_breaker_tostring},
                                               {"__eq", lb_lua_breaker_eq},
                                               {NULL, NULL}};

static const luaL_Reg lb_lua_permit_methods[] = {{"success", lb_lua_permit_success},
                                                 {"failure", lb_lua_permit_failure},
                                                 {"ignore", lb_lua_permit_ignore},
                                                 {"is_reported", lb_lua_permit_is_reported},
                                                 {"ticket", lb_lua_permit_ticket},
                                                 {"_done", lb_lua_permit_done},
                                                 {"_noop", lb_lua_noop},
                                                 {NULL, NULL}};
static const luaL_Reg lb_lua_permit_meta[] = {{"__gc", lb_lua_permit_abandon},
                                              /* Lua 5.4: local p <close> = b:allow() */
                                              {"__close", lb_lua_permit_abandon},
                                              {"__tostring", lb_lua_permit_tostring},
                                              {NULL, NULL}};

/* Pushes the upvalues every function of these objects takes: the three
 * metatables (registry, breaker, permit), the permit pool and the state's
 * lb_lua_quiet. */
static void lb_lua_push_metatables(lua_State *L) {
  luaL_getmetatable(L, LB_LUA_REGISTRY_MT);
  luaL_getmetatable(L, LB_LUA_BREAKER_MT);
  luaL_getmetatable(L, LB_LUA_PERMIT_MT);
  lua_getfield(L, LUA_REGISTRYINDEX, "lazybreaker.permit_pool");
  lua_getfield(L, LUA_REGISTRYINDEX, LB_LUA_QUIET_MT);
}

static void lb_lua_fill_metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                                  const luaL_Reg *meta) {
  luaL_getmetatable(L, name);
  lua_newtable(L); /* __index: the methods */
  lb_lua_push_metatables(L);
  luaL_setfuncs(L, methods, LB_LUA_UPVALUES);
  lua_setfield(L, -2, "__index");
  lb_lua_push_metatables(L);
  luaL_setfuncs(L, meta, LB_LUA_UPVALUES);
  lua_pushliteral(L, "lazybreaker");
  lua_setfield(L, -2, "__metatable"); /* getmetatable() cannot swap them */
  lua_pop(L, 1);
}

/* methods("registry" | "breaker" | "permit"): the methods table, so that
 * lazybreaker.lua adds the methods written in Lua (breaker:call, ...). */
static int lb_lua_methods(lua_State *L) {
  static const char *const kinds[] = {"registry", "breaker", "permit", NULL};
  static const char *const names[] = {LB_LUA_REGISTRY_MT, LB_LUA_BREAKER_MT, LB_LUA_PERMIT_MT};
  const int kind = luaL_checkoption(L, 1, NULL, kinds);
  luaL_getmetatable(L, names[kind]);
  lua_getfield(L, -1, "__index");
  return 1;
}

/* The module's `config_fields`: every cb_config field of lists.h's
 * CB_CONFIG_FIELDS by its C name, as { type, since, unit, bounds, lo, hi,
 * default }, so that lazybreaker.lua says a refusal in its own units
 * without copying a bound. */
#define LB_LUA_FIELD_INFO(field, type, since, unit, bounds, lo, hi, def) \
  lua_createtable(L, 0, 7);                                              \
  lua_pushliteral(L, #type);                                             \
  lua_setfield(L, -2, "type");                                           \
  lua_pushnumber(L, since);                                              \
  lua_setfield(L, -2, "since");                                          \
  lua_pushliteral(L, #unit);                                             \
  lua_setfield(L, -2, "unit");                                           \
  lua_pushliteral(L, #bounds);                                           \
  lua_setfield(L, -2, "bounds");                                         \
  lua_pushnumber(L, (lua_Number)(lo));                                   \
  lua_setfield(L, -2, "lo");                                             \
  lua_pushnumber(L, (lua_Number)(hi));                                   \
  lua_setfield(L, -2, "hi");                                             \
  lua_pushnumber(L, (lua_Number)(def));                                  \
  lua_setfield(L, -2, "default");                                        \
  lua_setfield(L, -2, #field);
static void lb_lua_push_config_fields(lua_State *L) {
  lua_createtable(L, 0, 16);
  CB_CONFIG_FIELDS(LB_LUA_FIELD_INFO)
}
#undef LB_LUA_FIELD_INFO

/* Called from SWIG's module init, the module table on top of the stack:
 * makes the metatables once per Lua state, then gives the module's three
 * native functions the metatables as upvalues (SWIG registered them
 * without). */
static void lb_lua_objects_init(lua_State *L) {
  luaL_newmetatable(L, LB_LUA_REGISTRY_MT);
  luaL_newmetatable(L, LB_LUA_BREAKER_MT);
  luaL_newmetatable(L, LB_LUA_PERMIT_MT);
  lua_pop(L, 3);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "lazybreaker.permit_pool");
  lb_lua_quiet *q = (lb_lua_quiet *)lb_lua_newuserdata(L, sizeof *q);
  memset(q, 0, sizeof *q);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, lb_lua_quiet_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, LB_LUA_QUIET_MT);
  lb_lua_fill_metatable(L, LB_LUA_REGISTRY_MT, lb_lua_registry_methods, lb_lua_registry_meta);
  lb_lua_fill_metatable(L, LB_LUA_BREAKER_MT, lb_lua_breaker_methods, lb_lua_breaker_meta);
  lb_lua_fill_metatable(L, LB_LUA_PERMIT_MT, lb_lua_permit_methods, lb_lua_permit_meta);
  static const luaL_Reg with_upvalues[] = {{"registry_open", lb_lua_registry_open},
                                           {"default_registry", lb_lua_default_registry},
                                           {"methods", lb_lua_methods},
                                           {"_ref_of", lb_lua_ref_of},
                                           {"_ffi", lb_lua_ffi},
                                           {NULL, NULL}};
  lb_lua_push_metatables(L);
  luaL_setfuncs(L, with_upvalues, LB_LUA_UPVALUES);
  lb_lua_push_config_fields(L);
  lua_setfield(L, -2, "config_fields");
}
