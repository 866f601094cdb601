/* lua.i: the Lua overlay of lazybreaker.i. SWIG generates the low layer,
 * the C module `lazybreaker_core`, from it; the one module source builds for
 * Lua 5.4 and for LuaJIT 2.1 (the Lua 5.1 C API), and the Lua module
 * `lazybreaker` (bindings/lua/lazybreaker.lua) is the API a Lua user sees.
 * What is Lua's alone lives here:
 *
 *   - uint64_t (nanoseconds, counters, sequence numbers) is a Lua integer on
 *     Lua 5.4, exact to 2^63 - 1 (a larger value is a float), and a number
 *     on LuaJIT, exact to 2^53. Going in, a value may also be a string of
 *     decimal digits, exact to 2^64 - 1 on both: LuaJIT cannot write a
 *     larger exact number, and 2^53 ns is only 104 days. A negative, a
 *     fraction, a NaN or anything else raises; nothing is truncated.
 *   - cb_handle stays in C. Handles use all 64 bits, so on LuaJIT a handle
 *     does not fit a number, and a rounded one could name another breaker.
 *     The breaker, permit and registry objects (bindings/lua/objects.c,
 *     compiled into this module: userdata with luaL_newmetatable, which
 *     SWIG cannot express: __gc, __close, refcounts between them) hold their
 *     handles and tickets themselves. The raw handle functions are still
 *     wrapped, exact on Lua 5.4; on LuaJIT a handle that does not fit a
 *     number raises instead of coming back rounded.
 *   - %lb_raise raises a Lua error whose message is cb_strerror's name of
 *     the status and this thread's cb_last_error_message(), so an invalid
 *     setting raises with the library's own words (which name the field).
 *   - LB_OVERLAY_ARGOUT: results go onto Lua's stack (SWIG_arg++), not into
 *     $result.
 */
%module lazybreaker_core

/* clock_gettime (the LuaJIT ffi path's clock, objects.c) is POSIX, not C11:
 * a builder compiling with -std=c11 (the rockspec) needs this before the
 * first system header, which %begin puts ahead of SWIG's own. */
%begin %{
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
%}

%{
#include <lua.h>
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "lazybreaker/fastpath.h"

/* "CB_EINVAL: a bad argument or config value: cb_config: failure_threshold
 * must be 1..65535, got 0" */
static void lb_lua_push_status_message(lua_State *L, int status) {
  const char *detail = cb_last_error_message();
  luaL_where(L, 1);
  if (detail && *detail)
    lua_pushfstring(L, "lazybreaker: %s: %s", cb_strerror(status), detail);
  else
    lua_pushfstring(L, "lazybreaker: %s", cb_strerror(status));
  lua_concat(L, 2);
}

/* Pushes a short description of the value at idx for an error message
 * (luaL_tolstring is not in LuaJIT's 5.1 API). */
static const char *lb_lua_push_describe(lua_State *L, int idx) {
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
#if LUA_VERSION_NUM >= 503
    if (lua_isinteger(L, idx)) return lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, idx));
#endif
    return lua_pushfstring(L, "%f", (double)lua_tonumber(L, idx));
  case LUA_TSTRING:
    return lua_pushfstring(L, "\"%s\"", lua_tostring(L, idx));
  default:
    return lua_pushfstring(L, "%s", luaL_typename(L, idx));
  }
}

/* 2^53: every integer up to it is a double, and no integer past it is
 * sure to be. */
#define LB_LUA_EXACT_DOUBLE 9007199254740992.0

/* A uint64_t from Lua: an integer (Lua 5.4), an integral number, or a
 * string of decimal digits. Returns 0 and leaves an error message on the
 * stack when the value is none of these. */
static int lb_lua_to_u64(lua_State *L, int idx, uint64_t *out) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    size_t len = 0;
    const char *s = lua_tolstring(L, idx, &len);
    uint64_t v = 0;
    if (len == 0 || len > 20) goto bad;
    for (size_t i = 0; i < len; i++) {
      if (s[i] < '0' || s[i] > '9') goto bad;
      const uint64_t digit = (uint64_t)(s[i] - '0');
      if (v > (UINT64_MAX - digit) / 10) goto bad;
      v = v * 10 + digit;
    }
    *out = v;
    return 1;
  }
  if (lua_type(L, idx) == LUA_TNUMBER) {
#if LUA_VERSION_NUM >= 503
    if (lua_isinteger(L, idx)) {
      const lua_Integer i = lua_tointeger(L, idx);
      if (i < 0) goto bad;
      *out = (uint64_t)i;
      return 1;
    }
#endif
    const lua_Number n = lua_tonumber(L, idx);
    /* 18446744073709551616.0 is 2^64, the first double past the range */
    if (!(n >= 0) || n >= 18446744073709551616.0 || floor(n) != n) goto bad;
    *out = (uint64_t)n;
    return 1;
  }
bad:
  lua_pushfstring(L, "lazybreaker: expected a non-negative integer (a number or a string of digits) below 2^64, got %s",
                  lb_lua_push_describe(L, idx));
  lua_remove(L, -2); /* the description */
  return 0;
}

/* A uint32_t from Lua: an integral number in range. */
static int lb_lua_to_u32(lua_State *L, int idx, uint32_t *out) {
  uint64_t v = 0;
  if (!lb_lua_to_u64(L, idx, &v)) return 0;
  if (v > UINT32_MAX) {
    lua_pop(L, 1);
    lua_pushfstring(L, "lazybreaker: expected an integer 0..4294967295, got %s", lb_lua_push_describe(L, idx));
    lua_remove(L, -2);
    return 0;
  }
  *out = (uint32_t)v;
  return 1;
}

/* A uint64_t for Lua: exact as an integer on Lua 5.4 up to 2^63 - 1; as a
 * number (exact to 2^53) elsewhere. */
static void lb_lua_push_u64(lua_State *L, uint64_t v) {
#if LUA_VERSION_NUM >= 503
  if (v <= (uint64_t)LUA_MAXINTEGER) {
    lua_pushinteger(L, (lua_Integer)v);
    return;
  }
#endif
  lua_pushnumber(L, (lua_Number)v);
}

/* A handle for Lua: exact, or an error (a rounded handle could be another
 * breaker's). Returns 0 with the message pushed when it does not fit. */
static int lb_lua_push_handle(lua_State *L, cb_handle h) {
#if LUA_VERSION_NUM >= 503
  lua_pushinteger(L, (lua_Integer)h); /* bit for bit, as Java's long */
  return 1;
#else
  if ((double)h > LB_LUA_EXACT_DOUBLE) {
    lua_pushstring(L, "lazybreaker: a handle does not fit a LuaJIT number; use the breaker objects of "
                      "require 'lazybreaker'");
    return 0;
  }
  lua_pushnumber(L, (lua_Number)h);
  return 1;
#endif
}
%}

/* ---- the raise hook ------------------------------------------------------- */
%define %lb_raise(status)
  lb_lua_push_status_message(L, status);
  SWIG_fail;
%enddef
#define LB_RAISE_DEFINED
%define %lb_return_int(value)
  lua_pushinteger(L, (lua_Integer)value);
  SWIG_arg++;
%enddef
#define LB_RETURN_INT_DEFINED

/* ---- numbers ---------------------------------------------------------------- */
%typemap(in, checkfn="lua_isnumber") uint64_t, unsigned long long {
  uint64_t v = 0;
  if (!lb_lua_to_u64(L, $input, &v)) SWIG_fail;
  $1 = ($1_ltype)v;
}
%typemap(typecheck) uint64_t = int;
%typemap(out) uint64_t, unsigned long long %{ lb_lua_push_u64(L, (uint64_t)$1); SWIG_arg++; %}
%typemap(in) cb_handle, cb_ticket {
  uint64_t v = 0;
  if (!lb_lua_to_u64(L, $input, &v)) SWIG_fail;
  $1 = v;
}
%typemap(out) cb_handle %{
  if (!lb_lua_push_handle(L, $1)) SWIG_fail;
  SWIG_arg++;
%}
%typemap(out) cb_ticket %{ lb_lua_push_u64(L, $1); SWIG_arg++; %}
%typemap(in) uint32_t, unsigned int {
  uint32_t v = 0;
  if (!lb_lua_to_u32(L, $input, &v)) SWIG_fail;
  $1 = ($1_ltype)v;
}
%typemap(out) uint32_t, unsigned int %{ lua_pushinteger(L, (lua_Integer)$1); SWIG_arg++; %}
/* An int field (cb_config.policy, cb_registry_options.clock): integral. */
%typemap(in) int {
  if (!lua_isnumber(L, $input) || floor(lua_tonumber(L, $input)) != lua_tonumber(L, $input) ||
      lua_tonumber(L, $input) < -2147483648.0 || lua_tonumber(L, $input) > 2147483647.0) {
    lua_pushfstring(L, "lazybreaker: expected an integer, got %s", lb_lua_push_describe(L, $input));
    lua_remove(L, -2);
    SWIG_fail;
  }
  $1 = (int)lua_tonumber(L, $input);
}

/* ---- names and paths in ------------------------------------------------------ */
/* As SWIG's own const char * typemap (a string or nil), but a NUL inside
 * raises: C would silently cut "a\0b" to "a". */
%typemap(in, checkfn="SWIG_lua_isnilstring", fragment="SWIG_lua_isnilstring") const char *name,
    const char *path {
  size_t len = 0;
  $1 = ($1_ltype)lua_tolstring(L, $input, &len);
  if ($1 && strlen($1) != len) {
    luaL_where(L, 1);
    lua_pushstring(L, "lazybreaker: $1_name: a NUL byte inside the $1_name");
    lua_concat(L, 2);
    SWIG_fail;
  }
}

/* ---- results on the stack (LB_OVERLAY_ARGOUT) --------------------------------- */
#define LB_OVERLAY_ARGOUT
/* "$*1_type" is the pointee's name: a cb_handle (cb_create, cb_lookup) must
 * come back exact or not at all. */
%typemap(argout) uint64_t *LB_OUT_U64 %{
  if (strcmp("$*1_type", "cb_handle") == 0) {
    if (!lb_lua_push_handle(L, (cb_handle)temp$argnum)) SWIG_fail;
  } else {
    lb_lua_push_u64(L, temp$argnum);
  }
  SWIG_arg++;
%}
%typemap(argout) cb_ticket *LB_OUT_TICKET %{ lb_lua_push_u64(L, result == CB_OK ? temp$argnum : 0); SWIG_arg++; %}
/* ---- the objects of bindings/lua/objects.c -------------------------------------- */
/* Compiled in this module's one translation unit: they take cb_config and
 * cb_registry_options from SWIG's proxies (SWIG_ConvertPtr). */
%wrapper %{
#include "objects.c"
%}
/* registry_open, default_registry and methods: registered by
 * lb_lua_objects_init with the metatables as upvalues. */
%init %{
  lb_lua_objects_init(L);
%}

%include "lazybreaker.i"

