/* objects.h: what the files of the Lua binding's objects share: the
 * records behind the registry, breaker and permit objects, the metatables'
 * names, the upvalues every method finds them in, and the functions one
 * file calls in another. Internal: objects.c and each file it includes
 * include it, all of them one translation unit inside the SWIG wrapper of
 * bindings/swig/lua.i (see objects.c), so it is read once.
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
#ifndef LB_LUA_OBJECTS_H
#define LB_LUA_OBJECTS_H

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

typedef struct lb_lua_breaker {
  cb_handle handle;
  lb_lua_reg *reg;
  int refs;
  int owned;
  int shared; /* from get_or_create: close lets go, never destroys */
  int closed;
} lb_lua_breaker;

typedef struct lb_lua_permit {
  lb_lua_breaker *breaker; /* NULL once reported */
  cb_ticket ticket;
} lb_lua_permit;

/* The userdata of registry and breaker objects: a pointer to the record. */
typedef struct lb_lua_ref {
  void *record;
} lb_lua_ref;

/* ---- the metatables are upvalues 1..3 of every function ------------------ */
#define LB_LUA_UP_REGISTRY lua_upvalueindex(1)
#define LB_LUA_UP_BREAKER lua_upvalueindex(2)
#define LB_LUA_UP_PERMIT lua_upvalueindex(3)
/* Reported permits that breaker:call may hand out again (see _enter). */
#define LB_LUA_UP_POOL lua_upvalueindex(4)
#define LB_LUA_UPVALUES 4
#define LB_LUA_POOL_MAX 64

/* ---- what one file calls in another ------------------------------------------ */
/* Static, as everything of the unit: declared here so that the files need
 * not be included in the order they call each other. */
/* values.c */
static int lb_lua_raise_status(lua_State *L, int status);
static void *lb_lua_check(lua_State *L, int idx, int mt_upvalue, const char *what);
static uint64_t lb_lua_check_seconds(lua_State *L, int idx);
static uint64_t lb_lua_check_u64(lua_State *L, int idx);
static void lb_lua_push_seconds(lua_State *L, uint64_t ns);
static void lb_lua_push_u64_string(lua_State *L, uint64_t v);
static const char *lb_lua_state_name(int state);
/* registry.c */
static void lb_lua_reg_release(lb_lua_reg *r);
/* breaker.c */
static void lb_lua_breaker_release(lb_lua_breaker *b);
static lb_lua_breaker *lb_lua_check_breaker(lua_State *L, int idx);
static void lb_lua_push_breaker(lua_State *L, lb_lua_reg *r, cb_handle h, int owned);
static int lb_lua_push_rejection(lua_State *L, const lb_lua_breaker *b);

#endif
