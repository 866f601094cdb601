/* The two-step form: allow admits or rejects a call, done reports it. */
#include "addon.h"

/* allow(handle) -> ticket (BigInt), or null when the breaker rejects. */
static napi_value lb_allow(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  cb_handle h = 0;
  if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  cb_ticket ticket = 0;
  int status = cb_allow(h, &ticket);
  if (status == CB_OK) return lb_u64(env, ticket);
  if (status != CB_REJECTED) return lb_throw_status(env, status, "allow");
  napi_value null_value = NULL;
  napi_get_null(env, &null_value);
  return null_value;
}

/* done(handle, ticket, outcome): outcome is a cb_outcome_t. */
static napi_value lb_done(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  cb_handle h = 0;
  cb_ticket ticket = 0;
  int32_t outcome = 0;
  if (!lb_args(env, info, 3, argv) || !lb_handle_arg(env, argv[0], &h) ||
      !lb_arg_u64(env, argv[1], "ticket", &ticket))
    return NULL;
  LB_NAPI(env, napi_get_value_int32(env, argv[2], &outcome));
  int status = cb_done(h, ticket, outcome);
  return status == CB_OK ? NULL : lb_throw_status(env, status, "done");
}

napi_value lb_permit_exports(napi_env env, napi_value exports) {
  static const lb_function functions[] = {{"allow", lb_allow}, {"done", lb_done}, {NULL, NULL}};
  return lb_define(env, exports, functions);
}
