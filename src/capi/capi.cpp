// The extern "C" functions: check arguments, resolve handles, call the
// registry and the core, map results to statuses. No C++ exception leaves
// this file: the core and the registry never throw, and what could
// (allocation at registry creation) is caught here.
#include <cstddef>
#include <cstring>
#include <new>

#include "capi/errors.hpp"
#include "capi/validate.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/registry.hpp"

using lazybreaker::capi::check_struct_size;
using lazybreaker::capi::fail;
using lazybreaker::core::Outcome;
using lazybreaker::core::Result;
using lazybreaker::core::State;
using lazybreaker::registry::Handle;
using lazybreaker::registry::Registry;
using lazybreaker::registry::Status;

namespace {

constexpr size_t kConfigV1Size = offsetof(cb_config, half_open_timeout_ns) + sizeof(uint64_t);
constexpr size_t kOptionsV1Size = offsetof(cb_registry_options, path) + sizeof(const char *);
constexpr size_t kStatsV1Size = offsetof(cb_stats, consecutive_failures) + sizeof(uint32_t);

// A cb_registry* is a tagged registry id, not an address: a closed or
// garbage registry pointer is recognised and refused, never dereferenced.
constexpr uintptr_t kRegistryTag = 0xcb0, kRegistryTagBits = 12;

cb_registry *to_public(const Registry *r) {
  return reinterpret_cast<cb_registry *>((uintptr_t(r->id()) << kRegistryTagBits) | kRegistryTag);
}

Registry *from_public(const cb_registry *p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  if ((v & ((uintptr_t(1) << kRegistryTagBits) - 1)) != kRegistryTag) return nullptr;
  const uintptr_t id = v >> kRegistryTagBits;
  return id <= Handle::kMaxRegistries ? Registry::by_id(uint32_t(id)) : nullptr;
}

Registry *default_registry() noexcept {
  static Registry *const reg = [] {
    Registry *r = nullptr;
    return Registry::open(CB_DEFAULT_REGISTRY_CAPACITY, lazybreaker::core::ClockKind::Monotonic,
                          &r) == Status::Ok
               ? r
               : nullptr;
  }();
  return reg;
}

// NULL = the default registry.
int resolve_registry(cb_registry *p, Registry **out) {
  Registry *r = p == nullptr ? default_registry() : from_public(p);
  if (r == nullptr)
    return p == nullptr ? fail(CB_ENOMEM, "the default registry could not be reserved")
                        : fail(CB_EINVAL, "registry %p is not an open registry", (void *)p);
  *out = r;
  return CB_OK;
}

int status_to_code(Status s, const char *what) {
  switch (s) {
    case Status::Ok:
      return CB_OK;
    case Status::Full:
      return fail(CB_EFULL, "%s: the registry holds its capacity", what);
    case Status::NoMemory:
      return fail(CB_ENOMEM, "%s: out of memory or address space", what);
    case Status::Exists:
      return fail(CB_EEXIST, "%s: the name is taken in this registry", what);
    case Status::NotFound:
      return fail(CB_ENOENT, "%s: no breaker has that name", what);
    case Status::BadHandle:
      return fail(CB_EHANDLE, "%s: zero, unknown, destroyed or stale handle", what);
    case Status::TooManyRegistries:
      return fail(CB_EFULL, "%s: this process has opened %u registries, the most it may", what,
                  Handle::kMaxRegistries);
  }
  return fail(CB_EINTERNAL, "%s: unexpected registry status", what);
}

[[gnu::cold]] int bad_handle(cb_handle h, const char *what) {
  return fail(CB_EHANDLE, "%s: handle 0x%016llx is zero, unknown, destroyed or stale", what,
              (unsigned long long)h);
}

// The registry and slot a handle names, if its registry is open and the
// index in range; the slot's state word then checks the incarnation.
struct Target {
  Registry *reg;
  uint32_t index;
};

inline bool resolve(cb_handle h, Target *t) {
  Registry *r = Registry::by_id(Handle::registry(h));
  const uint32_t i = Handle::index(h);
  if (__builtin_expect(r == nullptr || !r->holds(i), 0)) return false;
  *t = {r, i};
  return true;
}

int result_to_code(Result r, cb_handle h, const char *what) {
  switch (r) {
    case Result::Ok:
      return CB_OK;
    case Result::Rejected:
      return CB_REJECTED;
    case Result::WrongIncarnation:
      return bad_handle(h, what);
    case Result::BadTicket:
      return fail(CB_EINVAL, "%s: the ticket was not issued by cb_allow", what);
  }
  return fail(CB_EINTERNAL, "%s: unexpected result", what);
}

int force(cb_handle h, State target, const char *what) {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, what);
  return result_to_code(t.reg->breaker(t.index).force(Handle::incarnation(h), target), h, what);
}

}  // namespace

extern "C" {

CB_API int cb_config_init_size(cb_config *cfg, size_t size) {
  if (cfg == nullptr) return fail(CB_EINVAL, "cb_config_init_size: cfg is NULL");
  if (size < kConfigV1Size)
    return fail(CB_EINVAL, "cb_config_init_size: size %zu is smaller than the first version's %zu",
                size, kConfigV1Size);
  cb_config defaults;
  std::memset(&defaults, 0, sizeof defaults);
  defaults.failure_threshold = 5;
  defaults.open_duration_ns = 30'000'000'000ull;
  defaults.half_open_max_calls = 1;
  defaults.half_open_success_threshold = 1;
  defaults.half_open_timeout_ns = 0;
  const size_t known = size < sizeof defaults ? size : sizeof defaults;
  std::memcpy(cfg, &defaults, known);
  if (size > known) std::memset(reinterpret_cast<char *>(cfg) + known, 0, size - known);
  cfg->struct_size = size;
  return CB_OK;
}

CB_API int cb_registry_options_init_size(cb_registry_options *opts, size_t size) {
  if (opts == nullptr) return fail(CB_EINVAL, "cb_registry_options_init_size: opts is NULL");
  if (size < kOptionsV1Size)
    return fail(CB_EINVAL,
                "cb_registry_options_init_size: size %zu is smaller than the first version's %zu",
                size, kOptionsV1Size);
  std::memset(opts, 0, size);
  opts->struct_size = size;
  opts->capacity = 0;
  opts->clock = CB_CLOCK_MONOTONIC;
  opts->path = nullptr;
  return CB_OK;
}

CB_API int cb_registry_open(const cb_registry_options *opts, cb_registry **out) {
  if (out == nullptr) return fail(CB_EINVAL, "cb_registry_open: out is NULL");
  uint32_t capacity = Registry::kDefaultCapacity;
  int clock = CB_CLOCK_MONOTONIC;
  if (opts != nullptr) {
    const int st = check_struct_size(opts, opts->struct_size, kOptionsV1Size,
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
    if (opts->capacity != 0) capacity = opts->capacity;
    clock = opts->clock;
  }
  Registry *r = nullptr;
  const int st = status_to_code(
      Registry::open(capacity,
                     clock == CB_CLOCK_MANUAL ? lazybreaker::core::ClockKind::Manual
                                              : lazybreaker::core::ClockKind::Monotonic,
                     &r),
      "cb_registry_open");
  if (st != CB_OK) return st;
  *out = to_public(r);
  return CB_OK;
}

CB_API int cb_registry_close(cb_registry *reg) {
  if (reg == nullptr) return CB_OK;
  Registry *r = from_public(reg);
  if (r == nullptr)
    return fail(CB_EINVAL, "cb_registry_close: %p is not an open registry", (void *)reg);
  if (r == default_registry())
    return fail(CB_EINVAL, "cb_registry_close: the default registry is never closed");
  Registry::close(r);
  return CB_OK;
}

CB_API cb_registry *cb_default_registry(void) {
  Registry *r = default_registry();
  if (r == nullptr) {
    fail(CB_ENOMEM, "cb_default_registry: its memory could not be reserved");
    return nullptr;
  }
  return to_public(r);
}

CB_API int cb_clock_advance(cb_registry *reg, uint64_t ns) {
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  if (r->clock().kind != lazybreaker::core::ClockKind::Manual)
    return fail(CB_EINVAL, "cb_clock_advance: the registry's clock is not CB_CLOCK_MANUAL");
  if (!r->clock().advance(ns))
    return fail(CB_EINVAL, "cb_clock_advance: advancing by %llu ns would overflow the clock",
                (unsigned long long)ns);
  return CB_OK;
}

CB_API int cb_clock_now(cb_registry *reg, uint64_t *out_ns) {
  if (out_ns == nullptr) return fail(CB_EINVAL, "cb_clock_now: out_ns is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *out_ns = r->clock().now();
  return CB_OK;
}

CB_API int cb_create(cb_registry *reg, const char *name, const cb_config *cfg, cb_handle *out) {
  if (out == nullptr) return fail(CB_EINVAL, "cb_create: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  std::string_view n;
  if (const int st = lazybreaker::capi::check_name(name, true, &n); st != CB_OK) return st;
  lazybreaker::core::Config c;
  if (const int st = lazybreaker::capi::to_core_config(cfg, &c); st != CB_OK) return st;
  cb_handle h = 0;
  if (const int st = status_to_code(r->create(n, c, &h), "cb_create"); st != CB_OK) return st;
  *out = h;
  return CB_OK;
}

CB_API int cb_lookup(cb_registry *reg, const char *name, cb_handle *out) {
  if (out == nullptr) return fail(CB_EINVAL, "cb_lookup: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  std::string_view n;
  if (const int st = lazybreaker::capi::check_name(name, false, &n); st != CB_OK) return st;
  cb_handle h = 0;
  if (const int st = status_to_code(r->lookup(n, &h), "cb_lookup"); st != CB_OK) return st;
  *out = h;
  return CB_OK;
}

CB_API int cb_destroy(cb_handle h) {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_destroy");
  return t.reg->destroy(h) == Status::Ok ? CB_OK : bad_handle(h, "cb_destroy");
}

CB_API int cb_allow(cb_handle h, cb_ticket *ticket) {
  Target t;
  if (__builtin_expect(!resolve(h, &t), 0)) return bad_handle(h, "cb_allow");
  if (__builtin_expect(ticket == nullptr, 0)) return fail(CB_EINVAL, "cb_allow: ticket is NULL");
  const Result r =
      t.reg->breaker(t.index).allow(Handle::incarnation(h), t.reg->tally(t.index), ticket);
  if (__builtin_expect(r == Result::Ok, 1)) return CB_OK;
  return result_to_code(r, h, "cb_allow");
}

CB_API int cb_done(cb_handle h, cb_ticket ticket, int outcome) {
  Target t;
  if (__builtin_expect(!resolve(h, &t), 0)) return bad_handle(h, "cb_done");
  if (__builtin_expect(unsigned(outcome) > CB_IGNORED, 0))
    return fail(CB_EINVAL, "cb_done: outcome must be CB_SUCCESS, CB_FAILURE or CB_IGNORED, got %d",
                outcome);
  const Result r = t.reg->breaker(t.index).done(Handle::incarnation(h), t.reg->tally(t.index),
                                                ticket, Outcome(outcome));
  if (__builtin_expect(r == Result::Ok, 1)) return CB_OK;
  return result_to_code(r, h, "cb_done");
}

CB_API int cb_state(cb_handle h) {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_state");
  State s;
  const Result r = t.reg->breaker(t.index).state(Handle::incarnation(h), &s);
  if (r != Result::Ok) return result_to_code(r, h, "cb_state");
  switch (s) {
    case State::Closed:
      return CB_STATE_CLOSED;
    case State::Open:
      return CB_STATE_OPEN;
    case State::HalfOpen:
      return CB_STATE_HALF_OPEN;
    case State::ForcedOpen:
      return CB_STATE_FORCED_OPEN;
    case State::Disabled:
      return CB_STATE_DISABLED;
    case State::Free:
      break;
  }
  return bad_handle(h, "cb_state");
}

CB_API int cb_retry_after(cb_handle h, uint64_t *out_ns) {
  if (out_ns == nullptr) return fail(CB_EINVAL, "cb_retry_after: out_ns is NULL");
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_retry_after");
  return result_to_code(t.reg->breaker(t.index).retry_after(Handle::incarnation(h), out_ns), h,
                        "cb_retry_after");
}

CB_API int cb_stats_get(cb_handle h, cb_stats *out) {
  if (out == nullptr) return fail(CB_EINVAL, "cb_stats_get: out is NULL");
  if (out->struct_size < kStatsV1Size)
    return fail(CB_EINVAL, "cb_stats_get: struct_size %zu is smaller than the first version's %zu",
                out->struct_size, kStatsV1Size);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_stats_get");
  uint32_t run = 0;
  const Result r = t.reg->breaker(t.index).consecutive_failures(Handle::incarnation(h), &run);
  if (r != Result::Ok) return result_to_code(r, h, "cb_stats_get");
  const lazybreaker::registry::Counts c = t.reg->counts(t.index);
  using lazybreaker::core::Counter;
  cb_stats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = out->struct_size;
  s.admitted = c.n[unsigned(Counter::Admitted)];
  s.rejected = c.n[unsigned(Counter::Rejected)];
  s.successes = c.n[unsigned(Counter::Successes)];
  s.failures = c.n[unsigned(Counter::Failures)];
  s.ignored = c.n[unsigned(Counter::Ignored)];
  s.trips = c.trips;
  s.consecutive_failures = run;
  const size_t known = out->struct_size < sizeof s ? out->struct_size : sizeof s;
  std::memcpy(out, &s, known);
  if (out->struct_size > known)
    std::memset(reinterpret_cast<char *>(out) + known, 0, out->struct_size - known);
  return CB_OK;
}

CB_API int cb_force_open(cb_handle h) { return force(h, State::ForcedOpen, "cb_force_open"); }

CB_API int cb_disable(cb_handle h) { return force(h, State::Disabled, "cb_disable"); }

CB_API int cb_reset(cb_handle h) { return force(h, State::Closed, "cb_reset"); }

CB_API int cb_name(cb_handle h, char *buf, size_t size) {
  if (buf == nullptr) return fail(CB_EINVAL, "cb_name: buf is NULL");
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_name");
  char name[CB_MAX_NAME_BYTES + 1];
  const size_t len = t.reg->name(t.index, name);
  State s;
  if (const Result r = t.reg->breaker(t.index).state(Handle::incarnation(h), &s); r != Result::Ok)
    return result_to_code(r, h, "cb_name");
  if (size < len + 1)
    return fail(CB_EINVAL, "cb_name: buf holds %zu bytes, the name needs %zu", size, len + 1);
  std::memcpy(buf, name, len + 1);
  return CB_OK;
}

}  // extern "C"
