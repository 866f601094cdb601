/* Errors thrown to JavaScript, and the small conversions every file uses.
 * A library status becomes an Error with `status` (the number), `statusName`
 * (CB_EINVAL, ...) and, when the library names one, `field` (the cb_config
 * field it refused); lib/errors.js turns those into the user's words. */
#include <stdio.h>

#include "addon.h"

void lb_throw_napi_failure(napi_env env, const char *what) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) return;
  const napi_extended_error_info *info = NULL;
  napi_get_last_error_info(env, &info);
  char message[512];
  snprintf(message, sizeof message, "lazybreaker: Node-API call failed: %s (%s)", what,
           info && info->error_message ? info->error_message : "no detail");
  napi_throw_error(env, NULL, message);
}

int lb_set(napi_env env, napi_value object, const char *key, napi_value value) {
  return value != NULL && napi_set_named_property(env, object, key, value) == napi_ok;
}

napi_value lb_string(napi_env env, const char *text) {
  napi_value out = NULL;
  napi_create_string_utf8(env, text ? text : "", NAPI_AUTO_LENGTH, &out);
  return out;
}

napi_value lb_u64(napi_env env, uint64_t value) {
  napi_value out = NULL;
  napi_create_bigint_uint64(env, value, &out);
  return out;
}

napi_value lb_int(napi_env env, int value) {
  napi_value out = NULL;
  napi_create_int32(env, value, &out);
  return out;
}

napi_value lb_throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

napi_value lb_throw_status(napi_env env, int status, const char *call) {
  const char *detail = cb_last_error_message();
  const char *field = cb_last_error_field();
  char message[768];
  snprintf(message, sizeof message, "lazybreaker: %s: %s", call,
           detail && *detail ? detail : cb_strerror(status));
  napi_value error = NULL;
  if (napi_create_error(env, NULL, lb_string(env, message), &error) != napi_ok) return NULL;
  lb_set(env, error, "status", lb_int(env, status));
  lb_set(env, error, "statusName", lb_string(env, cb_status_name(status)));
  if (field && *field) lb_set(env, error, "field", lb_string(env, field));
  if (detail && *detail) lb_set(env, error, "detail", lb_string(env, detail));
  napi_throw(env, error);
  return NULL;
}

napi_value lb_throw_no_memory(napi_env env, const char *call) {
  char message[256];
  snprintf(message, sizeof message, "lazybreaker: %s: out of memory", call);
  napi_throw_error(env, cb_status_name(CB_ENOMEM), message);
  return NULL;
}

int lb_arg_u64(napi_env env, napi_value value, const char *what, uint64_t *out) {
  bool lossless = false;
  if (napi_get_value_bigint_uint64(env, value, out, &lossless) != napi_ok || !lossless) {
    char message[256];
    snprintf(message, sizeof message, "lazybreaker: %s: expected a BigInt from 0 to 2^64-1", what);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  return 1;
}

int lb_handle_arg(napi_env env, napi_value value, cb_handle *out) {
  return lb_arg_u64(env, value, "breaker handle", out);
}

int lb_args(napi_env env, napi_callback_info info, size_t max, napi_value *argv) {
  size_t argc = max;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return 0;
  if (argc >= max) return 1;
  napi_value undefined = NULL;
  napi_get_undefined(env, &undefined);
  for (size_t i = argc; i < max; i++) argv[i] = undefined;
  return 1;
}

napi_value lb_define(napi_env env, napi_value exports, const lb_function *functions) {
  for (const lb_function *f = functions; f->name != NULL; f++) {
    napi_value fn = NULL;
    LB_NAPI(env, napi_create_function(env, f->name, NAPI_AUTO_LENGTH, f->callback, NULL, &fn));
    LB_NAPI(env, napi_set_named_property(env, exports, f->name, fn));
  }
  return exports;
}
