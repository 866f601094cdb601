/* permit.c: the permit object of the Lua binding (metatable
 * lazybreaker.permit), a ticket and its breaker as a userdata, which
 * b:allow() and breaker:call's _enter hand out (breaker.c): its verdicts,
 * breaker:call's _done (which pools it again), and __gc and __close, which
 * report a permit never given a verdict as a failure. Part of objects.c's
 * unit (objects.h).
 */
#include "objects.h"

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
