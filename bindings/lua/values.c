/* values.c: the values every object of the Lua binding takes and gives:
 * raising a status as an error, checking that an argument is one of this
 * module's objects (by its metatable, an upvalue), and the numbers that
 * cross between Lua and C (seconds and nanoseconds, uint64_t exact as a
 * decimal string on every interpreter) and a state's name. Part of
 * objects.c's unit (objects.h).
 */
#include "objects.h"

/* ---- errors ---------------------------------------------------------------- */
static int lb_lua_raise_status(lua_State *L, int status) {
  lb_lua_push_status_message(L, status);
  return lua_error(L);
}

/* ---- checks ------------------------------------------------------------------- */
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
