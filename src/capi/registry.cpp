// The C ABI's registry functions: open, close, the default registry, the
// clock, the breaker list.
#include <iterator>

#include "capi/errors.hpp"
#include "capi/resolve.hpp"
#include "capi/status.hpp"
#include "capi/validate.hpp"
#include "capi/versioned.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/grace.hpp"
#include "registry/registry.hpp"

using lazybreaker::capi::check_struct_size;
using lazybreaker::capi::default_registry;
using lazybreaker::capi::fail;
using lazybreaker::capi::fail_at;
using lazybreaker::capi::FirstVersion;
using lazybreaker::capi::from_public;
using lazybreaker::capi::resolve_registry;
using lazybreaker::capi::status_to_code;
using lazybreaker::capi::to_public;
using lazybreaker::registry::Registry;

namespace {

constexpr uint32_t kKnownFlags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE | CB_REGISTRY_ANY_OWNER;

// CB_OK if the file options of `opts` can be used, else the error (with
// its message and field).
int check_file_options(const cb_registry_options &opts, uint32_t flags, uint32_t mode) {
  if ((flags & ~kKnownFlags) != 0)
    return fail_at(CB_EINVAL, "flags", "cb_registry_options: flags has unknown bits 0x%x",
                   flags & ~kKnownFlags);
  if ((flags & CB_REGISTRY_EXCLUSIVE) != 0 && (flags & CB_REGISTRY_CREATE) == 0)
    return fail_at(CB_EINVAL, "flags",
                   "cb_registry_options: CB_REGISTRY_EXCLUSIVE needs CB_REGISTRY_CREATE as well");
  if ((flags & CB_REGISTRY_ANY_OWNER) != 0 && (flags & CB_REGISTRY_CREATE) == 0)
    return fail_at(CB_EINVAL, "flags",
                   "cb_registry_options: CB_REGISTRY_ANY_OWNER needs CB_REGISTRY_CREATE as well");
  if (mode > 0777)
    return fail_at(CB_EINVAL, "mode",
                   "cb_registry_options: mode must be permission bits 0..0777, got 0%o", mode);
  if (opts.path[0] == '\0') return fail_at(CB_EINVAL, "path", "cb_registry_options: path is empty");
  return CB_OK;
}

// The status of a file that could not be opened.
int file_error_code(lazybreaker::registry::FileError::Kind kind) {
  using K = lazybreaker::registry::FileError;
  switch (kind) {
    case K::Missing:
      return CB_ENOENT;
    case K::Exists:
      return CB_EEXIST;
    case K::Permission:
      return CB_EPERM;
    case K::Version:
      return CB_EVERSION;
    case K::Corrupt:
      return CB_ECORRUPT;
    case K::Disagrees:
      return CB_EINVAL;
    case K::NoMemory:
      return CB_ENOMEM;
    case K::Busy:
      return CB_EBUSY;
    default:
      return CB_EIO;
  }
}

// A file the registry refused, with what to do about it in the flags' words.
int refuse_file(const lazybreaker::registry::FileError &err) {
  using E = lazybreaker::registry::FileError;
  static const char *const kRemedies[] = {
      "",
      " (pass CB_REGISTRY_CREATE to create it)",
      " (pass CB_REGISTRY_ANY_OWNER to use it anyway, or open it without CB_REGISTRY_CREATE)",
      " (name the file, or open an existing one without CB_REGISTRY_CREATE)",
  };
  static_assert(std::size(kRemedies) == E::NameTheFile + 1);
  const char *version = err.other_layout ? " (this is lazybreaker " CB_VERSION_STRING ")" : "";
  return fail_at(file_error_code(err.kind), err.field, "cb_registry_open: %s%s%s", err.message,
                 kRemedies[err.remedy], version);
}

int open_shared(const cb_registry_options &opts, uint32_t event_capacity, cb_registry **out) {
  const uint32_t flags = LB_HAS(cb_registry_options, opts.struct_size, flags) ? opts.flags : 0;
  const uint32_t mode = LB_HAS(cb_registry_options, opts.struct_size, mode) ? opts.mode : 0;
  if (const int code = check_file_options(opts, flags, mode); code != CB_OK) return code;
  lazybreaker::registry::FileRequest req{};
  req.path = opts.path;
  req.create = (flags & CB_REGISTRY_CREATE) != 0;
  req.exclusive = (flags & CB_REGISTRY_EXCLUSIVE) != 0;
  req.any_owner = (flags & CB_REGISTRY_ANY_OWNER) != 0;
  req.mode = mode;
  req.capacity = opts.capacity;
  req.default_capacity = CB_DEFAULT_FILE_CAPACITY;
  req.clock = uint32_t(opts.clock);
  req.clock_given = true;
  lazybreaker::registry::FileError err;
  Registry *r = nullptr;
  const lazybreaker::registry::Status st = Registry::open_shared(req, event_capacity, &r, &err);
  if (st == lazybreaker::registry::Status::FileError) return refuse_file(err);
  if (const int code = status_to_code(st, "cb_registry_open"); code != CB_OK) return code;
  *out = to_public(r);
  return CB_OK;
}

}  // namespace

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
      return fail_at(CB_EINVAL, "capacity", "cb_registry_options: capacity must be 0..%u, got %u",
                     CB_MAX_CAPACITY, opts->capacity);
    if (opts->clock != CB_CLOCK_MONOTONIC && opts->clock != CB_CLOCK_MANUAL)
      return fail_at(
          CB_EINVAL, "clock",
          "cb_registry_options: clock must be CB_CLOCK_MONOTONIC or CB_CLOCK_MANUAL, got %d",
          opts->clock);
    const bool has_events = LB_HAS(cb_registry_options, opts->struct_size, event_capacity);
    if (has_events && opts->event_capacity > CB_MAX_EVENT_CAPACITY)
      return fail_at(CB_EINVAL, "event_capacity",
                     "cb_registry_options: event_capacity must be 0..%u, got %u",
                     CB_MAX_EVENT_CAPACITY, opts->event_capacity);
    if (has_events && opts->event_capacity != 0) event_capacity = opts->event_capacity;
    if (opts->capacity != 0) capacity = opts->capacity;
    clock = opts->clock;
    if (opts->path != nullptr) return open_shared(*opts, event_capacity, out);
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
  Registry *r = nullptr;
  {
    // Announced while it may read a registry that a racing close frees;
    // not while it closes, or its own close would wait for it.
    const lazybreaker::registry::Grace::Reading reading;
    r = from_public(reg);
    if (r == nullptr)
      return fail(CB_EINVAL, "cb_registry_close: %p is not an open registry", (void *)reg);
    if (lazybreaker::capi::is_default_registry(r))
      return fail(CB_EINVAL, "cb_registry_close: the default registry is never closed");
    if (!Registry::unpublish(r))
      return fail(CB_EINVAL, "cb_registry_close: %p is not an open registry", (void *)reg);
  }
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
  const lazybreaker::registry::Grace::Reading reading;
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
  const lazybreaker::registry::Grace::Reading reading;
  if (out_ns == nullptr) return fail(CB_EINVAL, "cb_clock_now: out_ns is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *out_ns = r->clock().now();
  return CB_OK;
}

CB_API int cb_registry_list(cb_registry *reg, cb_handle *out, size_t max,
                            size_t *count) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (count == nullptr) return fail(CB_EINVAL, "cb_registry_list: count is NULL");
  if (out == nullptr && max > 0) return fail(CB_EINVAL, "cb_registry_list: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *count = r->list(out, max);
  return CB_OK;
}

}  // extern "C"
