// The C ABI's registry functions: open, close, the default registry, the
// clock, the breaker list.
#include "registry/registry.hpp"
#include "capi/errors.hpp"
#include "capi/resolve.hpp"
#include "capi/status.hpp"
#include "capi/validate.hpp"
#include "capi/versioned.hpp"
#include "lazybreaker/lazybreaker.h"

using lazybreaker::capi::check_struct_size;
using lazybreaker::capi::default_registry;
using lazybreaker::capi::fail;
using lazybreaker::capi::FirstVersion;
using lazybreaker::capi::from_public;
using lazybreaker::capi::resolve_registry;
using lazybreaker::capi::status_to_code;
using lazybreaker::capi::to_public;
using lazybreaker::registry::Registry;

extern "C" {

CB_API int cb_registry_open(const cb_registry_options *opts, cb_registry **out) CB_NOEXCEPT {
  if (out == nullptr) return fail(CB_EINVAL, "cb_registry_open: out is NULL");
  uint32_t capacity = Registry::kDefaultCapacity;
  uint32_t event_capacity = Registry::kDefaultEventCapacity;
  int clock = CB_CLOCK_MONOTONIC;
  if (opts != nullptr) {
    const int st = check_struct_size(opts, opts->struct_size, FirstVersion::kOptions,
                                     sizeof(cb_registry_options), "cb_registry_options");
    if (st != CB_OK) return st;
    if (opts->capacity > CB_MAX_CAPACITY)
      return fail(CB_EINVAL, "cb_registry_options: capacity must be 0..%u, got %u", CB_MAX_CAPACITY,
                  opts->capacity);
    if (opts->clock != CB_CLOCK_MONOTONIC && opts->clock != CB_CLOCK_MANUAL)
      return fail(
          CB_EINVAL,
          "cb_registry_options: clock must be CB_CLOCK_MONOTONIC or CB_CLOCK_MANUAL, got %d",
          opts->clock);
    if (opts->path != nullptr)
      return fail(CB_EINVAL,
                  "cb_registry_options: path is set, but shared registries in a file are not "
                  "supported by this version");
    const bool has_events = LB_HAS(cb_registry_options, opts->struct_size, event_capacity);
    if (has_events && opts->event_capacity > CB_MAX_EVENT_CAPACITY)
      return fail(CB_EINVAL, "cb_registry_options: event_capacity must be 0..%u, got %u",
                  CB_MAX_EVENT_CAPACITY, opts->event_capacity);
    if (has_events && opts->event_capacity != 0) event_capacity = opts->event_capacity;
    if (opts->capacity != 0) capacity = opts->capacity;
    clock = opts->clock;
  }
  Registry *r = nullptr;
  const int st = status_to_code(
      Registry::open(capacity,
                     clock == CB_CLOCK_MANUAL ? lazybreaker::core::ClockKind::Manual
                                              : lazybreaker::core::ClockKind::Monotonic,
                     event_capacity, &r),
      "cb_registry_open");
  if (st != CB_OK) return st;
  *out = to_public(r);
  return CB_OK;
}

CB_API int cb_registry_close(cb_registry *reg) CB_NOEXCEPT {
  if (reg == nullptr) return CB_OK;
  Registry *r = from_public(reg);
  if (r == nullptr)
    return fail(CB_EINVAL, "cb_registry_close: %p is not an open registry", (void *)reg);
  if (lazybreaker::capi::is_default_registry(r))
    return fail(CB_EINVAL, "cb_registry_close: the default registry is never closed");
  Registry::close(r);
  return CB_OK;
}

CB_API cb_registry *cb_default_registry(void) CB_NOEXCEPT {
  Registry *r = default_registry();
  if (r == nullptr) {
    fail(CB_ENOMEM, "cb_default_registry: its memory could not be reserved");
    return nullptr;
  }
  return to_public(r);
}

CB_API int cb_clock_advance(cb_registry *reg, uint64_t ns) CB_NOEXCEPT {
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  if (r->clock().kind != lazybreaker::core::ClockKind::Manual)
    return fail(CB_EINVAL, "cb_clock_advance: the registry's clock is not CB_CLOCK_MANUAL");
  if (!r->clock().advance(ns))
    return fail(CB_EINVAL, "cb_clock_advance: advancing by %llu ns would overflow the clock",
                (unsigned long long)ns);
  return CB_OK;
}

CB_API int cb_clock_now(cb_registry *reg, uint64_t *out_ns) CB_NOEXCEPT {
  if (out_ns == nullptr) return fail(CB_EINVAL, "cb_clock_now: out_ns is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *out_ns = r->clock().now();
  return CB_OK;
}

CB_API int cb_registry_list(cb_registry *reg, cb_handle *out, size_t max,
                            size_t *count) CB_NOEXCEPT {
  if (count == nullptr) return fail(CB_EINVAL, "cb_registry_list: count is NULL");
  if (out == nullptr && max > 0) return fail(CB_EINVAL, "cb_registry_list: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *count = r->list(out, max);
  return CB_OK;
}

}  // extern "C"
