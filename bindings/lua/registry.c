/* registry.c: the registry object of the Lua binding (metatable
 * lazybreaker.registry): its record's count and release, registry_open and
 * default_registry, and its methods: the breakers it makes (create,
 * get_or_create, lookup, breakers), its manual clock, close, and its SWIG
 * pointer for the low layer. Part of objects.c's unit (objects.h); it takes
 * cb_config and cb_registry_options from SWIG's proxies (SWIG_ConvertPtr).
 */
#include "objects.h"

/* ---- records ---------------------------------------------------------------- */
static void lb_lua_reg_release(lb_lua_reg *r) {
  if (--r->refs > 0) return;
  if (!r->closed && !r->is_default) cb_registry_close(r->reg);
  free(r);
}

/* ---- checks ------------------------------------------------------------------- */
static lb_lua_reg *lb_lua_check_reg(lua_State *L, int idx) {
  lb_lua_ref *ref = (lb_lua_ref *)lb_lua_check(L, idx, LB_LUA_UP_REGISTRY, "registry");
  lb_lua_reg *r = (lb_lua_reg *)ref->record;
  if (r->closed) luaL_error(L, "lazybreaker: the registry is closed");
  return r;
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
