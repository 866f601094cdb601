/* objects.c: the registry, breaker and permit objects of the Lua binding,
 * hand-written with luaL_newmetatable because SWIG cannot express them: a
 * permit that reports a failure from __gc and __close, objects that keep
 * each other alive by reference counts, 64-bit handles and tickets that
 * never cross into a Lua number (a LuaJIT number holds 53 bits). This file
 * holds their metatables and the module's init; each object is a file of
 * its own (registry.c, breaker.c, ticket.c, permit.c, ffi.c, with values.c
 * and objects.h for what they share), included here.
 *
 * This file is compiled inside the SWIG wrapper of bindings/swig/lua.i, once
 * for Lua 5.4 and once for LuaJIT; it uses only the C API common to both.
 * One translation unit, the files included rather than compiled apart: the
 * objects use the wrapper's static functions (SWIG's proxies of cb_config
 * and cb_registry_options, lua.i's number conversions and error messages),
 * and the request path's methods inline the checks they share. The records
 * and their ownership are in objects.h.
 */
#include "objects.h"

#include "values.c"

#include "registry.c"

#include "breaker.c"

#include "ticket.c"

#include "permit.c"

#include "ffi.c"

/* Does nothing: the benchmark's floor, one empty call into this module
 * through the same method lookup as allow and success. */
static int lb_lua_noop(lua_State *L) {
  (void)L;
  return 0;
}

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
 * metatables (registry, breaker, permit) and the permit pool. */
static void lb_lua_push_metatables(lua_State *L) {
  luaL_getmetatable(L, LB_LUA_REGISTRY_MT);
  luaL_getmetatable(L, LB_LUA_BREAKER_MT);
  luaL_getmetatable(L, LB_LUA_PERMIT_MT);
  lua_getfield(L, LUA_REGISTRYINDEX, "lazybreaker.permit_pool");
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
 * default, order }, so that lazybreaker.lua says a refusal in its own units
 * without copying a bound, and walks the fields in the list's order (1..n),
 * which the policy inference follows. */
#define LB_LUA_FIELD_INFO(field, type, since, unit, bounds, lo, hi, def) \
  lua_createtable(L, 0, 8);                                              \
  lua_pushinteger(L, ++order);                                           \
  lua_setfield(L, -2, "order");                                          \
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
  lua_Integer order = 0;
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
