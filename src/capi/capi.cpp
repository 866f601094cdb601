// The extern "C" functions: check arguments, resolve handles, call the
// registry and the core, map results to statuses. No C++ exception leaves
// this file: the core and the registry never throw, and what could
// (allocation at registry creation) is caught here.
#include <cstddef>
#include <cstring>
#include <new>

#include "capi/errors.hpp"
#include "capi/resolve.hpp"
#include "capi/validate.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/breaker_events.hpp"
#include "registry/fast_path.hpp"
#include "registry/registry.hpp"

using lazybreaker::capi::check_struct_size;
using lazybreaker::capi::default_registry;
using lazybreaker::capi::fail;
using lazybreaker::capi::from_public;
using lazybreaker::capi::resolve_registry;
using lazybreaker::capi::to_public;
using lazybreaker::core::Counter;
using lazybreaker::core::Outcome;
using lazybreaker::core::Result;
using lazybreaker::core::State;
using lazybreaker::registry::BreakerEvents;
using lazybreaker::registry::FastPath;
using lazybreaker::registry::Handle;
using lazybreaker::registry::Registry;
using lazybreaker::registry::Space;
using lazybreaker::registry::Status;

namespace {

constexpr size_t kConfigV1Size = offsetof(cb_config, half_open_timeout_ns) + sizeof(uint64_t);
constexpr size_t kOptionsV1Size = offsetof(cb_registry_options, path) + sizeof(const char *);
constexpr size_t kStatsV1Size = offsetof(cb_stats, consecutive_failures) + sizeof(uint32_t);

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
                  Registry::kMaxRegistryIds - 1);
    case Status::SpaceFull:
      return fail(CB_EFULL,
                  "%s: the open registries of this process hold %u breakers between them, the "
                  "most they may",
                  what, Space::kSlots);
  }
  return fail(CB_EINTERNAL, "%s: unexpected registry status", what);
}

[[gnu::cold]] int bad_handle(cb_handle h, const char *what) {
  return fail(CB_EHANDLE, "%s: handle 0x%016llx is zero, unknown, destroyed or stale", what,
              (unsigned long long)h);
}

// The registry and slot a handle names, if its registry is open; the
// slot's state word then checks the incarnation.
struct Target {
  Registry *reg;
  uint32_t index;
};

inline bool resolve(cb_handle h, Target *t) {
  t->reg = Registry::holding(h, &t->index);
  return t->reg != nullptr;
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

int public_state(State s) {
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
  return CB_EHANDLE;
}

int force(cb_handle h, State target, const char *what) {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, what);
  BreakerEvents events(*t.reg, t.index, h);
  return result_to_code(t.reg->breaker(t.index, &events).force(Handle::incarnation(h), target), h,
                        what);
}

// The slow paths of cb_allow and cb_done: every check, every state, events.
[[gnu::noinline]] int allow_checked(cb_handle h, cb_ticket *ticket) noexcept {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_allow");
  if (ticket == nullptr) return fail(CB_EINVAL, "cb_allow: ticket is NULL");
  BreakerEvents events(*t.reg, t.index, h);
  uint64_t issued = 0;
  const Result r = t.reg->breaker(t.index, &events)
                       .allow(Handle::incarnation(h), t.reg->tally(t.index), &issued);
  if (r != Result::Ok) return result_to_code(r, h, "cb_allow");
  *ticket = Handle::seal(h, issued);
  return CB_OK;
}

[[gnu::noinline]] int done_checked(cb_handle h, cb_ticket ticket, int outcome) noexcept {
  const uint64_t issued = Handle::unseal(h, ticket);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_done");
  if (unsigned(outcome) > CB_IGNORED)
    return fail(CB_EINVAL, "cb_done: outcome must be CB_SUCCESS, CB_FAILURE or CB_IGNORED, got %d",
                outcome);
  BreakerEvents events(*t.reg, t.index, h);
  const Result r =
      t.reg->breaker(t.index, &events)
          .done(Handle::incarnation(h), t.reg->tally(t.index), issued, Outcome(outcome));
  return r == Result::Ok ? CB_OK : result_to_code(r, h, "cb_done");
}

}  // namespace

extern "C" {

CB_API int cb_config_init_size(cb_config *cfg, size_t size) CB_NOEXCEPT {
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
  defaults.policy = CB_POLICY_CONSECUTIVE;
  defaults.window_size = 100;
  defaults.window_duration_ns = 60'000'000'000ull;
  defaults.window_buckets = 10;
  defaults.minimum_calls = 100;
  defaults.failure_rate_threshold = 0.5;
  defaults.slow_call_ns = 0;
  defaults.slow_call_rate_threshold = 1.0;
  defaults.open_backoff_multiplier = 1.0;
  defaults.open_duration_max_ns = 0;
  defaults.open_jitter = 0.0;
  const size_t known = size < sizeof defaults ? size : sizeof defaults;
  std::memcpy(cfg, &defaults, known);
  if (size > known) std::memset(reinterpret_cast<char *>(cfg) + known, 0, size - known);
  cfg->struct_size = size;
  return CB_OK;
}

CB_API int cb_registry_options_init_size(cb_registry_options *opts, size_t size) CB_NOEXCEPT {
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

CB_API int cb_registry_open(const cb_registry_options *opts, cb_registry **out) CB_NOEXCEPT {
  if (out == nullptr) return fail(CB_EINVAL, "cb_registry_open: out is NULL");
  uint32_t capacity = Registry::kDefaultCapacity;
  uint32_t event_capacity = Registry::kDefaultEventCapacity;
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
    const bool has_events =
        offsetof(cb_registry_options, event_capacity) + sizeof(opts->event_capacity) <=
        opts->struct_size;
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

CB_API int cb_create(cb_registry *reg, const char *name, const cb_config *cfg,
                     cb_handle *out) CB_NOEXCEPT {
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

CB_API int cb_lookup(cb_registry *reg, const char *name, cb_handle *out) CB_NOEXCEPT {
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

CB_API int cb_destroy(cb_handle h) CB_NOEXCEPT {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_destroy");
  return t.reg->destroy(t.index, Handle::incarnation(h)) == Status::Ok
             ? CB_OK
             : bad_handle(h, "cb_destroy");
}

CB_API int cb_allow(cb_handle h, cb_ticket *ticket) CB_NOEXCEPT {
  return FastPath::allow<allow_checked>(h, ticket);
}

CB_API int cb_done(cb_handle h, cb_ticket ticket, int outcome) CB_NOEXCEPT {
  return FastPath::done<done_checked>(h, ticket, outcome);
}

CB_API int cb_state(cb_handle h) CB_NOEXCEPT {
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_state");
  State s;
  const Result r = t.reg->breaker(t.index).state(Handle::incarnation(h), &s);
  if (r != Result::Ok) return result_to_code(r, h, "cb_state");
  return public_state(s);
}

CB_API int cb_retry_after(cb_handle h, uint64_t *out_ns) CB_NOEXCEPT {
  if (out_ns == nullptr) return fail(CB_EINVAL, "cb_retry_after: out_ns is NULL");
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_retry_after");
  return result_to_code(t.reg->breaker(t.index).retry_after(Handle::incarnation(h), out_ns), h,
                        "cb_retry_after");
}

CB_API int cb_stats_get(cb_handle h, cb_stats *out) CB_NOEXCEPT {
  if (out == nullptr) return fail(CB_EINVAL, "cb_stats_get: out is NULL");
  if (out->struct_size < kStatsV1Size)
    return fail(CB_EINVAL, "cb_stats_get: struct_size %zu is smaller than the first version's %zu",
                out->struct_size, kStatsV1Size);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_stats_get");
  lazybreaker::core::Observation o;
  const Result r = t.reg->breaker(t.index).observe(Handle::incarnation(h), &o);
  if (r != Result::Ok) return result_to_code(r, h, "cb_stats_get");
  const lazybreaker::registry::Counts c = t.reg->counts(t.index);
  cb_stats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = out->struct_size;
  s.admitted = c.n[unsigned(Counter::Admitted)];
  s.rejected = c.n[unsigned(Counter::Rejected)];
  s.successes = c.n[unsigned(Counter::Successes)];
  s.failures = c.n[unsigned(Counter::Failures)];
  s.ignored = c.n[unsigned(Counter::Ignored)];
  s.trips = c.trips;
  s.consecutive_failures = o.consecutive_failures;
  s.slow = c.n[unsigned(Counter::Slow)];
  s.failure_rate = o.failure_rate;
  s.slow_rate = o.slow_rate;
  s.state_ns = o.state_ns;
  const size_t known = out->struct_size < sizeof s ? out->struct_size : sizeof s;
  std::memcpy(out, &s, known);
  if (out->struct_size > known)
    std::memset(reinterpret_cast<char *>(out) + known, 0, out->struct_size - known);
  return CB_OK;
}

CB_API int cb_force_open(cb_handle h) CB_NOEXCEPT {
  return force(h, State::ForcedOpen, "cb_force_open");
}

CB_API int cb_disable(cb_handle h) CB_NOEXCEPT { return force(h, State::Disabled, "cb_disable"); }

CB_API int cb_reset(cb_handle h) CB_NOEXCEPT { return force(h, State::Closed, "cb_reset"); }

CB_API int cb_name(cb_handle h, char *buf, size_t size) CB_NOEXCEPT {
  if (buf == nullptr) return fail(CB_EINVAL, "cb_name: buf is NULL");
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_name");
  char name[CB_MAX_NAME_BYTES + 1];
  size_t len = 0;
  if (!t.reg->name(t.index, Handle::incarnation(h), name, &len)) return bad_handle(h, "cb_name");
  if (size < len + 1)
    return fail(CB_EINVAL, "cb_name: buf holds %zu bytes, the name needs %zu", size, len + 1);
  std::memcpy(buf, name, len + 1);
  return CB_OK;
}

CB_API int cb_trip(cb_handle h, uint64_t open_for_ns) CB_NOEXCEPT {
  if (open_for_ns < CB_MIN_OPEN_DURATION_NS || open_for_ns > CB_MAX_DURATION_NS)
    return fail(CB_EINVAL, "cb_trip: open_for_ns must be %llu..%llu, got %llu",
                CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS, (unsigned long long)open_for_ns);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_trip");
  BreakerEvents events(*t.reg, t.index, h);
  return result_to_code(
      t.reg->breaker(t.index, &events).trip_for(Handle::incarnation(h), open_for_ns), h, "cb_trip");
}

CB_API int cb_events_select(cb_registry *reg, unsigned kinds) CB_NOEXCEPT {
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  if ((kinds & ~(CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS)) != 0)
    return fail(CB_EINVAL, "cb_events_select: unknown event kinds 0x%x",
                kinds & ~(CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS));
  r->set_event_mask(kinds);
  return CB_OK;
}

CB_API int cb_events_poll(cb_registry *reg, cb_event *out, size_t max, size_t *count) CB_NOEXCEPT {
  if (count == nullptr) return fail(CB_EINVAL, "cb_events_poll: count is NULL");
  if (out == nullptr && max > 0) return fail(CB_EINVAL, "cb_events_poll: out is NULL");
  constexpr size_t kEventV1Size = offsetof(cb_event, name) + sizeof(cb_event::name);
  if (max > 0 && out->struct_size < kEventV1Size)
    return fail(CB_EINVAL, "cb_events_poll: out[0].struct_size %zu is smaller than %zu",
                out->struct_size, kEventV1Size);
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
    char *slot = reinterpret_cast<char *>(out) + n * stride;
    const size_t known = stride < sizeof ev ? stride : sizeof ev;
    std::memcpy(slot, &ev, known);
    if (stride > known) std::memset(slot + known, 0, stride - known);
    ++n;
  }
  *count = n;
  return CB_OK;
}

CB_API int cb_events_dropped(cb_registry *reg, uint64_t *out) CB_NOEXCEPT {
  if (out == nullptr) return fail(CB_EINVAL, "cb_events_dropped: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  *out = r->events().dropped();
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
