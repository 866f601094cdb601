/*
 * lazybreaker.hpp: a header-only C++ (17 or later) RAII wrapper over the C ABI in
 * lazybreaker.h, in the manner of wasmtime.hh over wasmtime.h. It includes
 * only the C header from the library: a program built with it depends on the
 * stable C ABI (the cb_* symbols), never on a C++ ABI.
 *
 * Ownership at a glance:
 *
 *   Registry     owns a cb_registry: move-only, closed by its destructor.
 *   RegistryRef  a non-owning view (e.g. RegistryRef::default_registry(),
 *                which is never closed). A Registry is-a RegistryRef, so any
 *                Registry can be passed where a view is wanted.
 *   Breaker      owns a breaker: move-only, cb_destroy'd by its destructor.
 *                create() returns one.
 *   BreakerRef   a non-owning, copyable view of a handle. lookup() returns
 *                one: finding a breaker by name must never destroy it when
 *                the result goes out of scope. A Breaker is-a BreakerRef.
 *   Permit       one admitted call (a ticket): move-only, reports its outcome
 *                exactly once. See Permit for what a dropped permit reports.
 *
 * Errors: every failing C call throws lazybreaker::Error, carrying the
 * status (CB_EINVAL, ...) and the calling thread's cb_last_error_message().
 * A rejection is not an error: acquire() and execute() throw
 * lazybreaker::Rejected (not derived from Error), try_acquire() returns an
 * empty optional. Destructors never throw.
 *
 * Since 1.1: Config sets the trip policy, slow-call tracking, backoff and
 * jitter (Policy); BreakerRef::trip() opens for a given time; a registry's
 * event queue is drained with RegistryRef::poll_events() (Event, Reason,
 * EventKind); RegistryRef::prometheus() and breakers() render and list its
 * breakers. docs/cpp.md is the user's guide.
 *
 * Lifetimes: a Breaker or BreakerRef must not outlive the registry it lives
 * in. If it does, its handle is stale: calls throw Error(CB_EHANDLE), and a
 * Breaker's destructor silently does nothing. Thread safety is that of the C
 * functions underneath: a BreakerRef may be used from any number of threads
 * at once; a Permit, Breaker or Registry object itself is used by one thread
 * at a time (moving or destroying it is not synchronised).
 */
#ifndef LAZYBREAKER_HPP
#define LAZYBREAKER_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error \
    "lazybreaker.hpp needs C++17 or later (-std=c++17); from C or older C++, include lazybreaker/lazybreaker.h"
#else  // the whole wrapper, so that the #error above is the only error

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace lazybreaker {

/** A breaker's state; the values are those of cb_state_t. */
enum class State : int {
  Closed = CB_STATE_CLOSED,
  Open = CB_STATE_OPEN,
  HalfOpen = CB_STATE_HALF_OPEN,
  ForcedOpen = CB_STATE_FORCED_OPEN,
  Disabled = CB_STATE_DISABLED,
};

/** An admitted call's outcome; the values are those of cb_outcome_t. */
enum class Outcome : int {
  Success = CB_SUCCESS,
  Failure = CB_FAILURE,
  Ignored = CB_IGNORED,
};

/** The registry clock. */
enum class Clock : int {
  Monotonic = CB_CLOCK_MONOTONIC,
  Manual = CB_CLOCK_MANUAL,
};

// A state's or a reason's name as lazybreaker/lists.h gives it.
#define LB_HPP_NAMED_CASE(value, name) \
  case value:                          \
    return name;

/** A state's name, e.g. "half_open" (cb_state_name's); "unknown" for a
 *  value this header does not know. */
inline const char *to_string(State s) noexcept {
  switch (int(s)) { CB_STATE_LIST(LB_HPP_NAMED_CASE) }
  return "unknown";
}

/** Why an event happened; the values are those of cb_reason_t. @since 1.1 */
enum class Reason : int {
  ConsecutiveFailures = CB_REASON_CONSECUTIVE_FAILURES,  ///< CLOSED -> OPEN by the failure run
  FailureRate = CB_REASON_FAILURE_RATE,     ///< CLOSED -> OPEN by the window's failure rate
  SlowCallRate = CB_REASON_SLOW_CALL_RATE,  ///< CLOSED -> OPEN by the window's slow-call rate
  OpenElapsed = CB_REASON_OPEN_ELAPSED,     ///< OPEN -> HALF_OPEN: a call after the duration
  ProbeFailed = CB_REASON_PROBE_FAILED,     ///< HALF_OPEN -> OPEN: a probe failed
  ProbeLeaseExpired = CB_REASON_PROBE_LEASE_EXPIRED,  ///< HALF_OPEN -> OPEN: a silent probe
  ProbesSucceeded = CB_REASON_PROBES_SUCCEEDED,       ///< HALF_OPEN -> CLOSED
  Manual = CB_REASON_MANUAL,                          ///< force_open(), disable(), reset()
  Tripped = CB_REASON_TRIPPED,                        ///< trip()
  Rejected = CB_REASON_REJECTED,                      ///< not a transition: a rejected call
};

/** A reason's name in snake_case, e.g. "failure_rate"; "unknown" for a
 *  value this header does not know (a newer library may add reasons). */
inline const char *to_string(Reason r) noexcept {
  switch (int(r)) { CB_REASON_LIST(LB_HPP_NAMED_CASE) }
  return "unknown";
}
#undef LB_HPP_NAMED_CASE

/** What a registry records in its event queue (CB_EVENTS_*), as flags:
 *  EventKind::Transitions | EventKind::Rejections. @since 1.1 */
enum class EventKind : unsigned {
  None = 0,
  Transitions = CB_EVENTS_TRANSITIONS,  ///< state transitions (on by default)
  Rejections = CB_EVENTS_REJECTIONS,    ///< every rejected call (off by default)
};
constexpr EventKind operator|(EventKind a, EventKind b) noexcept {
  return static_cast<EventKind>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr EventKind operator&(EventKind a, EventKind b) noexcept {
  return static_cast<EventKind>(static_cast<unsigned>(a) & static_cast<unsigned>(b));
}

/** A failed C call: status() is the CB_E* code, detail() the library's
 *  message for it; what() is "<cb_strerror(status)>: <detail>". */
class Error : public std::runtime_error {
 public:
  Error(int status, const std::string &detail)
      : std::runtime_error(std::string(cb_strerror(status)) + ": " + detail),
        status_(status),
        detail_(detail) {}

  /** The CB_E* status of the failed call (< 0). */
  int status() const noexcept { return status_; }
  /** cb_last_error_message() of the failed call. */
  const std::string &detail() const noexcept { return detail_; }

 private:
  int status_;
  std::string detail_;
};

/** The breaker said fail fast. Not an Error: nothing is broken in the
 *  program, the dependency is. retry_after() is the breaker's
 *  cb_retry_after() at the moment of the rejection (nanoseconds::max() when
 *  FORCED_OPEN). */
class Rejected : public std::runtime_error {
 public:
  Rejected(const std::string &breaker_name, std::chrono::nanoseconds retry_after)
      : std::runtime_error("circuit breaker" +
                           (breaker_name.empty() ? std::string() : " '" + breaker_name + "'") +
                           " rejected the call"),
        name_(breaker_name),
        retry_after_(retry_after) {}

  /** The breaker's name ("" when anonymous). */
  const std::string &breaker_name() const noexcept { return name_; }
  std::chrono::nanoseconds retry_after() const noexcept { return retry_after_; }

 private:
  std::string name_;
  std::chrono::nanoseconds retry_after_;
};

namespace detail {

/** Throws Error unless st is CB_OK or CB_REJECTED; returns st. */
inline int check(int st) {
  if (st < 0) throw Error(st, cb_last_error_message());
  return st;
}

inline std::string c_name(std::string_view name) {
  if (name.find('\0') != std::string_view::npos)
    throw Error(CB_EINVAL, "a breaker name must not contain a NUL byte");
  return std::string(name);
}

/** d in nanoseconds; throws Error(CB_EINVAL, "<what> is negative") if d < 0. */
inline uint64_t to_ns(std::chrono::nanoseconds d, const char *what) {
  if (d.count() < 0) throw Error(CB_EINVAL, std::string(what) + " is negative");
  return static_cast<uint64_t>(d.count());
}

inline std::chrono::nanoseconds from_ns(uint64_t ns) noexcept {
  using rep = std::chrono::nanoseconds::rep;
  return ns > static_cast<uint64_t>(std::chrono::nanoseconds::max().count())
             ? std::chrono::nanoseconds::max()
             : std::chrono::nanoseconds(static_cast<rep>(ns));
}

}  // namespace detail

/** The trip policy (cb_policy_t): what trips a CLOSED breaker. See
 *  docs/policies.md. */
enum class Policy : int {
  Consecutive = CB_POLICY_CONSECUTIVE,   ///< failure_threshold failures in a row
  CountWindow = CB_POLICY_COUNT_WINDOW,  ///< failure rate over the last window_size outcomes
  TimeWindow = CB_POLICY_TIME_WINDOW,    ///< failure rate over the last window_duration
};

/** A breaker's configuration, as a builder. Every field left unset takes
 *  the library's default (cb_config_init), so the defaults live in one
 *  place: consecutive policy, failure threshold 5, open duration 30 s, 1
 *  probe at a time, 1 probe success to close, half-open timeout = open
 *  duration, no slow-call tracking, no backoff, no jitter.
 *
 *    lazybreaker::Config().failure_threshold(3).open_duration(10s)
 *    lazybreaker::Config()
 *        .policy(lazybreaker::Policy::CountWindow)
 *        .window_size(100).minimum_calls(20).failure_rate_threshold(0.5)
 *        .slow_call(2s).slow_call_rate_threshold(0.8)
 *        .open_duration(1s).backoff(2.0, 60s).jitter(0.1)
 *
 *  (A builder rather than an aggregate for designated initializers: GCC's
 *  -Wextra warns on every designated initializer that leaves a field out.)
 *  Range checks are the library's: a bad value throws Error(CB_EINVAL) from
 *  create(), with a message naming the cb_config field. The wrapper only
 *  refuses negative durations itself (they have no uint64_t to map to). */
class Config {
 public:
  /** @name 1.0 fields
   *  @{ */
  /** Consecutive policy: failures in a row that trip. */
  Config &failure_threshold(uint32_t n) { return set(failure_threshold_, n); }
  /** How long OPEN rejects (the first open duration, with backoff). */
  Config &open_duration(std::chrono::nanoseconds d) { return set(open_duration_, d); }
  Config &half_open_max_calls(uint32_t n) { return set(half_open_max_calls_, n); }
  Config &half_open_success_threshold(uint32_t n) { return set(half_open_success_threshold_, n); }
  /** 0 = the open duration. */
  Config &half_open_timeout(std::chrono::nanoseconds d) { return set(half_open_timeout_, d); }
  /** @} */

  /** @name Trip policies (@since 1.1)
   *  @{ */
  Config &policy(Policy p) { return set(policy_, p); }
  /** Count window: outcomes kept. */
  Config &window_size(uint32_t n) { return set(window_size_, n); }
  /** Time window: how far back it looks. */
  Config &window_duration(std::chrono::nanoseconds d) { return set(window_duration_, d); }
  /** Time window: buckets it is kept in. */
  Config &window_buckets(uint32_t n) { return set(window_buckets_, n); }
  /** No rate trips before this many outcomes are in the window. */
  Config &minimum_calls(uint32_t n) { return set(minimum_calls_, n); }
  /** Rate policies: trip when failures / calls reaches it (compared in
   *  billionths, docs/policies.md); (0, 1]. */
  Config &failure_rate_threshold(double r) { return set(failure_rate_threshold_, r); }
  /** @} */

  /** @name Slow calls (@since 1.1)
   *  @{ */
  /** A call longer than this (from acquire to its report, on the registry
   *  clock) is slow; 0 turns tracking off (the default). */
  Config &slow_call(std::chrono::nanoseconds threshold) { return set(slow_call_, threshold); }
  /** Trip when slow calls / calls reaches it (compared as the failure
   *  rate is); (0, 1]. */
  Config &slow_call_rate_threshold(double r) { return set(slow_call_rate_threshold_, r); }
  /** @} */

  /** @name Open-duration backoff and jitter (@since 1.1)
   *  @{ */
  /** Each trip without a close in between multiplies the open duration. */
  Config &backoff(double multiplier) { return set(backoff_multiplier_, multiplier); }
  /** As backoff(multiplier), capped at `max` (which caps jitter too). */
  Config &backoff(double multiplier, std::chrono::nanoseconds max) {
    return backoff(multiplier).open_duration_max(max);
  }
  /** Cap for backoff and jitter; 0 = CB_MAX_DURATION_NS (366 days). */
  Config &open_duration_max(std::chrono::nanoseconds d) { return set(open_duration_max_, d); }
  /** Each open duration is scaled by a factor in [1 - j, 1 + j], then kept
   *  within CB_MIN_OPEN_DURATION_NS..the cap; [0, 1). */
  Config &jitter(double j) { return set(jitter_, j); }
  /** @} */

  /** The C struct: cb_config_init's defaults, then what was set here.
   *  Throws Error(CB_EINVAL) for a negative duration. */
  cb_config to_c() const {
    cb_config c;
    cb_config_init(&c);
    if (failure_threshold_) c.failure_threshold = *failure_threshold_;
    if (open_duration_) c.open_duration_ns = ns(*open_duration_, "open_duration");
    if (half_open_max_calls_) c.half_open_max_calls = *half_open_max_calls_;
    if (half_open_success_threshold_) c.half_open_success_threshold = *half_open_success_threshold_;
    if (half_open_timeout_) c.half_open_timeout_ns = ns(*half_open_timeout_, "half_open_timeout");
    if (policy_) c.policy = static_cast<int>(*policy_);
    if (window_size_) c.window_size = *window_size_;
    if (window_duration_) c.window_duration_ns = ns(*window_duration_, "window_duration");
    if (window_buckets_) c.window_buckets = *window_buckets_;
    if (minimum_calls_) c.minimum_calls = *minimum_calls_;
    if (failure_rate_threshold_) c.failure_rate_threshold = *failure_rate_threshold_;
    if (slow_call_) c.slow_call_ns = ns(*slow_call_, "slow_call");
    if (slow_call_rate_threshold_) c.slow_call_rate_threshold = *slow_call_rate_threshold_;
    if (backoff_multiplier_) c.open_backoff_multiplier = *backoff_multiplier_;
    if (open_duration_max_) c.open_duration_max_ns = ns(*open_duration_max_, "open_duration_max");
    if (jitter_) c.open_jitter = *jitter_;
    return c;
  }

 private:
  template <class T, class U>
  Config &set(std::optional<T> &field, U value) {
    field = value;
    return *this;
  }
  static uint64_t ns(std::chrono::nanoseconds d, const char *field) {
    if (d.count() < 0) throw Error(CB_EINVAL, std::string("Config: ") + field + " is negative");
    return static_cast<uint64_t>(d.count());
  }

  std::optional<uint32_t> failure_threshold_, half_open_max_calls_, half_open_success_threshold_;
  std::optional<std::chrono::nanoseconds> open_duration_, half_open_timeout_;
  std::optional<Policy> policy_;
  std::optional<uint32_t> window_size_, window_buckets_, minimum_calls_;
  std::optional<std::chrono::nanoseconds> window_duration_, slow_call_, open_duration_max_;
  std::optional<double> failure_rate_threshold_, slow_call_rate_threshold_, backoff_multiplier_,
      jitter_;
};

/** A breaker's counters and rates (cb_stats, whose fields say exactly what
 *  each is). Counted in every state. */
struct Stats {
  uint64_t admitted = 0;
  uint64_t rejected = 0;
  uint64_t successes = 0;
  uint64_t failures = 0;
  uint64_t ignored = 0;
  uint64_t trips = 0;
  uint32_t consecutive_failures = 0;  ///< the consecutive policy's run (0 under rate policies)
  /* @since 1.1 */
  uint64_t slow = 0;        ///< outcomes slower than Config::slow_call (0 when off)
  double failure_rate = 0;  ///< failures / calls in the window now (any window)
  double slow_rate = 0;     ///< slow calls / calls in the window now
  std::chrono::nanoseconds time_in_state{0};  ///< since the last transition, on the registry clock
};

class Permit;
class Breaker;

/** A non-owning view of a breaker handle. Copy it freely; it never destroys
 *  the breaker. Every method may throw Error (CB_EHANDLE once the breaker is
 *  destroyed or its registry closed). */
class BreakerRef {
 public:
  BreakerRef() noexcept = default;
  explicit BreakerRef(cb_handle h) noexcept : h_(h) {}

  cb_handle handle() const noexcept { return h_; }
  /** False for a default-constructed or moved-from object. */
  explicit operator bool() const noexcept { return h_ != 0; }

  State state() const { return static_cast<State>(detail::check(cb_state(h_))); }

  /** How long until a call could be admitted (cb_retry_after);
   *  nanoseconds::max() in FORCED_OPEN. */
  std::chrono::nanoseconds retry_after() const {
    uint64_t ns = 0;
    detail::check(cb_retry_after(h_, &ns));
    return detail::from_ns(ns);
  }

  Stats stats() const {
    cb_stats s{};
    s.struct_size = sizeof s;
    detail::check(cb_stats_get(h_, &s));
    Stats r;
    r.admitted = s.admitted;
    r.rejected = s.rejected;
    r.successes = s.successes;
    r.failures = s.failures;
    r.ignored = s.ignored;
    r.trips = s.trips;
    r.consecutive_failures = s.consecutive_failures;
    r.slow = s.slow;
    r.failure_rate = s.failure_rate;
    r.slow_rate = s.slow_rate;
    r.time_in_state = detail::from_ns(s.state_ns);
    return r;
  }

  std::string name() const {
    char buf[CB_MAX_NAME_BYTES + 1];
    detail::check(cb_name(h_, buf, sizeof buf));
    return std::string(buf);
  }

  void force_open() const { detail::check(cb_force_open(h_)); }
  void disable() const { detail::check(cb_disable(h_)); }
  void reset() const { detail::check(cb_reset(h_)); }
  /** OPEN now, for exactly `open_for` (e.g. a "Retry-After: 20" answer),
   *  then probing as usual (cb_trip). Counts as a trip; permits issued
   *  before it become stale. Throws Error(CB_EINVAL) for a duration outside
   *  1 us .. 366 days. @since 1.1 */
  void trip(std::chrono::nanoseconds open_for) const {
    detail::check(cb_trip(h_, detail::to_ns(open_for, "trip: open_for")));
  }

  /** A permit for one call, or an empty optional when the breaker rejects. */
  inline std::optional<Permit> try_acquire() const;
  /** A permit for one call; throws Rejected when the breaker rejects. */
  inline Permit acquire() const;

  /** Runs f() under a permit: reports success when f returns, failure when
   *  it throws (and rethrows). Throws Rejected, without calling f, when the
   *  breaker rejects. Returns what f returns. */
  template <class F>
  std::invoke_result_t<F &&> execute(F &&f) const;

  friend bool operator==(const BreakerRef &a, const BreakerRef &b) noexcept { return a.h_ == b.h_; }

 protected:
  cb_handle h_ = 0;
};

/** One admitted call. Report its outcome once with success(), failure(),
 *  ignore() or report(); later reports do nothing and return false.
 *
 *  A permit destroyed without a report settles itself:
 *   - FAILURE if it is destroyed by stack unwinding, i.e. more exceptions
 *     are in flight than when it was acquired (std::uncaught_exceptions());
 *     the call threw, and that is what a failure is;
 *   - IGNORED otherwise: a permit dropped silently (an early return, a
 *     forgotten report) says nothing about the dependency, and counting it
 *     as a success could close a breaker on a call that never happened,
 *     while counting it as a failure could trip a healthy one.
 *  Either way the ticket is returned, so a dropped probe never holds a
 *  HALF_OPEN slot until its lease runs out.
 *
 *  Moving a permit moves the duty to report; the moved-from permit reports
 *  nothing. Assigning to a permit that still holds a ticket settles that
 *  ticket first, by the rule above. */
class [[nodiscard]] Permit {
 public:
  Permit() noexcept = default;
  Permit(Permit &&o) noexcept
      : h_(o.h_), ticket_(std::exchange(o.ticket_, 0)), uncaught_(o.uncaught_) {}
  Permit &operator=(Permit &&o) noexcept {
    if (this != &o) {
      settle();
      h_ = o.h_;
      ticket_ = std::exchange(o.ticket_, 0);
      uncaught_ = o.uncaught_;
    }
    return *this;
  }
  Permit(const Permit &) = delete;
  Permit &operator=(const Permit &) = delete;
  ~Permit() { settle(); }

  /** True while the permit holds a ticket not yet reported. */
  bool pending() const noexcept { return ticket_ != 0; }
  explicit operator bool() const noexcept { return pending(); }
  cb_ticket ticket() const noexcept { return ticket_; }
  BreakerRef breaker() const noexcept { return BreakerRef(h_); }

  /** Reports the outcome. Returns true if this call reported it, false if
   *  the permit had already reported (or is moved-from): a permit reports
   *  once. Throws Error if cb_done fails (the ticket is spent even then).
   *  A stale outcome (the breaker changed period since the call was
   *  admitted: it tripped, closed or was reset) is not an error: it returns
   *  true, counts in the statistics and moves nothing, as cb_done does. */
  bool report(Outcome o) {
    if (ticket_ == 0) return false;
    const cb_ticket t = std::exchange(ticket_, 0);
    detail::check(cb_done(h_, t, static_cast<int>(o)));
    return true;
  }
  bool success() { return report(Outcome::Success); }
  bool failure() { return report(Outcome::Failure); }
  bool ignore() { return report(Outcome::Ignored); }

 private:
  friend class BreakerRef;
  Permit(cb_handle h, cb_ticket t) noexcept
      : h_(h), ticket_(t), uncaught_(std::uncaught_exceptions()) {}

  void settle() noexcept {
    if (ticket_ == 0) return;
    const int outcome = std::uncaught_exceptions() > uncaught_ ? CB_FAILURE : CB_IGNORED;
    (void)cb_done(h_, std::exchange(ticket_, 0), outcome);  // nothing to do about an error here
  }

  cb_handle h_ = 0;
  cb_ticket ticket_ = 0;
  int uncaught_ = 0;
};

inline std::optional<Permit> BreakerRef::try_acquire() const {
  cb_ticket t = 0;
  if (detail::check(cb_allow(h_, &t)) == CB_REJECTED) return std::nullopt;
  return Permit(h_, t);
}

inline Permit BreakerRef::acquire() const {
  cb_ticket t = 0;
  if (detail::check(cb_allow(h_, &t)) == CB_REJECTED) throw Rejected(name(), retry_after());
  return Permit(h_, t);
}

template <class F>
std::invoke_result_t<F &&> BreakerRef::execute(F &&f) const {
  using R = std::invoke_result_t<F &&>;
  Permit p = acquire();
  try {
    if constexpr (std::is_void_v<R>) {
      std::invoke(std::forward<F>(f));
      p.success();
    } else {
      R r = std::invoke(std::forward<F>(f));
      p.success();
      return r;
    }
  } catch (...) {
    // A success() that threw Error has spent the ticket: this does nothing.
    (void)p.failure();
    throw;
  }
}

/** An owning breaker: cb_destroy'd when this object is destroyed (or
 *  destroy()ed, or assigned over). Move-only. release() gives the handle up
 *  without destroying it. Converts to BreakerRef by slicing, on purpose: a
 *  view of a breaker one owns. */
class Breaker : public BreakerRef {
 public:
  Breaker() noexcept = default;
  /** Takes ownership of a handle from cb_create. */
  static Breaker adopt(cb_handle h) noexcept { return Breaker(h); }

  Breaker(Breaker &&o) noexcept : BreakerRef(std::exchange(o.h_, 0)) {}
  Breaker &operator=(Breaker &&o) noexcept {
    if (this != &o) {
      drop();
      h_ = std::exchange(o.h_, 0);
    }
    return *this;
  }
  Breaker(const Breaker &) = delete;
  Breaker &operator=(const Breaker &) = delete;
  ~Breaker() { drop(); }

  /** Destroys the breaker now; its name becomes free. Throws Error
   *  (CB_EHANDLE) if it was already destroyed through another path. */
  void destroy() {
    const cb_handle h = std::exchange(h_, 0);
    if (h != 0) detail::check(cb_destroy(h));
  }

  /** Gives up ownership: the breaker lives on, the caller owns the handle. */
  cb_handle release() noexcept { return std::exchange(h_, 0); }

 private:
  explicit Breaker(cb_handle h) noexcept : BreakerRef(h) {}
  void drop() noexcept {
    // CB_EHANDLE if the registry was closed first: nothing left to destroy.
    if (h_ != 0) (void)cb_destroy(std::exchange(h_, 0));
  }
};

/** One event from a registry's queue (cb_event). @since 1.1 */
struct Event {
  uint64_t sequence = 0;  ///< position in the registry's queue; a gap means dropped events
  BreakerRef breaker;     ///< a view of the breaker; it may be destroyed by now
  State from = State::Closed;
  State to = State::Closed;  ///< == from for Reason::Rejected
  Reason reason = Reason::Manual;
  std::chrono::nanoseconds at{0};  ///< registry clock
  std::string name;                ///< the breaker's name when it happened; "" if anonymous
};

/** A non-owning view of a registry. */
class RegistryRef {
 public:
  RegistryRef() noexcept = default;
  explicit RegistryRef(cb_registry *r) noexcept : r_(r) {}

  /** The process-wide registry (monotonic clock), never closed. */
  static RegistryRef default_registry() {
    cb_registry *r = cb_default_registry();
    if (r == nullptr) throw Error(CB_ENOMEM, cb_last_error_message());
    return RegistryRef(r);
  }

  cb_registry *raw() const noexcept { return r_; }

  /** Creates a named breaker, owned by the result. */
  Breaker create(std::string_view name, const Config &cfg = {}) const {
    const std::string n = detail::c_name(name);
    return create_c(n.c_str(), cfg);
  }
  /** Creates an anonymous breaker, owned by the result. */
  Breaker create(const Config &cfg = {}) const { return create_c(nullptr, cfg); }

  /** The breaker with that name if its configuration is `cfg`, else a new
   *  one (atomic against other threads and processes): what each worker of
   *  a pool calls at start. Not owned, as other workers share it. Throws
   *  Error(CB_EEXIST) if the name has a breaker of another configuration.
   *  @since 1.2 */
  BreakerRef get_or_create(std::string_view name, const Config &cfg = {}) const {
    const std::string n = detail::c_name(name);
    const cb_config c = cfg.to_c();
    cb_handle h = 0;
    detail::check(cb_get_or_create(r_, n.c_str(), &c, &h));
    return BreakerRef(h);
  }

  /** The breaker with that name, not owned: the view never destroys it.
   *  Throws Error(CB_ENOENT) if there is none. */
  BreakerRef lookup(std::string_view name) const {
    const std::string n = detail::c_name(name);
    cb_handle h = 0;
    detail::check(cb_lookup(r_, n.c_str(), &h));
    return BreakerRef(h);
  }
  /** As lookup(), but an empty optional when no breaker has that name. */
  std::optional<BreakerRef> find(std::string_view name) const {
    const std::string n = detail::c_name(name);
    cb_handle h = 0;
    const int st = cb_lookup(r_, n.c_str(), &h);
    if (st == CB_ENOENT) return std::nullopt;
    detail::check(st);
    return BreakerRef(h);
  }

  /** The registry clock. */
  std::chrono::nanoseconds now() const {
    uint64_t ns = 0;
    detail::check(cb_clock_now(r_, &ns));
    return detail::from_ns(ns);
  }
  /** Moves a manual clock forward; throws Error(CB_EINVAL) for another
   *  clock or a negative step. */
  void advance(std::chrono::nanoseconds d) const {
    detail::check(cb_clock_advance(r_, detail::to_ns(d, "advance: the step")));
  }

  /** @name Events, metrics and listing (@since 1.1)
   *  @{ */

  /** Chooses what the event queue records (cb_events_select):
   *  e.g. EventKind::Transitions | EventKind::Rejections, or EventKind::None. */
  void select_events(EventKind kinds) const {
    detail::check(cb_events_select(r_, static_cast<unsigned>(kinds)));
  }

  /** Takes up to `max` events from the queue, oldest first (cb_events_poll);
   *  fewer, possibly none, when the queue holds fewer. The events are gone
   *  from the queue once returned. */
  std::vector<Event> poll_events(size_t max = 256) const {
    std::vector<Event> out;
    if (max == 0) return out;
    // cb_event is ~300 bytes: poll in chunks rather than size a buffer by max.
    std::vector<cb_event> buf(std::min<size_t>(max, 64));
    while (out.size() < max) {
      const size_t want = std::min(buf.size(), max - out.size());
      buf[0].struct_size = sizeof(cb_event);  // the previous chunk overwrote it
      size_t n = 0;
      detail::check(cb_events_poll(r_, buf.data(), want, &n));
      for (size_t i = 0; i < n; ++i) {
        const cb_event &e = buf[i];
        Event ev;
        ev.sequence = e.sequence;
        ev.breaker = BreakerRef(e.breaker);
        ev.from = static_cast<State>(e.from);
        ev.to = static_cast<State>(e.to);
        ev.reason = static_cast<Reason>(e.reason);
        ev.at = detail::from_ns(e.at_ns);
        ev.name = e.name;
        out.push_back(std::move(ev));
      }
      if (n < want) break;
    }
    return out;
  }

  /** How many events the queue has dropped since the registry opened. */
  uint64_t events_dropped() const {
    uint64_t n = 0;
    detail::check(cb_events_dropped(r_, &n));
    return n;
  }

  /** Every breaker of the registry in the Prometheus text exposition format
   *  0.0.4 (cb_metrics_prometheus). Allocates: meant for a scrape endpoint,
   *  not the request path. */
  std::string prometheus() const {
    size_t needed = 0;
    detail::check(cb_metrics_prometheus(r_, nullptr, 0, &needed));
    std::string text;
    int st = CB_ERANGE;
    for (size_t slack = 256; st == CB_ERANGE; slack *= 2) {
      // The text may grow between calls (new breakers, longer numbers):
      // leave room for that, and grow the room if it was not enough.
      text.assign(needed + slack, '\0');
      st = cb_metrics_prometheus(r_, text.data(), text.size(), &needed);
    }
    detail::check(st);
    text.resize(needed);
    return text;
  }

  /** Views of the registry's live breakers (cb_registry_list). Breakers
   *  created or destroyed meanwhile may or may not be listed. */
  std::vector<BreakerRef> breakers() const {
    size_t n = 0;
    detail::check(cb_registry_list(r_, nullptr, 0, &n));
    std::vector<cb_handle> hs;
    do {
      hs.resize(n + 16);  // room for a few created meanwhile
      detail::check(cb_registry_list(r_, hs.data(), hs.size(), &n));
    } while (n > hs.size());
    hs.resize(n);
    return std::vector<BreakerRef>(hs.begin(), hs.end());
  }
  /** @} */

 protected:
  cb_registry *r_ = nullptr;

 private:
  Breaker create_c(const char *name, const Config &cfg) const {
    const cb_config c = cfg.to_c();
    cb_handle h = 0;
    detail::check(cb_create(r_, name, &c, &h));
    return Breaker::adopt(h);
  }
};

/** An owning registry: closed when this object is destroyed, which makes
 *  every handle into it stale. Move-only. */
class Registry : public RegistryRef {
 public:
  struct Options {
    uint32_t capacity = 0;  ///< 0 = the library default (65,536)
    Clock clock = Clock::Monotonic;
    /** Events the queue holds before it drops the oldest; 0 = the library
     *  default (1,024); rounded up to a power of two. @since 1.1 */
    uint32_t event_capacity = 0;
    /** Empty: a private, in-memory registry. Else the registry file every
     *  process that opens it shares (docs/shared-registries.md). @since 1.2 */
    std::string path;
    /** CB_REGISTRY_CREATE, CB_REGISTRY_EXCLUSIVE, CB_REGISTRY_ANY_OWNER (1.3). @since 1.2 */
    uint32_t flags = 0;
    /** Permission bits of a file this creates; 0 = 0600. @since 1.2 */
    uint32_t mode = 0;
  };

  /** Opens a registry: private, or shared in Options::path. */
  explicit Registry(const Options &o) {
    cb_registry_options c;
    cb_registry_options_init(&c);
    c.capacity = o.capacity;
    c.clock = static_cast<int>(o.clock);
    c.event_capacity = o.event_capacity;
    c.path = o.path.empty() ? nullptr : o.path.c_str();
    c.flags = o.flags;
    c.mode = o.mode;
    detail::check(cb_registry_open(&c, &r_));
  }

  /** Opens the shared registry file at `path`, creating it (with
   *  `capacity`, 0 = 65,536) if it is missing. @since 1.2 */
  static Registry shared(const std::string &path, uint32_t capacity = 0) {
    Options o;
    o.path = path;
    o.capacity = capacity;
    o.flags = CB_REGISTRY_CREATE;
    return Registry(o);
  }
  Registry() : Registry(Options{}) {}

  /** A registry on a manual clock: starts at 0, moves only by advance(). */
  static Registry manual_clock(uint32_t capacity = 0) {
    Options o;
    o.capacity = capacity;
    o.clock = Clock::Manual;
    return Registry(o);
  }

  Registry(Registry &&o) noexcept : RegistryRef(std::exchange(o.r_, nullptr)) {}
  Registry &operator=(Registry &&o) noexcept {
    if (this != &o) {
      close_quietly();
      r_ = std::exchange(o.r_, nullptr);
    }
    return *this;
  }
  Registry(const Registry &) = delete;
  Registry &operator=(const Registry &) = delete;
  ~Registry() { close_quietly(); }

  /** Closes now; throws Error if the library refuses. */
  void close() {
    cb_registry *r = std::exchange(r_, nullptr);
    if (r != nullptr) detail::check(cb_registry_close(r));
  }

 private:
  void close_quietly() noexcept {
    if (r_ != nullptr) (void)cb_registry_close(std::exchange(r_, nullptr));
  }
};

/** The library's version ("MAJOR.MINOR.PATCH"), which may differ from the
 *  header's CB_VERSION_STRING. */
inline const char *version() noexcept { return cb_version_string(); }

}  // namespace lazybreaker

#endif  // C++17
#endif  // LAZYBREAKER_HPP
