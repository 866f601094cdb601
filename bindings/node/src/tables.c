/* The tables the JavaScript layer is built from, expanded from the lists of
 * include/lazybreaker/lists.h: statuses, states, reasons, configuration
 * fields with their bounds and defaults, and cb_policy_reads' answers. */
#include "addon.h"

/* One row of a list of enumerators: its value, its name, and for a status
 * its description. */
typedef struct lb_named {
  int value;
  const char *name;
  const char *description;
} lb_named;

#define LB_STATUS_ROW(code, description) {code, #code, description},
#define LB_PAIR_ROW(enumerator, text) {enumerator, text, NULL},
static const lb_named lb_status_rows[] = {CB_STATUS_LIST(LB_STATUS_ROW)};
static const lb_named lb_state_rows[] = {CB_STATE_LIST(LB_PAIR_ROW)};
static const lb_named lb_reason_rows[] = {CB_REASON_LIST(LB_PAIR_ROW)};
/* cb_policy_t has no list in lists.h: its three enumerators, named as the
 * conformance scenarios name them. */
static const lb_named lb_policy_rows[] = {{CB_POLICY_CONSECUTIVE, "consecutive", NULL},
                                          {CB_POLICY_COUNT_WINDOW, "count_window", NULL},
                                          {CB_POLICY_TIME_WINDOW, "time_window", NULL}};
#undef LB_STATUS_ROW
#undef LB_PAIR_ROW
#define LB_COUNT(rows) (sizeof rows / sizeof rows[0])

/* One row of CB_CONFIG_FIELDS. A uint64_t field's bounds and default cross
 * as BigInt (they pass 2^53), the others' as numbers. */
typedef struct lb_field_row {
  const char *field, *type, *since, *unit, *bounds;
  int big;
  double lo, hi, def;
  uint64_t lo64, hi64, def64;
} lb_field_row;

#define LB_BIG_uint64_t 1
#define LB_BIG_uint32_t 0
#define LB_BIG_int 0
#define LB_BIG_double 0
#define LB_FIELD_ROW(field, type, since, unit, bounds, lo, hi, def)                          \
  {#field,       #type,        #since,        #unit,          #bounds,        LB_BIG_##type, \
   (double)(lo), (double)(hi), (double)(def), (uint64_t)(lo), (uint64_t)(hi), (uint64_t)(def)},
static const lb_field_row lb_field_rows[] = {CB_CONFIG_FIELDS(LB_FIELD_ROW)};
#undef LB_FIELD_ROW

static napi_value lb_number(napi_env env, double value) {
  napi_value out = NULL;
  napi_create_double(env, value, &out);
  return out;
}

/* A status: { status, name, description }; another row: [value, name]. */
static napi_value lb_named_row(napi_env env, const lb_named *row) {
  napi_value out = NULL;
  if (row->description != NULL) {
    LB_NAPI(env, napi_create_object(env, &out));
    if (!lb_set(env, out, "status", lb_int(env, row->value)) ||
        !lb_set(env, out, "name", lb_string(env, row->name)) ||
        !lb_set(env, out, "description", lb_string(env, row->description)))
      return NULL;
    return out;
  }
  LB_NAPI(env, napi_create_array_with_length(env, 2, &out));
  LB_NAPI(env, napi_set_element(env, out, 0, lb_int(env, row->value)));
  LB_NAPI(env, napi_set_element(env, out, 1, lb_string(env, row->name)));
  return out;
}

static napi_value lb_named_list(napi_env env, const lb_named *rows, size_t count) {
  napi_value out = NULL;
  LB_NAPI(env, napi_create_array_with_length(env, count, &out));
  for (size_t i = 0; i < count; i++) {
    napi_value row = lb_named_row(env, &rows[i]);
    if (row == NULL) return NULL;
    LB_NAPI(env, napi_set_element(env, out, (uint32_t)i, row));
  }
  return out;
}

static napi_value lb_bound(napi_env env, int big, double value, uint64_t value64) {
  return big ? lb_u64(env, value64) : lb_number(env, value);
}

static napi_value lb_config_fields(napi_env env) {
  napi_value out = NULL;
  LB_NAPI(env, napi_create_array_with_length(env, LB_COUNT(lb_field_rows), &out));
  for (size_t i = 0; i < LB_COUNT(lb_field_rows); i++) {
    const lb_field_row *f = &lb_field_rows[i];
    napi_value row = NULL;
    LB_NAPI(env, napi_create_object(env, &row));
    if (!lb_set(env, row, "field", lb_string(env, f->field)) ||
        !lb_set(env, row, "type", lb_string(env, f->type)) ||
        !lb_set(env, row, "since", lb_string(env, f->since)) ||
        !lb_set(env, row, "unit", lb_string(env, f->unit)) ||
        !lb_set(env, row, "bounds", lb_string(env, f->bounds)) ||
        !lb_set(env, row, "lo", lb_bound(env, f->big, f->lo, f->lo64)) ||
        !lb_set(env, row, "hi", lb_bound(env, f->big, f->hi, f->hi64)) ||
        !lb_set(env, row, "def", lb_bound(env, f->big, f->def, f->def64)))
      return NULL;
    LB_NAPI(env, napi_set_element(env, out, (uint32_t)i, row));
  }
  return out;
}

/* policyReads(policy, field) -> CB_FIELD_READ, _IGNORED or _READ_WITH_SLOW_CALLS */
static napi_value lb_policy_reads(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!lb_args(env, info, 2, argv)) return NULL;
  int32_t policy = 0;
  char field[64];
  size_t length = 0;
  LB_NAPI(env, napi_get_value_int32(env, argv[0], &policy));
  LB_NAPI(env, napi_get_value_string_utf8(env, argv[1], field, sizeof field, &length));
  int answer = 0;
  int status = cb_policy_reads(policy, field, &answer);
  return status == CB_OK ? lb_int(env, answer) : lb_throw_status(env, status, "policyReads");
}

typedef struct lb_constant {
  const char *name;
  double value;
} lb_constant;

static napi_value lb_constants(napi_env env) {
  static const lb_constant constants[] = {
      {"FIELD_IGNORED", CB_FIELD_IGNORED},
      {"FIELD_READ", CB_FIELD_READ},
      {"FIELD_READ_WITH_SLOW_CALLS", CB_FIELD_READ_WITH_SLOW_CALLS},
      {"SUCCESS", CB_SUCCESS},
      {"FAILURE", CB_FAILURE},
      {"IGNORED", CB_IGNORED},
      {"REGISTRY_CREATE", CB_REGISTRY_CREATE},
      {"REGISTRY_EXCLUSIVE", CB_REGISTRY_EXCLUSIVE},
      {"REGISTRY_ANY_OWNER", CB_REGISTRY_ANY_OWNER},
      {"MAX_NAME_BYTES", CB_MAX_NAME_BYTES},
      {"MAX_CAPACITY", CB_MAX_CAPACITY},
      {"MAX_EVENT_CAPACITY", CB_MAX_EVENT_CAPACITY}};
  napi_value out = NULL;
  LB_NAPI(env, napi_create_object(env, &out));
  for (size_t i = 0; i < LB_COUNT(constants); i++) {
    if (!lb_set(env, out, constants[i].name, lb_number(env, constants[i].value))) return NULL;
  }
  return out;
}

napi_value lb_tables_exports(napi_env env, napi_value exports) {
  if (!lb_set(env, exports, "constants", lb_constants(env)) ||
      !lb_set(env, exports, "headerVersion", lb_string(env, CB_VERSION_STRING)) ||
      !lb_set(env, exports, "libraryVersion", lb_string(env, cb_version_string())) ||
      !lb_set(env, exports, "statuses",
              lb_named_list(env, lb_status_rows, LB_COUNT(lb_status_rows))) ||
      !lb_set(env, exports, "states", lb_named_list(env, lb_state_rows, LB_COUNT(lb_state_rows))) ||
      !lb_set(env, exports, "reasons",
              lb_named_list(env, lb_reason_rows, LB_COUNT(lb_reason_rows))) ||
      !lb_set(env, exports, "policies",
              lb_named_list(env, lb_policy_rows, LB_COUNT(lb_policy_rows))) ||
      !lb_set(env, exports, "configFields", lb_config_fields(env)))
    return NULL;
  static const lb_function functions[] = {{"policyReads", lb_policy_reads}, {NULL, NULL}};
  return lb_define(env, exports, functions);
}
