// The C ABI's event functions: which kinds are queued, draining the queue,
// and what it dropped.
#include <cstring>

#include "capi/errors.hpp"
#include "capi/resolve.hpp"
#include "capi/status.hpp"
#include "capi/validate.hpp"
#include "capi/versioned.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/grace.hpp"
#include "registry/registry.hpp"

using lazybreaker::capi::fail;
using lazybreaker::capi::FirstVersion;
using lazybreaker::capi::public_state;
using lazybreaker::capi::resolve_registry;
using lazybreaker::core::State;
using lazybreaker::registry::Registry;

extern "C" {

CB_API int cb_events_select(cb_registry *reg, unsigned kinds) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  if ((kinds & ~(CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS)) != 0)
    return fail(CB_EINVAL, "cb_events_select: unknown event kinds 0x%x",
                kinds & ~(CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS));
  r->set_event_mask(kinds);
  return CB_OK;
}

CB_API int cb_events_poll(cb_registry *reg, cb_event *out, size_t max, size_t *count) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (count == nullptr) return fail(CB_EINVAL, "cb_events_poll: count is NULL");
  if (out == nullptr && max > 0) return fail(CB_EINVAL, "cb_events_poll: out is NULL");
  if (max > 0) {
    if (const int st = lazybreaker::capi::check_struct_bound(out->struct_size, "cb_events_poll");
        st != CB_OK)
      return st;
  }
  if (max > 0 && out->struct_size < FirstVersion::kEvent)
    return fail(CB_EINVAL, "cb_events_poll: out[0].struct_size %zu is smaller than %zu",
                out->struct_size, FirstVersion::kEvent);
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  const size_t stride = max > 0 ? out->struct_size : 0;
  size_t n = 0;
  lazybreaker::registry::Event e;
  while (n < max && r->events().pop(&e)) {
    cb_event ev;
    std::memset(&ev, 0, sizeof ev);
    ev.struct_size = stride;
    ev.sequence = e.sequence;
    ev.breaker = e.handle;
    ev.from = public_state(State(e.from));
    ev.to = public_state(State(e.to));
    ev.reason = int(e.reason);
    ev.at_ns = e.at_ns;
    std::memcpy(ev.name, e.name, sizeof ev.name);
    lazybreaker::capi::copy_out(reinterpret_cast<char *>(out) + n * stride, stride, ev);
    ++n;
  }
  *count = n;
  return CB_OK;
}

CB_API int cb_events_dropped(cb_registry *reg, uint64_t *out) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (out == nullptr) return fail(CB_EINVAL, "cb_events_dropped: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *out = r->events().dropped();
  return CB_OK;
}

}  // extern "C"
