/* Breakers: create, destroy, read and the manual transitions, by handle.
 * A configuration crosses as an object keyed by cb_config's field names
 * (CB_CONFIG_FIELDS): a uint64_t field as a BigInt, the others as numbers.
 * lib/config.js has checked every value against the same list. */
#include <stddef.h>
#include <stdlib.h>

#include "addon.h"

/* How each field of CB_CONFIG_FIELDS crosses: its C type, as a kind. */
typedef enum { LB_KIND_uint64_t, LB_KIND_uint32_t, LB_KIND_int, LB_KIND_double } lb_kind;

typedef struct lb_field {
  const char *name;
  const char *type_error; /* the TypeError when JavaScript gives another type */
  size_t offset;
  lb_kind kind;
} lb_field;

static const lb_field lb_fields[] = {
#define LB_FIELD_ROW(field, type, since, unit, bounds, lo, hi, def)                             \
  {#field, "lazybreaker: config field " #field ": expected " #type, offsetof(cb_config, field), \
   LB_KIND_##type},
    CB_CONFIG_FIELDS(LB_FIELD_ROW)
#undef LB_FIELD_ROW
};
enum { LB_FIELD_COUNT = sizeof lb_fields / sizeof lb_fields[0] };

/* Reads `value` into the field at `at`; 0 when it has another type. */
static int lb_field_read(napi_env env, napi_value value, lb_kind kind, void *at) {
  bool lossless = false;
  int32_t i = 0;
  switch (kind) {
    case LB_KIND_uint64_t:
      return napi_get_value_bigint_uint64(env, value, at, &lossless) == napi_ok && lossless;
    case LB_KIND_uint32_t:
      return napi_get_value_uint32(env, value, at) == napi_ok;
    case LB_KIND_int:
      if (napi_get_value_int32(env, value, &i) != napi_ok) return 0;
      *(int *)at = i;
      return 1;
    case LB_KIND_double:
      return napi_get_value_double(env, value, at) == napi_ok;
  }
  return 0;
}

static napi_value lb_field_value(napi_env env, lb_kind kind, const void *at) {
  napi_value out = NULL;
  switch (kind) {
    case LB_KIND_uint64_t:
      return lb_u64(env, *(const uint64_t *)at);
    case LB_KIND_uint32_t:
      napi_create_uint32(env, *(const uint32_t *)at, &out);
      return out;
    case LB_KIND_int:
      return lb_int(env, *(const int *)at);
    case LB_KIND_double:
      napi_create_double(env, *(const double *)at, &out);
      return out;
  }
  return out;
}

/* Fills cfg from the fields `object` has; 0 with a TypeError naming the
 * field when one has the wrong type. */
static int lb_config_from(napi_env env, napi_value object, cb_config *cfg) {
  cb_config_init(cfg);
  for (size_t i = 0; i < LB_FIELD_COUNT; i++) {
    const lb_field *f = &lb_fields[i];
    bool has = false;
    napi_value value = NULL;
    if (napi_has_named_property(env, object, f->name, &has) != napi_ok) return 0;
    if (!has) continue;
    if (napi_get_named_property(env, object, f->name, &value) != napi_ok) return 0;
    if (!lb_field_read(env, value, f->kind, (char *)cfg + f->offset)) {
      lb_throw_type(env, f->type_error);
      return 0;
    }
  }
  return 1;
}

/* create(registry, name | undefined, config, getOrCreate) -> handle */
static napi_value lb_create(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!lb_args(env, info, 4, argv)) return NULL;
  cb_registry *reg = lb_registry_arg(env, argv[0]);
  if (reg == NULL) return NULL;
  char name[CB_MAX_NAME_BYTES + 2];
  const char *name_arg = NULL;
  napi_valuetype type = napi_undefined;
  LB_NAPI(env, napi_typeof(env, argv[1], &type));
  if (type == napi_string) {
    size_t length = 0;
    LB_NAPI(env, napi_get_value_string_utf8(env, argv[1], name, sizeof name, &length));
    if (length > CB_MAX_NAME_BYTES) {
      napi_throw_range_error(env, NULL, "lazybreaker: name must be 1 to 255 bytes of UTF-8");
      return NULL;
    }
    name_arg = name;
  }
  cb_config cfg;
  if (!lb_config_from(env, argv[2], &cfg)) return NULL;
  bool get_or_create = false;
  LB_NAPI(env, napi_get_value_bool(env, argv[3], &get_or_create));
  cb_handle h = 0;
  int status = get_or_create && name_arg ? cb_get_or_create(reg, name_arg, &cfg, &h)
                                         : cb_create(reg, name_arg, &cfg, &h);
  if (status != CB_OK)
    return lb_throw_status(env, status, get_or_create ? "getOrCreate" : "create");
  return lb_u64(env, h);
}

/* Reads argv[0] as a handle, calls `call(h)`, throws its status. */
#define LB_HANDLE_CALL(function, call, what)                                           \
  static napi_value function(napi_env env, napi_callback_info info) {                  \
    napi_value argv[1];                                                                \
    cb_handle h = 0;                                                                   \
    if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL; \
    int status = call(h);                                                              \
    return status == CB_OK ? NULL : lb_throw_status(env, status, what);                \
  }
LB_HANDLE_CALL(lb_destroy, cb_destroy, "destroy")
LB_HANDLE_CALL(lb_force_open, cb_force_open, "forceOpen")
LB_HANDLE_CALL(lb_disable, cb_disable, "disable")
LB_HANDLE_CALL(lb_reset, cb_reset, "reset")
#undef LB_HANDLE_CALL

static napi_value lb_trip(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  cb_handle h = 0;
  uint64_t ns = 0;
  if (!lb_args(env, info, 2, argv) || !lb_handle_arg(env, argv[0], &h) ||
      !lb_arg_u64(env, argv[1], "trip", &ns))
    return NULL;
  int status = cb_trip(h, ns);
  return status == CB_OK ? NULL : lb_throw_status(env, status, "trip");
}

static napi_value lb_state(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  cb_handle h = 0;
  if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  int state = cb_state(h);
  return state >= 0 ? lb_int(env, state) : lb_throw_status(env, state, "state");
}

static napi_value lb_retry_after(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  cb_handle h = 0;
  uint64_t ns = 0;
  if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  int status = cb_retry_after(h, &ns);
  return status == CB_OK ? lb_u64(env, ns) : lb_throw_status(env, status, "retryAfter");
}

static napi_value lb_stats(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  cb_handle h = 0;
  if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  cb_stats s = {.struct_size = sizeof s};
  int status = cb_stats_get(h, &s);
  if (status != CB_OK) return lb_throw_status(env, status, "stats");
  napi_value out = NULL;
  LB_NAPI(env, napi_create_object(env, &out));
  /* cb_stats has no list in lists.h: its fields, named as in C. */
  if (!lb_set(env, out, "admitted", lb_u64(env, s.admitted)) ||
      !lb_set(env, out, "rejected", lb_u64(env, s.rejected)) ||
      !lb_set(env, out, "successes", lb_u64(env, s.successes)) ||
      !lb_set(env, out, "failures", lb_u64(env, s.failures)) ||
      !lb_set(env, out, "ignored", lb_u64(env, s.ignored)) ||
      !lb_set(env, out, "trips", lb_u64(env, s.trips)) ||
      !lb_set(env, out, "consecutive_failures",
              lb_field_value(env, LB_KIND_uint32_t, &s.consecutive_failures)) ||
      !lb_set(env, out, "slow", lb_u64(env, s.slow)) ||
      !lb_set(env, out, "failure_rate", lb_field_value(env, LB_KIND_double, &s.failure_rate)) ||
      !lb_set(env, out, "slow_rate", lb_field_value(env, LB_KIND_double, &s.slow_rate)) ||
      !lb_set(env, out, "state_ns", lb_u64(env, s.state_ns))) {
    lb_throw_napi_failure(env, "stats object");
    return NULL;
  }
  return out;
}

/* The configuration a breaker uses, keyed by cb_config's field names. */
static napi_value lb_config_get(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  cb_handle h = 0;
  if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  cb_config cfg;
  cb_config_init(&cfg);
  int status = cb_config_get(h, &cfg);
  if (status != CB_OK) return lb_throw_status(env, status, "config");
  napi_value out = NULL;
  LB_NAPI(env, napi_create_object(env, &out));
  for (size_t i = 0; i < LB_FIELD_COUNT; i++) {
    const lb_field *f = &lb_fields[i];
    if (!lb_set(env, out, f->name, lb_field_value(env, f->kind, (const char *)&cfg + f->offset)))
      return NULL;
  }
  return out;
}

static napi_value lb_name(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  cb_handle h = 0;
  if (!lb_args(env, info, 1, argv) || !lb_handle_arg(env, argv[0], &h)) return NULL;
  char name[CB_MAX_NAME_BYTES + 1];
  int status = cb_name(h, name, sizeof name);
  return status == CB_OK ? lb_string(env, name) : lb_throw_status(env, status, "name");
}

napi_value lb_breaker_exports(napi_env env, napi_value exports) {
  static const lb_function functions[] = {{"create", lb_create},
                                          {"destroy", lb_destroy},
                                          {"forceOpen", lb_force_open},
                                          {"disable", lb_disable},
                                          {"reset", lb_reset},
                                          {"trip", lb_trip},
                                          {"state", lb_state},
                                          {"retryAfter", lb_retry_after},
                                          {"stats", lb_stats},
                                          {"config", lb_config_get},
                                          {"name", lb_name},
                                          {NULL, NULL}};
  return lb_define(env, exports, functions);
}
