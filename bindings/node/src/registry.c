/* Registries: a JavaScript Registry holds an external value around the
 * cb_registry. A registry this process opened is closed by close() or,
 * when the Registry is collected unclosed, by the external's finalizer;
 * the default registry is never closed. */
#include <stdlib.h>
#include <string.h>

#include "addon.h"

typedef struct lb_registry {
  cb_registry *reg; /* NULL once closed */
  int owned;        /* 0 for the default registry */
} lb_registry;

/* Registries open now (the garbage-collection test reads it). Every
 * worker thread's instance of the addon counts here, at once. */
static int64_t lb_open_registries;

static void lb_count_registries(int64_t by) {
  __atomic_add_fetch(&lb_open_registries, by, __ATOMIC_RELAXED);
}

static void lb_registry_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  lb_registry *r = data;
  if (r->owned && r->reg != NULL) {
    cb_registry_close(r->reg);
    lb_count_registries(-1);
  }
  free(r);
}

static napi_value lb_registry_wrap(napi_env env, cb_registry *reg, int owned) {
  lb_registry *r = malloc(sizeof *r);
  if (r == NULL) {
    if (owned) cb_registry_close(reg);
    return lb_throw_no_memory(env, "registry");
  }
  r->reg = reg;
  r->owned = owned;
  napi_value out = NULL;
  if (napi_create_external(env, r, lb_registry_finalize, NULL, &out) != napi_ok) {
    lb_registry_finalize(env, r, NULL);
    lb_throw_napi_failure(env, "napi_create_external");
    return NULL;
  }
  if (owned) lb_count_registries(1);
  return out;
}

static lb_registry *lb_registry_data(napi_env env, napi_value value) {
  void *data = NULL;
  /* napi_invalid_arg for any value that is not an external */
  if (napi_get_value_external(env, value, &data) != napi_ok) {
    lb_throw_type(env, "lazybreaker: expected a registry");
    return NULL;
  }
  return data;
}

cb_registry *lb_registry_arg(napi_env env, napi_value value) {
  lb_registry *r = lb_registry_data(env, value);
  if (r == NULL) return NULL;
  if (r->reg == NULL) {
    napi_throw_error(env, "ERR_LAZYBREAKER_CLOSED", "lazybreaker: the registry is closed");
    return NULL;
  }
  return r->reg;
}

/* Reads options.<key> as a uint32; absent or undefined keeps *out. */
static int lb_option_u32(napi_env env, napi_value options, const char *key, uint32_t *out) {
  napi_value value = NULL;
  napi_valuetype type = napi_undefined;
  if (napi_get_named_property(env, options, key, &value) != napi_ok ||
      napi_typeof(env, value, &type) != napi_ok)
    return 0;
  if (type == napi_undefined) return 1;
  return napi_get_value_uint32(env, value, out) == napi_ok;
}

/* open({ path, flags, capacity, eventCapacity, mode, manualClock }); lib/registry.js
 * checks every option before it gets here. */
static napi_value lb_open(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!lb_args(env, info, 1, argv)) return NULL;
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  uint32_t manual = 0;
  if (!lb_option_u32(env, argv[0], "capacity", &opts.capacity) ||
      !lb_option_u32(env, argv[0], "eventCapacity", &opts.event_capacity) ||
      !lb_option_u32(env, argv[0], "flags", &opts.flags) ||
      !lb_option_u32(env, argv[0], "mode", &opts.mode) ||
      !lb_option_u32(env, argv[0], "manualClock", &manual))
    return lb_throw_type(env, "lazybreaker: open: bad options");
  opts.clock = manual ? CB_CLOCK_MANUAL : CB_CLOCK_MONOTONIC;
  char *path = NULL;
  napi_value path_value = NULL;
  napi_valuetype type = napi_undefined;
  LB_NAPI(env, napi_get_named_property(env, argv[0], "path", &path_value));
  LB_NAPI(env, napi_typeof(env, path_value, &type));
  if (type == napi_string) {
    size_t length = 0;
    LB_NAPI(env, napi_get_value_string_utf8(env, path_value, NULL, 0, &length));
    path = malloc(length + 1);
    if (path == NULL) return lb_throw_no_memory(env, "open");
    napi_get_value_string_utf8(env, path_value, path, length + 1, &length);
    if (strlen(path) != length) {
      free(path);
      return lb_throw_type(env, "lazybreaker: path must not contain a NUL character");
    }
    opts.path = path;
  }
  cb_registry *reg = NULL;
  int status = cb_registry_open(&opts, &reg);
  free(path);
  if (status != CB_OK) return lb_throw_status(env, status, "open");
  return lb_registry_wrap(env, reg, 1);
}

static napi_value lb_default(napi_env env, napi_callback_info info) {
  (void)info;
  return lb_registry_wrap(env, cb_default_registry(), 0);
}

static napi_value lb_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!lb_args(env, info, 1, argv)) return NULL;
  lb_registry *r = lb_registry_data(env, argv[0]);
  if (r == NULL) return NULL;
  if (r->reg != NULL && r->owned) {
    int status = cb_registry_close(r->reg);
    if (status != CB_OK) return lb_throw_status(env, status, "close");
    lb_count_registries(-1);
    r->reg = NULL;
  }
  return NULL;
}

static napi_value lb_advance(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!lb_args(env, info, 2, argv)) return NULL;
  cb_registry *reg = lb_registry_arg(env, argv[0]);
  uint64_t ns = 0;
  if (reg == NULL || !lb_arg_u64(env, argv[1], "advance", &ns)) return NULL;
  int status = cb_clock_advance(reg, ns);
  return status == CB_OK ? NULL : lb_throw_status(env, status, "advance");
}

static napi_value lb_now(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!lb_args(env, info, 1, argv)) return NULL;
  cb_registry *reg = lb_registry_arg(env, argv[0]);
  uint64_t ns = 0;
  if (reg == NULL) return NULL;
  int status = cb_clock_now(reg, &ns);
  return status == CB_OK ? lb_u64(env, ns) : lb_throw_status(env, status, "now");
}

/* The Prometheus text; grows the buffer to what the library says it needs. */
static napi_value lb_metrics(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!lb_args(env, info, 1, argv)) return NULL;
  cb_registry *reg = lb_registry_arg(env, argv[0]);
  if (reg == NULL) return NULL;
  size_t size = 16384;
  for (;;) {
    char *buf = malloc(size);
    if (buf == NULL) return lb_throw_no_memory(env, "metrics");
    size_t needed = 0;
    int status = cb_metrics_prometheus(reg, buf, size, &needed);
    if (status == CB_OK) {
      napi_value out = lb_string(env, buf);
      free(buf);
      return out;
    }
    free(buf);
    if (status != CB_ERANGE) return lb_throw_status(env, status, "metrics");
    size = needed + 1;
  }
}

static napi_value lb_open_registry_count(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out = NULL;
  napi_create_int64(env, __atomic_load_n(&lb_open_registries, __ATOMIC_RELAXED), &out);
  return out;
}

napi_value lb_registry_exports(napi_env env, napi_value exports) {
  static const lb_function functions[] = {{"registryOpen", lb_open},
                                          {"registryDefault", lb_default},
                                          {"registryClose", lb_close},
                                          {"clockAdvance", lb_advance},
                                          {"clockNow", lb_now},
                                          {"metrics", lb_metrics},
                                          {"openRegistries", lb_open_registry_count},
                                          {NULL, NULL}};
  return lb_define(env, exports, functions);
}
