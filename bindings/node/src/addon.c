/* The module's entry point: every noun's functions on one exports object. */
#include "addon.h"

static napi_value lb_init(napi_env env, napi_value exports) {
  if (lb_tables_exports(env, exports) == NULL || lb_registry_exports(env, exports) == NULL ||
      lb_breaker_exports(env, exports) == NULL || lb_permit_exports(env, exports) == NULL ||
      lb_events_exports(env, exports) == NULL)
    return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, lb_init)
