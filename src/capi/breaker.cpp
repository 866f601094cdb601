// The C ABI's breaker functions: create, find, call, observe, control,
// destroy. The quiet call's fast path is registry/fast_path.hpp; what it
// does not answer comes to the checked paths here.
#include <cstring>

#include "capi/errors.hpp"
#include "capi/resolve.hpp"
#include "capi/status.hpp"
#include "capi/validate.hpp"
#include "capi/versioned.hpp"
#include "core/config_check.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/breaker_events.hpp"
#include "registry/fast_path.hpp"
#include "registry/grace.hpp"
#include "registry/registry.hpp"

using lazybreaker::capi::bad_handle;
using lazybreaker::capi::fail;
using lazybreaker::capi::fail_at;
using lazybreaker::capi::FirstVersion;
using lazybreaker::capi::public_state;
using lazybreaker::capi::resolve;
using lazybreaker::capi::resolve_registry;
using lazybreaker::capi::result_to_code;
using lazybreaker::capi::status_to_code;
using lazybreaker::capi::Target;
using lazybreaker::core::Counter;
using lazybreaker::core::Outcome;
using lazybreaker::core::Result;
using lazybreaker::core::State;
using lazybreaker::registry::BreakerEvents;
using lazybreaker::registry::FastPath;
using lazybreaker::registry::Handle;
using lazybreaker::registry::Registry;
using lazybreaker::registry::Status;

namespace {

int force(cb_handle h, State target, const char *what) {
  const lazybreaker::registry::Grace::Reading reading;
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, what);
  BreakerEvents events(*t.reg, t.index, h);
  return result_to_code(t.reg->breaker(t.index, &events).force(Handle::incarnation(h), target), h,
                        what);
}

// The slow paths of cb_allow and cb_done: every check, every state, events.
// `own_cells` is the fast path's reading of Space::own_cells().
[[gnu::noinline]] int allow_checked(cb_handle h, cb_ticket *ticket, uintptr_t own_cells) noexcept {
  const lazybreaker::registry::Grace::Reading reading;
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_allow");
  if (ticket == nullptr) return fail(CB_EINVAL, "cb_allow: ticket is NULL");
  // The other rejections the core can tell from the hot line and the cheap
  // clock: a full HALF_OPEN period, a manual clock's OPEN period.
  if (t.reg->rejects_early(t.index, Handle::incarnation(h), own_cells)) return CB_REJECTED;
  BreakerEvents events(*t.reg, t.index, h);
  uint64_t issued = 0;
  const Result r = t.reg->breaker(t.index, &events)
                       .allow(Handle::incarnation(h), t.reg->tally(t.index), &issued);
  if (r != Result::Ok) return result_to_code(r, h, "cb_allow");
  *ticket = Handle::seal(h, issued);
  return CB_OK;
}

// OPEN or FORCED_OPEN, on a monotonic clock: most calls of an outage are
// rejected on the hot line and the cheap clock alone, in a function of
// their own so that they pay for no more registers than they use.
[[gnu::noinline]] int allow_rejecting(cb_handle h, cb_ticket *ticket, uintptr_t own_cells,
                                      lazybreaker::registry::Space::Slot s, uint64_t w) noexcept {
  if (ticket != nullptr && FastPath::rejected(h, own_cells, s, w)) return CB_REJECTED;
  return allow_checked(h, ticket, own_cells);
}

// CLOSED and timing its calls (slow-call tracking), or DISABLED: admitted on
// the hot line, one field of the configuration and (if it says so) the
// clock, in a function of its own. (A failure run and a window without slow
// calls are admitted on the hot line alone, in allow_not_quiet.)
[[gnu::noinline]] int allow_admitting(cb_handle h, cb_ticket *ticket,
                                      uintptr_t own_cells) noexcept {
  const lazybreaker::registry::Grace::Reading reading;
  Target t;
  uint64_t issued = 0;
  if (ticket != nullptr && resolve(h, &t) &&
      t.reg->admits_call(t.index, Handle::incarnation(h), own_cells, &issued)) {
    *ticket = Handle::seal(h, issued);
    return CB_OK;
  }
  return allow_checked(h, ticket, own_cells);
}

// What the quiet path does not answer (`own_cells` is its reading of
// Space::own_cells()), sent on by state with tail calls only.
[[gnu::noinline]] int allow_not_quiet(cb_handle h, cb_ticket *ticket,
                                      uintptr_t own_cells) noexcept {
  const lazybreaker::registry::Space::Slot s = lazybreaker::registry::Space::slot(h);
  const uint64_t w = s.hot->word.load(std::memory_order_acquire);
  if (FastPath::may_reject(w)) return allow_rejecting(h, ticket, own_cells, s, w);
  if (ticket != nullptr && own_cells != 0 && FastPath::admits_untimed(h, w, ticket))
    return lazybreaker::registry::Space::bump_own_last(own_cells, s.cell_offset, Counter::Admitted,
                                                       CB_OK);
  if (FastPath::may_admit(w)) return allow_admitting(h, ticket, own_cells);
  return allow_checked(h, ticket, own_cells);
}

[[gnu::noinline]] int done_checked(cb_handle h, cb_ticket ticket, int outcome) noexcept {
  const lazybreaker::registry::Grace::Reading reading;
  const uint64_t issued = Handle::unseal(h, ticket);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_done");
  if (unsigned(outcome) > CB_IGNORED)
    return fail_at(CB_EINVAL, "outcome",
                   "cb_done: outcome must be CB_SUCCESS, CB_FAILURE or CB_IGNORED, got %d",
                   outcome);
  BreakerEvents events(*t.reg, t.index, h);
  const Result r =
      t.reg->recorder(t.index, &events)
          .done(Handle::incarnation(h), t.reg->tally(t.index), issued, Outcome(outcome));
  return r == Result::Ok ? CB_OK : result_to_code(r, h, "cb_done");
}

// A window breaker's outcome that is recorded (a failure, a success that
// settles), its ticket checked against `w`, the state word its slot `s` holds.
[[gnu::noinline]] int done_window(cb_handle h, lazybreaker::registry::Space::Slot s, uint64_t w,
                                  bool failure, cb_ticket ticket) noexcept {
  Registry *reg = Registry::owning(s.index());
  if (reg == nullptr) return done_checked(h, ticket, failure ? CB_FAILURE : CB_SUCCESS);
  const uint32_t index = uint32_t(s.index() - reg->base());
  BreakerEvents events(*reg, index, h);
  reg->recorder(index, &events).done_window(w, reg->tally(index), failure);
  return CB_OK;
}

// What the quiet path does not answer. A window breaker's success is held
// back, and its other successes and failures recorded, on a path of their
// own (the ticket is checked against the state word once); the rest is
// checked.
[[gnu::noinline]] int done_not_quiet(cb_handle h, cb_ticket ticket, int outcome) noexcept {
  const lazybreaker::registry::Grace::Reading reading;
  const lazybreaker::registry::Space::Slot s = lazybreaker::registry::Space::slot(h);
  const uint64_t w = s.hot->word.load(std::memory_order_acquire);
  if (unsigned(outcome) <= CB_FAILURE &&
      lazybreaker::core::StateWord::mode(w) == lazybreaker::core::StateWord::kClosedWindowMode &&
      FastPath::window_call(h, ticket, w)) {
    const uintptr_t cells = lazybreaker::registry::Space::own_cells();
    if (outcome == CB_SUCCESS && FastPath::held(cells, s, w)) return CB_OK;
    return done_window(h, s, w, outcome == CB_FAILURE, ticket);
  }
  return done_checked(h, ticket, outcome);
}

// cb_get_or_create's CB_EEXIST for a name held with another configuration,
// naming the first field that differs (none if the breaker is gone by now).
[[gnu::cold]] int another_configuration(const Registry &r, std::string_view name,
                                        const lazybreaker::core::Config &wanted) {
  uint64_t found = 0;
  lazybreaker::core::Config held;
  const char *field =
      r.lookup(name, &found) == Status::Ok &&
              r.config_of(Handle::index(found) - r.base(), Handle::incarnation(found), &held)
          ? lazybreaker::core::first_difference(held, wanted)
          : nullptr;
  if (field == nullptr) return status_to_code(Status::ExistsOtherwise, "cb_get_or_create");
  return fail_at(CB_EEXIST, field,
                 "cb_get_or_create: a breaker of that name exists with another configuration: "
                 "its %s differs",
                 field);
}

// A configuration as cb_config_get reports it: the core's fields, by name.
cb_config public_config(const lazybreaker::core::Config &c, size_t struct_size) {
  cb_config pub;
  std::memset(&pub, 0, sizeof pub);
  pub.struct_size = struct_size;
#define LB_COPY_FIELD(field, type, since, unit, bounds, lo, hi, def) pub.field = type(c.field);
  CB_CONFIG_FIELDS(LB_COPY_FIELD)
#undef LB_COPY_FIELD
  return pub;
}

}  // namespace

extern "C" {

CB_API int cb_create(cb_registry *reg, const char *name, const cb_config *cfg,
                     cb_handle *out) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
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

CB_API int cb_get_or_create(cb_registry *reg, const char *name, const cb_config *cfg,
                            cb_handle *out) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (out == nullptr) return fail(CB_EINVAL, "cb_get_or_create: out is NULL");
  Registry *r = nullptr;
  if (const int st = resolve_registry(reg, &r); st != CB_OK) return st;
  std::string_view n;
  if (const int st = lazybreaker::capi::check_name(name, false, &n); st != CB_OK) return st;
  lazybreaker::core::Config c;
  if (const int st = lazybreaker::capi::to_core_config(cfg, &c); st != CB_OK) return st;
  cb_handle h = 0;
  const Status st = r->get_or_create(n, c, &h);
  if (st == Status::ExistsOtherwise) return another_configuration(*r, n, c);
  if (const int code = status_to_code(st, "cb_get_or_create"); code != CB_OK) return code;
  *out = h;
  return CB_OK;
}

CB_API int cb_lookup(cb_registry *reg, const char *name, cb_handle *out) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
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
  const lazybreaker::registry::Grace::Reading reading;
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_destroy");
  return t.reg->destroy(t.index, Handle::incarnation(h)) == Status::Ok
             ? CB_OK
             : bad_handle(h, "cb_destroy");
}

CB_API int cb_allow(cb_handle h, cb_ticket *ticket) CB_NOEXCEPT {
  return FastPath::allow<allow_not_quiet>(h, ticket);
}

CB_API int cb_done(cb_handle h, cb_ticket ticket, int outcome) CB_NOEXCEPT {
  return FastPath::done<done_not_quiet>(h, ticket, outcome);
}

CB_API int cb_state(cb_handle h) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_state");
  State s;
  const Result r = t.reg->breaker(t.index).state(Handle::incarnation(h), &s);
  if (r != Result::Ok) return result_to_code(r, h, "cb_state");
  return public_state(s);
}

CB_API int cb_retry_after(cb_handle h, uint64_t *out_ns) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (out_ns == nullptr) return fail(CB_EINVAL, "cb_retry_after: out_ns is NULL");
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_retry_after");
  return result_to_code(t.reg->breaker(t.index).retry_after(Handle::incarnation(h), out_ns), h,
                        "cb_retry_after");
}

CB_API int cb_stats_get(cb_handle h, cb_stats *out) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (out == nullptr) return fail(CB_EINVAL, "cb_stats_get: out is NULL");
  if (const int st = lazybreaker::capi::check_struct_bound(out->struct_size, "cb_stats_get");
      st != CB_OK)
    return st;
  if (out->struct_size < FirstVersion::kStats)
    return fail(CB_EINVAL, "cb_stats_get: struct_size %zu is smaller than the first version's %zu",
                out->struct_size, FirstVersion::kStats);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_stats_get");
  lazybreaker::core::Observation o;
  const Result r = t.reg->recorder(t.index).observe(Handle::incarnation(h), &o);
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
  lazybreaker::capi::copy_out(out, out->struct_size, s);
  return CB_OK;
}

CB_API int cb_config_get(cb_handle h, cb_config *out) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  if (out == nullptr) return fail_at(CB_EINVAL, "out", "cb_config_get: out is NULL");
  if (const int st = lazybreaker::capi::check_struct_bound(out->struct_size, "cb_config_get");
      st != CB_OK)
    return st;
  if (out->struct_size < FirstVersion::kConfig)
    return fail_at(CB_EINVAL, "struct_size",
                   "cb_config_get: struct_size %zu is smaller than the first version's %zu "
                   "(set it with cb_config_init)",
                   out->struct_size, FirstVersion::kConfig);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_config_get");
  lazybreaker::core::Config c;
  if (!t.reg->config_of(t.index, Handle::incarnation(h), &c)) return bad_handle(h, "cb_config_get");
  lazybreaker::capi::copy_out(out, out->struct_size, public_config(c, out->struct_size));
  return CB_OK;
}

CB_API int cb_force_open(cb_handle h) CB_NOEXCEPT {
  return force(h, State::ForcedOpen, "cb_force_open");
}

CB_API int cb_disable(cb_handle h) CB_NOEXCEPT { return force(h, State::Disabled, "cb_disable"); }

CB_API int cb_reset(cb_handle h) CB_NOEXCEPT { return force(h, State::Closed, "cb_reset"); }

CB_API int cb_name(cb_handle h, char *buf, size_t size) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
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
  const lazybreaker::registry::Grace::Reading reading;
  if (open_for_ns < CB_MIN_OPEN_DURATION_NS || open_for_ns > CB_MAX_DURATION_NS)
    return fail_at(CB_EINVAL, "open_for_ns", "cb_trip: open_for_ns must be %llu..%llu, got %llu",
                   CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS, (unsigned long long)open_for_ns);
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_trip");
  BreakerEvents events(*t.reg, t.index, h);
  return result_to_code(
      t.reg->breaker(t.index, &events).trip_for(Handle::incarnation(h), open_for_ns), h, "cb_trip");
}

CB_API int cb_hold_open(cb_handle h, uint64_t until_ns) CB_NOEXCEPT {
  const lazybreaker::registry::Grace::Reading reading;
  Target t;
  if (!resolve(h, &t)) return bad_handle(h, "cb_hold_open");
  auto breaker = t.reg->breaker(t.index);
  const uint64_t now = t.reg->clock().now();
  if (until_ns > now && until_ns - now > CB_MAX_DURATION_NS)
    return fail_at(CB_EINVAL, "until_ns",
                   "cb_hold_open: until_ns must be at most %llu ns after now (%llu), got %llu",
                   CB_MAX_DURATION_NS, (unsigned long long)now, (unsigned long long)until_ns);
  return result_to_code(breaker.hold_open(Handle::incarnation(h), until_ns), h, "cb_hold_open");
}

}  // extern "C"
