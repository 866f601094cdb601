/* breaker.c: the breaker object of the Lua binding (metatable
 * lazybreaker.breaker): its record's count and release, and its methods but
 * the tickets' (ticket.c): allow and breaker:call's _enter (which hand out
 * permits), state, retry_after, stats, its configuration read back, the
 * manual transitions, name, close, __tostring and __eq. Part of objects.c's
 * unit (objects.h).
 */
#include "objects.h"

/* ---- records ---------------------------------------------------------------- */
static void lb_lua_breaker_release(lb_lua_breaker *b) {
  if (--b->refs > 0) return;
  if (b->owned && !b->closed && !b->reg->closed) cb_destroy(b->handle);
  lb_lua_reg_release(b->reg);
  free(b);
}

/* ---- checks ------------------------------------------------------------------- */
static lb_lua_breaker *lb_lua_check_breaker(lua_State *L, int idx) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, idx, LB_LUA_UP_BREAKER, "breaker");
  lb_lua_breaker *b = (lb_lua_breaker *)ref->record;
  if (!b || b->closed) luaL_error(L, "lazybreaker: the breaker is closed");
  if (b->reg->closed) luaL_error(L, "lazybreaker: the breaker's registry is closed");
  return b;
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
