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
 * Lifetimes: a Breaker or BreakerRef must not outlive the registry it lives
 * in. If it does, its handle is stale: calls throw Error(CB_EHANDLE), and a
 * Breaker's destructor silently does nothing. Thread safety is that of the C
 * functions underneath: a BreakerRef may be used from any number of threads
 * at once; a Permit, Breaker or Registry object itself is used by one thread
 * at a time (moving or destroying it is not synchronised).
 */
#ifndef LAZYBREAKER_HPP
#define LAZYBREAKER_HPP

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

inline const char *to_string(State s) noexcept {
  switch (s) {
    case State::Closed:
      return "closed";
    case State::Open:
      return "open";
    case State::HalfOpen:
      return "half_open";
    case State::ForcedOpen:
      return "forced_open";
    case State::Disabled:
      return "disabled";
  }
  return "unknown";
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

inline uint64_t to_ns(std::chrono::nanoseconds d, const char *field) {
  if (d.count() < 0) throw Error(CB_EINVAL, std::string("Config: ") + field + " is negative");
  return static_cast<uint64_t>(d.count());
}

inline std::chrono::nanoseconds from_ns(uint64_t ns) noexcept {
  using rep = std::chrono::nanoseconds::rep;
  return ns > static_cast<uint64_t>(std::chrono::nanoseconds::max().count())
             ? std::chrono::nanoseconds::max()
             : std::chrono::nanoseconds(static_cast<rep>(ns));
}

}  // namespace detail

/** A breaker's configuration, as a builder. Every field left unset takes
 *  the library's default (cb_config_init), so the defaults live in one
 *  place: failure threshold 5, open duration 30 s, 1 probe at a time, 1
 *  probe success to close, half-open timeout = open duration.
 *
 *    lazybreaker::Config().failure_threshold(3).open_duration(10s)
 *
 *  (A builder rather than an aggregate for designated initializers: GCC's
 *  -Wextra warns on every designated initializer that leaves a field out.)
 *  Range checks are the library's: a bad value throws Error(CB_EINVAL) from
 *  create(), with a message naming the field. */
class Config {
 public:
  Config &failure_threshold(uint32_t n) {
    failure_threshold_ = n, set_ |= kFailureThreshold;
    return *this;
  }
  Config &open_duration(std::chrono::nanoseconds d) {
    open_duration_ = d, set_ |= kOpenDuration;
    return *this;
  }
  Config &half_open_max_calls(uint32_t n) {
    half_open_max_calls_ = n, set_ |= kHalfOpenMaxCalls;
    return *this;
  }
  Config &half_open_success_threshold(uint32_t n) {
    half_open_success_threshold_ = n, set_ |= kHalfOpenSuccessThreshold;
    return *this;
  }
  /** 0 = the open duration. */
  Config &half_open_timeout(std::chrono::nanoseconds d) {
    half_open_timeout_ = d, set_ |= kHalfOpenTimeout;
    return *this;
  }

  /** The C struct: cb_config_init's defaults, then what was set here. */
  cb_config to_c() const {
    cb_config c;
    cb_config_init(&c);
    if (set_ & kFailureThreshold) c.failure_threshold = failure_threshold_;
    if (set_ & kOpenDuration) c.open_duration_ns = detail::to_ns(open_duration_, "open_duration");
    if (set_ & kHalfOpenMaxCalls) c.half_open_max_calls = half_open_max_calls_;
    if (set_ & kHalfOpenSuccessThreshold)
      c.half_open_success_threshold = half_open_success_threshold_;
    if (set_ & kHalfOpenTimeout)
      c.half_open_timeout_ns = detail::to_ns(half_open_timeout_, "half_open_timeout");
    return c;
  }

 private:
  enum : unsigned {
    kFailureThreshold = 1,
    kOpenDuration = 2,
    kHalfOpenMaxCalls = 4,
    kHalfOpenSuccessThreshold = 8,
    kHalfOpenTimeout = 16
  };
  unsigned set_ = 0;
  uint32_t failure_threshold_ = 0, half_open_max_calls_ = 0, half_open_success_threshold_ = 0;
  std::chrono::nanoseconds open_duration_{0}, half_open_timeout_{0};
};

/** A breaker's counters (cb_stats). */
struct Stats {
  uint64_t admitted = 0;
  uint64_t rejected = 0;
  uint64_t successes = 0;
  uint64_t failures = 0;
  uint64_t ignored = 0;
  uint64_t trips = 0;
  uint32_t consecutive_failures = 0;
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
    return Stats{s.admitted, s.rejected, s.successes,           s.failures,
                 s.ignored,  s.trips,    s.consecutive_failures};
  }

  std::string name() const {
    char buf[CB_MAX_NAME_BYTES + 1];
    detail::check(cb_name(h_, buf, sizeof buf));
    return std::string(buf);
  }

  void force_open() const { detail::check(cb_force_open(h_)); }
  void disable() const { detail::check(cb_disable(h_)); }
  void reset() const { detail::check(cb_reset(h_)); }

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
   *  once. Throws Error if cb_done fails (the ticket is spent even then). */
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
    detail::check(cb_clock_advance(r_, detail::to_ns(d, "advance")));
  }

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
  };

  /** Opens a private, in-memory registry. */
  explicit Registry(const Options &o) {
    cb_registry_options c;
    cb_registry_options_init(&c);
    c.capacity = o.capacity;
    c.clock = static_cast<int>(o.clock);
    detail::check(cb_registry_open(&c, &r_));
  }
  Registry() : Registry(Options{}) {}

  /** A registry on a manual clock: starts at 0, moves only by advance(). */
  static Registry manual_clock(uint32_t capacity = 0) {
    return Registry(Options{capacity, Clock::Manual});
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

#endif  // LAZYBREAKER_HPP
