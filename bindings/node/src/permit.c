/* The two-step form: allow admits or rejects a call, done reports it.
 * Each then appends the transitions queued in the breaker's registry to
 * the array `sink` (lib/registry.js delivers them): in the same call, as a
 * second call into the addon after every call would cost as much again. */
#include "addon.h"

/* The events of `registry` appended to `sink`, when a registry is given
 * (the conformance test reports a ticket again without one). */
static int lb_take_events(napi_env env, napi_value registry, napi_value sink) {
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env, registry, &type) != napi_ok) return 0;
  if (type == napi_undefined) return 1;
  cb_registry *reg = lb_registry_arg(env, registry);
  return reg != NULL && lb_events_append(env, reg, sink);
}

/* allow(handle[, registry, sink]) -> ticket (BigInt), or null when the
 * breaker rejects. */
static napi_value lb_allow(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  cb_handle h = 0;
  if (!lb_args(env, info, 3, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  cb_ticket ticket = 0;
  int status = cb_allow(h, &ticket);
  if (status != CB_OK && status != CB_REJECTED) return lb_throw_status(env, status, "allow");
  if (!lb_take_events(env, argv[1], argv[2])) return NULL;
  if (status == CB_OK) return lb_u64(env, ticket);
  napi_value null_value = NULL;
  napi_get_null(env, &null_value);
  return null_value;
}

/* done(handle, ticket, outcome[, registry, sink]): outcome is a cb_outcome_t. */
static napi_value lb_done(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  cb_handle h = 0;
  cb_ticket ticket = 0;
  int32_t outcome = 0;
  if (!lb_args(env, info, 5, argv) || !lb_handle_arg(env, argv[0], &h) ||
      !lb_arg_u64(env, argv[1], "ticket", &ticket))
    return NULL;
  LB_NAPI(env, napi_get_value_int32(env, argv[2], &outcome));
  int status = cb_done(h, ticket, outcome);
  if (status != CB_OK) return lb_throw_status(env, status, "done");
  lb_take_events(env, argv[3], argv[4]);
  return NULL;
}

napi_value lb_permit_exports(napi_env env, napi_value exports) {
  static const lb_function functions[] = {{"allow", lb_allow}, {"done", lb_done}, {NULL, NULL}};
  return lb_define(env, exports, functions);
}
