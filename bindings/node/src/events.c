/* The registry's event queue: this process's transitions, in order. */
#include "addon.h"

enum { LB_EVENT_BATCH = 64 };

static napi_value lb_event_value(napi_env env, const cb_event *e) {
  napi_value out = NULL;
  LB_NAPI(env, napi_create_array_with_length(env, 6, &out));
  napi_value items[6] = {lb_u64(env, e->breaker), lb_int(env, e->from),  lb_int(env, e->to),
                         lb_int(env, e->reason),  lb_u64(env, e->at_ns), lb_string(env, e->name)};
  for (uint32_t i = 0; i < 6; i++) LB_NAPI(env, napi_set_element(env, out, i, items[i]));
  return out;
}

int lb_events_append(napi_env env, cb_registry *reg, napi_value sink) {
  /* One event first: the queue is empty after almost every call, and then
   * the sink is not touched. */
  size_t max = 1;
  cb_event batch[LB_EVENT_BATCH];
  uint32_t total = 0;
  int counted = 0;
  for (;;) {
    for (size_t i = 0; i < max; i++) batch[i].struct_size = sizeof batch[i];
    size_t count = 0;
    int status = cb_events_poll(reg, batch, max, &count);
    if (status != CB_OK) {
      lb_throw_status(env, status, "events");
      return 0;
    }
    if (count > 0 && !counted) {
      if (napi_get_array_length(env, sink, &total) != napi_ok) {
        lb_throw_napi_failure(env, "events sink");
        return 0;
      }
      counted = 1;
    }
    for (size_t i = 0; i < count; i++) {
      napi_value event = lb_event_value(env, &batch[i]);
      if (event == NULL) return 0;
      if (napi_set_element(env, sink, total++, event) != napi_ok) {
        lb_throw_napi_failure(env, "events sink");
        return 0;
      }
    }
    if (count < max) return 1;
    max = LB_EVENT_BATCH;
  }
}

/* eventsPoll(registry) -> [[handle, from, to, reason, atNs, name], ...]:
 * everything queued now. */
static napi_value lb_events_poll(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!lb_args(env, info, 1, argv)) return NULL;
  cb_registry *reg = lb_registry_arg(env, argv[0]);
  if (reg == NULL) return NULL;
  napi_value out = NULL;
  LB_NAPI(env, napi_create_array(env, &out));
  return lb_events_append(env, reg, out) ? out : NULL;
}

static napi_value lb_events_dropped(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!lb_args(env, info, 1, argv)) return NULL;
  cb_registry *reg = lb_registry_arg(env, argv[0]);
  uint64_t dropped = 0;
  if (reg == NULL) return NULL;
  int status = cb_events_dropped(reg, &dropped);
  return status == CB_OK ? lb_u64(env, dropped) : lb_throw_status(env, status, "eventsDropped");
}

napi_value lb_events_exports(napi_env env, napi_value exports) {
  static const lb_function functions[] = {
      {"eventsPoll", lb_events_poll}, {"eventsDropped", lb_events_dropped}, {NULL, NULL}};
  return lb_define(env, exports, functions);
}
