/* ffi.c: what the Lua binding gives LuaJIT's ffi path (lazybreaker.lua):
 * a breaker object's record as a light userdata (_ref_of), and the
 * library's functions and the records' layout (_ffi), which the ffi path
 * checks its own declarations against. Part of objects.c's unit
 * (objects.h).
 */
#include "objects.h"

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
