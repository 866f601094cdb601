/*
 * The Node-API addon under bindings/node/lib: thin calls into the C ABI.
 * It decides nothing: every transition is the library's, and every table
 * it hands to JavaScript is expanded from include/lazybreaker/lists.h.
 * Handles and tickets cross as BigInt (64 bits); durations as BigInt
 * nanoseconds.
 */
#ifndef LB_NODE_ADDON_H
#define LB_NODE_ADDON_H

#define NAPI_VERSION 8
#include <node_api.h>
#include <stdint.h>

#include "lazybreaker/lazybreaker.h"

/* Evaluates a napi_status call; on failure throws (unless an exception is
 * already pending) and returns NULL from the calling function. */
#define LB_NAPI(env, call)                 \
  do {                                     \
    if ((call) != napi_ok) {               \
      lb_throw_napi_failure((env), #call); \
      return NULL;                         \
    }                                      \
  } while (0)

/* errors.c */
void lb_throw_napi_failure(napi_env env, const char *what);
napi_value lb_throw_status(napi_env env, int status, const char *call);
napi_value lb_throw_type(napi_env env, const char *message);
napi_value lb_throw_no_memory(napi_env env, const char *call);
int lb_arg_u64(napi_env env, napi_value value, const char *what, uint64_t *out);
napi_value lb_u64(napi_env env, uint64_t value);
napi_value lb_int(napi_env env, int value);
napi_value lb_string(napi_env env, const char *text);
int lb_set(napi_env env, napi_value object, const char *key, napi_value value);

/* Reads up to `max` arguments into argv; the rest are undefined. */
int lb_args(napi_env env, napi_callback_info info, size_t max, napi_value *argv);

/* registry.c: the cb_registry behind a Registry's external value, or NULL
 * (thrown) when it is closed or not a registry. */
cb_registry *lb_registry_arg(napi_env env, napi_value value);
napi_value lb_registry_exports(napi_env env, napi_value exports);

/* events.c: appends every event queued now in `reg` to the array `sink`,
 * each as eventsPoll gives it; 0 with an exception pending on failure. */
int lb_events_append(napi_env env, cb_registry *reg, napi_value sink);

/* breaker.c, permit.c, events.c, tables.c */
napi_value lb_breaker_exports(napi_env env, napi_value exports);
napi_value lb_permit_exports(napi_env env, napi_value exports);
napi_value lb_events_exports(napi_env env, napi_value exports);
napi_value lb_tables_exports(napi_env env, napi_value exports);

/* A handle argument (BigInt); 0 with an exception pending when it is not. */
int lb_handle_arg(napi_env env, napi_value value, cb_handle *out);

typedef struct lb_function {
  const char *name;
  napi_callback callback;
} lb_function;

/* Defines each function of `functions` (ending at a NULL name) on exports. */
napi_value lb_define(napi_env env, napi_value exports, const lb_function *functions);

#endif /* LB_NODE_ADDON_H */
