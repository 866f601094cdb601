// The circuit breaker state machine: pure logic over one breaker's words, a
// clock and a counter cell. No handles, names, memory management or I/O.
// See docs/semantics.md and docs/policies.md for the behaviour this
// implements.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/clock.hpp"
#include "core/counters.hpp"
#include "core/events.hpp"
#include "core/window.hpp"
#include "core/words.hpp"
#include "lazybreaker/lists.h"

namespace lazybreaker::core {

enum class Policy : uint32_t { Consecutive = 0, CountWindow = 1, TimeWindow = 2 };

// The bounds of a computed open duration. The lower one is what keeps
// epochs from wrapping under a held ticket (docs/semantics.md), the upper
// one is the cap when open_duration_max_ns is 0.
inline constexpr uint64_t kShortestOpenNs = CB_MIN_OPEN_DURATION_NS;
inline constexpr uint64_t kLongestOpenNs = CB_MAX_DURATION_NS;

// Each field's default, as lists.h gives it.
struct ConfigDefaults {
#define LB_DEFAULT(field, type, since, unit, bounds, lo, hi, def) static constexpr type field = def;
  CB_CONFIG_FIELDS(LB_DEFAULT)
#undef LB_DEFAULT
};

// A validated configuration.
struct Config {
  // The fields of lists.h's CB_CONFIG_FIELDS, in the order a registry
  // file stores them (its layout: never reorder).
  using D = ConfigDefaults;
  uint32_t failure_threshold = D::failure_threshold;
  uint32_t half_open_max_calls = D::half_open_max_calls;
  uint64_t open_duration_ns = D::open_duration_ns;
  uint32_t half_open_success_threshold = D::half_open_success_threshold;
  Policy policy = Policy(D::policy);
  uint64_t half_open_timeout_ns = D::half_open_timeout_ns;  // 0 = the open duration (finish())
  uint32_t window_size = D::window_size;
  uint32_t window_buckets = D::window_buckets;
  uint64_t window_duration_ns = D::window_duration_ns;
  uint32_t minimum_calls = D::minimum_calls;
  uint32_t slow_unit_shift = 0;             // tickets stamp admission time in units of 2^shift ns
  uint64_t slow_call_ns = D::slow_call_ns;  // 0 = off
  double failure_rate_threshold = D::failure_rate_threshold;
  double slow_call_rate_threshold = D::slow_call_rate_threshold;
  double open_backoff_multiplier = D::open_backoff_multiplier;
  uint64_t open_duration_max_ns = D::open_duration_max_ns;  // 0 = kLongestOpenNs
  double open_jitter = D::open_jitter;  // the factor's seed is the breaker's (jitter_seed)
  // The rate thresholds in billionths (derived): a rate is reached when
  // count * kRateScale >= calls * threshold, in exact integers, so every
  // binding and every reader of docs/policies.md gets the same answer.
  uint32_t failure_rate_billionths = 500'000'000;
  uint32_t slow_rate_billionths = 1'000'000'000;
  // The window's buckets (derived), so that no outcome divides to find them.
  WindowShape shape;

  // Whether outcomes feed a window, so no CLOSED call takes the write-free
  // path, and whether its calls are timed.
  bool recorded() const { return recording() != Recording::None; }
  Recording recording() const {
    return slow_call_ns != 0               ? Recording::Timed
           : policy != Policy::Consecutive ? Recording::Window
                                           : Recording::None;
  }
  // Whether cb_done needs the time of every outcome (a time window places
  // it, slow-call tracking measures it); otherwise only a trip reads it.
  bool timed_outcomes() const { return policy == Policy::TimeWindow || slow_call_ns != 0; }
  WindowShape window_shape() const { return shape; }
  // Fills the derived fields.
  void finish();
  static constexpr uint64_t kRateScale = 1'000'000'000;
  // round(threshold x 10^9), half away from zero, at least 1 (so a rate of
  // 0 failures never reaches a threshold).
  static uint32_t billionths(double threshold);
  // Whether `count` of `calls` reaches a threshold of `billionths` / 10^9.
  // Both counts are under 2^28 (32 buckets of at most 2^22 - 1), so the
  // products fit 64 bits.
  static bool reaches(uint64_t count, uint64_t calls, uint32_t billionths) {
    return count * kRateScale >= calls * billionths;
  }
  // Enough resolution that the slow-call threshold is exact to 1/1024; a
  // call's 36-bit stamp then wraps only after 2^25 thresholds (and at least
  // 68 seconds), a probe's 27-bit one after 2^16 (and at least 134 ms).
  static uint32_t slow_unit_shift_for(uint64_t slow_call_ns) {
    const auto bits = uint32_t(std::bit_width(slow_call_ns));
    return bits > 11 ? bits - 11 : 0;
  }
};

// A configuration as a registry stores it (registry/config_table.hpp: one
// copy shared by the breakers with equal configurations): written before
// the first breaker that uses it is published, as relaxed atomic words,
// since a thread racing a destroy may read a recycled copy (and then fails
// the incarnation check).
class ConfigCell {
 public:
  static constexpr size_t kWords = (sizeof(Config) + 7) / 8;
  using Words = std::array<uint64_t, kWords>;

  // A configuration as words, its padding zeroed, so that equal
  // configurations have equal words (a registry shares one copy of them).
  static Words words(const Config &c) {
    Words w{};
    std::memcpy(w.data(), &c, sizeof c);
    // The bytes between WindowShape::held_limit and WindowShape::buckets.
    constexpr size_t pad = offsetof(Config, shape) + offsetof(WindowShape, held_limit) + 1;
    static_assert(offsetof(WindowShape, by_time) == 0 && offsetof(WindowShape, held_limit) == 1 &&
                  offsetof(WindowShape, buckets) == 4 && pad % 8 == 2 &&
                  std::endian::native == std::endian::little);
    w[pad / 8] &= ~(uint64_t(0xffff) << 16);
    return w;
  }
  void store(const Config &c) { store(words(c)); }
  void store(const Words &w) {
    for (size_t i = 0; i < kWords; ++i) words_[i].store(w[i], std::memory_order_relaxed);
  }
  Words words() const {
    Words w;
    for (size_t i = 0; i < kWords; ++i) w[i] = words_[i].load(std::memory_order_relaxed);
    return w;
  }
  // A registry file's words may be anything (docs/shared-registries.md):
  // a bool reads as one, and what divides, shifts or sizes a loop is
  // brought in range (a stored configuration's values are already).
  Config load() const {
    Words w = words();
    constexpr size_t by_time = offsetof(Config, shape) + offsetof(WindowShape, by_time);
    auto *bytes = reinterpret_cast<unsigned char *>(w.data());
    bytes[by_time] = bytes[by_time] != 0;
    Config c;
    std::memcpy(static_cast<void *>(&c), w.data(), sizeof c);
    c.shape = in_range(c.shape);
    c.slow_unit_shift &= 63;
    return c;
  }
  // One field, for the paths that need no more (admitting a CLOSED call,
  // rejecting a call in a full HALF_OPEN period): `Offset` is the field's
  // offsetof in Config.
  template <class T, size_t Offset>
  T field() const {
    static_assert(Offset % 8 + sizeof(T) <= 8, "a field within one word");
    const uint64_t w = words_[Offset / 8].load(std::memory_order_relaxed);
    if constexpr (std::is_same_v<T, bool>) {
      return ((w >> (Offset % 8 * 8)) & 0xff) != 0;  // any byte: a bool
    } else {
      T v;
      std::memcpy(&v, reinterpret_cast<const char *>(&w) + Offset % 8, sizeof v);
      return v;
    }
  }
  uint64_t slow_call_ns() const { return field<uint64_t, offsetof(Config, slow_call_ns)>(); }
  uint32_t half_open_max_calls() const {
    return field<uint32_t, offsetof(Config, half_open_max_calls)>();
  }
  uint64_t half_open_timeout_ns() const {
    return field<uint64_t, offsetof(Config, half_open_timeout_ns)>();
  }
  Policy policy() const { return field<Policy, offsetof(Config, policy)>(); }
  WindowShape window_shape() const {
    static_assert(offsetof(Config, shape) % 8 == 0 && sizeof(WindowShape) == 16);
    WindowShape w;
    w.by_time = field<bool, offsetof(Config, shape) + offsetof(WindowShape, by_time)>();
    w.buckets = field<uint32_t, offsetof(Config, shape) + offsetof(WindowShape, buckets)>();
    w.bucket_width =
        field<uint64_t, offsetof(Config, shape) + offsetof(WindowShape, bucket_width)>();
    return in_range(w);
  }

 private:
  // 1..kMaxBuckets buckets of a width of at least 1.
  static WindowShape in_range(WindowShape s) {
    s.buckets = std::clamp<uint32_t>(s.buckets, 1, kMaxBuckets);
    s.bucket_width = std::max<uint64_t>(s.bucket_width, 1);
    return s;
  }

  std::atomic<uint64_t> words_[kWords];
};
static_assert(sizeof(ConfigCell) == 128, "two cache lines, addressed by a shift");

// The words every call touches, in one cache line.
struct alignas(64) Hot {
  std::atomic<uint64_t> word{0};        // StateWord
  std::atomic<uint64_t> changed_at{0};  // clock at the last transition; only ever grows
  // Clock at the last trip; only ever grows. Apart from changed_at because a
  // caller leaving OPEN stamps changed_at before its compare-and-swap, and
  // another caller still judging the OPEN period must not read that stamp.
  std::atomic<uint64_t> opened_at{0};
  std::atomic<uint64_t> probes{0};       // ProbeLedger of the current HALF_OPEN epoch
  std::atomic<uint64_t> probe_at{0};     // clock at the last probe admission; only ever grows
  std::atomic<uint64_t> trips{0};        // transitions into OPEN
  std::atomic<uint64_t> explicit_ns{0};  // the open duration cb_trip asked for
  std::atomic<uint64_t> open_period{0};  // OpenPeriod: the OPEN period's duration, cached
};
static_assert(sizeof(Hot) == 64);

enum class Outcome : uint32_t { Success = 0, Failure = 1, Ignored = 2 };

enum class Result { Ok, Rejected, WrongIncarnation, BadTicket, NotOpen };

// Rates and timing a reader may ask for.
struct Observation {
  double failure_rate = 0, slow_rate = 0;
  uint64_t state_ns = 0;
  uint32_t consecutive_failures = 0;
};

class Breaker {
 public:
  // `window` is the breaker's window memory (any, for a breaker without a
  // window: it is then touched only by calls racing a destroy).
  // `jitter_seed` differs between the breakers of a registry, and between
  // registries; open_duration() hashes it with the breaker's life and the
  // OPEN period's epoch. `held`: where the threads hold back successes of
  // this breaker, if it is a window breaker (HeldCells); empty, every
  // outcome goes to the window.
  Breaker(Hot &hot, const ConfigCell &cfg, const WindowCells &window, const Clock &clock,
          uint64_t jitter_seed, EventSink *events, const HeldCells &held = {})
      : hot_(hot),
        cfg_(cfg),
        window_(window),
        clock_(clock),
        jitter_seed_(jitter_seed),
        events_(events),
        held_(held) {}

  // Starts a new life of the slot, CLOSED; the epoch goes on from the last
  // life, so tickets from it stay stale. `cfg` is already in the ConfigCell.
  void begin_life(uint32_t incarnation, const Config &cfg);
  // Ends this life: the incarnation moves on. False if `incarnation` is not
  // the current one (someone else ended it, or it never began).
  bool end_life(uint32_t incarnation);

  // Ends whatever life the slot holds and forgets its clock stamps, for a
  // slot that moves to another registry, with another clock. The
  // incarnation and the epoch go on.
  void retire();

  // A call, and its outcome. A quiet breaker's calls (StateWord::quiet)
  // come here only when the fast path (registry/fast_path.hpp) could not
  // count them in the thread's own cells; they are admitted as any CLOSED
  // call is.
  Result allow(uint32_t incarnation, const Tally &tally, uint64_t *ticket);
  // rejects_early() for a breaker on a monotonic clock, from its hot line
  // alone, for a caller that holds no Breaker (registry/fast_path.hpp): the
  // OPEN and FORCED_OPEN cases, which need neither the configuration nor
  // the registry.
  static bool rejects_early_on_monotonic(const Hot &hot, uint64_t w) {
    if (StateWord::mode(w) == StateWord::kForcedOpenMode) return true;
    if (StateWord::mode(w) != StateWord::kOpenMode) return false;
    const uint64_t deadline = OpenPeriod::cheap_deadline(
        hot.open_period.load(std::memory_order_relaxed), StateWord::epoch(w));
    return deadline != 0 && platform::coarse_monotonic_ns() < deadline;
  }
  // Whether a call on the live breaker whose state word is `w` is rejected
  // on the hot line alone, without the configuration or the precise clock:
  // FORCED_OPEN; OPEN while the cheap clock shows the deadline far; HALF_OPEN
  // with every probe slot taken and the lease far from running out. False
  // says nothing (allow() decides).
  bool rejects_early(uint64_t w) const {
    switch (StateWord::state(w)) {
      case State::Open:
        return open_rejects_early(w);
      case State::HalfOpen:
        return half_open_rejects_early(w);
      case State::ForcedOpen:
        return true;
      case State::Closed:
      case State::Disabled:
      case State::Free:
        break;
    }
    return false;
  }
  Result done(uint32_t incarnation, const Tally &tally, uint64_t ticket, Outcome outcome);
  // done() for the success or failure of a call whose ticket the caller
  // has checked against the state word `w` it read: a call of this life's
  // CLOSED period in mode kClosedWindowMode (registry/fast_path.hpp).
  Result done_window(uint64_t w, const Tally &tally, bool failure) {
    tally.add(failure ? Counter::Failures : Counter::Successes);
    return done_window_outcome(w, failure);
  }
  // The success of a call admitted in the CLOSED period of state word `w`
  // (mode kClosedWindowMode, the ticket checked against it), held back in
  // the calling thread's own word, unless it is the one that settles them
  // (then false: done_window() records it). For the registry's fast path; the
  // caller counts the success.
  [[gnu::always_inline]] bool holds_success(uint64_t w) const {
    // Not before the window is known to hold minimum_calls: the success
    // that reaches it may trip the breaker, and is judged at once.
    std::atomic<uint64_t> *own = held_.own;
    if (own == nullptr || window_.warm().load(std::memory_order_relaxed) != StateWord::epoch(w) + 1)
      return false;
    // A time window's on a path of its own: only it reads the clock.
    if (cfg_.field<bool, offsetof(Config, shape) + offsetof(WindowShape, by_time)>())
      return holds_timed_success(cfg_, clock_, *own, w);
    // A count window's held successes count as its newest outcomes
    // wherever the head is, so a thread goes on holding while the head is
    // less than half the window past its word's bucket (other threads'
    // settling moves it): they are then still inside when they settle.
    return holds_in(
        cfg_, *own, w, Window::head_stamp(window_),
        cfg_.field<uint32_t, offsetof(Config, shape) + offsetof(WindowShape, buckets)>() / 2);
  }

  // The ticket of a call admitted in CLOSED or DISABLED (state word `w`),
  // stamped with `start` (its admission time in the slow-call unit, 0 for a
  // breaker that does not track slow calls).
  static uint64_t call_ticket(uint64_t w, uint64_t start) {
    return Ticket::make(
        StateWord::epoch(w),
        StateWord::state(w) == State::Closed ? TicketKind::Call : TicketKind::Unguarded, 0, start);
  }
  // `start` of a call admitted at `now` on a breaker with this slow-call
  // threshold.
  static uint64_t call_start(uint64_t slow_call_ns, uint64_t now) {
    return slow_call_ns != 0 ? now >> Config::slow_unit_shift_for(slow_call_ns) : 0;
  }

  // Read-only views: never transition, never consume a probe.
  Result state(uint32_t incarnation, State *out) const;
  Result retry_after(uint32_t incarnation, uint64_t *out_ns) const;
  Result observe(uint32_t incarnation, Observation *out) const;

  // Manual control, from any state.
  Result force(uint32_t incarnation, State target);
  // OPEN now, for `open_ns`, then probing as usual.
  Result trip_for(uint32_t incarnation, uint64_t open_ns);
  // An OPEN breaker stays OPEN until at least `until` (never shorter):
  // no transition, no trip counted, the backoff and the duration as they
  // were. NotOpen in any other state.
  Result hold_open(uint32_t incarnation, uint64_t until);

 private:
  // What a step of allow() found: the call is admitted, rejected, or the
  // state moved and the loop looks again.
  enum class Step { Admitted, Reject, Again };
  static bool admits_every_call(uint64_t w) {
    return StateWord::state(w) == State::Closed || StateWord::state(w) == State::Disabled;
  }
  Result admit_call(uint64_t w, uint64_t slow_call_ns, const Tally &tally, uint64_t *ticket);
  Result reject(uint64_t w, const Tally &tally);
  Step allow_open(uint64_t w, const Config &cfg);
  Step allow_half_open(uint64_t w, const Config &cfg, const Tally &tally, uint64_t *ticket);
  bool open_rejects_early(uint64_t w) const {
    const uint64_t deadline = OpenPeriod::cheap_deadline(
        hot_.open_period.load(std::memory_order_relaxed), StateWord::epoch(w));
    return deadline != 0 && clock_.earliest_now() < deadline;
  }
  bool half_open_rejects_early(uint64_t w) const {
    const ProbeLedger ledger =
        ProbeLedger::read(hot_.probes.load(std::memory_order_acquire), StateWord::epoch(w));
    if (ledger.in_flight() == 0 || ledger.in_flight() < cfg_.half_open_max_calls()) return false;
    // The silent probes' lease runs out at probe_at + half_open_timeout.
    const uint64_t last = hot_.probe_at.load(std::memory_order_acquire);
    const uint64_t lease = cfg_.half_open_timeout_ns();
    return surely_before(last > UINT64_MAX - lease ? UINT64_MAX : last + lease);
  }
  // Whether the clock surely reads before `deadline`, from the cheap clock
  // (exact for a manual clock, whose slack is 0).
  bool surely_before(uint64_t deadline) const {
    const uint64_t slack = clock_.coarse_slack_ns;
    return deadline > slack && clock_.earliest_now() < deadline - slack;
  }
  // Installs an empty probe ledger for `epoch` in place of `seen`, if the
  // state is still `w`.
  void install_empty_ledger(uint64_t w, uint64_t seen, uint32_t epoch);
  Result done_closed(uint64_t w, const Config &cfg, uint64_t ticket, Outcome outcome);
  Result done_recorded(uint64_t w, const Config &cfg, Outcome outcome, bool slow, uint64_t now);
  // A window policy's outcome in its CLOSED period, without slow-call
  // tracking: recorded and judged from a few fields of the configuration
  // (the whole of it only for a trip); a success is judged only if the
  // window moved or is not known warm.
  Result done_window_outcome(uint64_t w, bool failure);
  // Makes the CLOSED word `w` of a count window (mode kClosedWindowMode)
  // quiet if the window, whose newest bucket is `at`, holds no failure and
  // is full.
  void quiet_if_clean(uint64_t w, const Window &win, const Window::Position &at,
                      const WindowShape &shape);
  // After a failure recorded in the count window of word `w`: the word is
  // not left quiet.
  void stay_loud(uint64_t w);
  // holds_success() for a time window (static, so that its caller builds
  // no Breaker for it).
  [[gnu::noinline]] static bool holds_timed_success(const ConfigCell &cfg, const Clock &clock,
                                                    std::atomic<uint64_t> &own, uint64_t w);
  // Holds the success in the thread's word `own` if that holds this
  // period's successes of bucket `stamp`, or of one at most `slack` buckets
  // before it, and is not full.
  [[gnu::always_inline]] static bool holds_in(const ConfigCell &cfg, std::atomic<uint64_t> &own,
                                              uint64_t w, uint64_t stamp, uint32_t slack = 0) {
    const uint64_t h = own.load(std::memory_order_relaxed);
    if (HeldSuccesses::epoch(h) != (StateWord::epoch(w) & StateWord::kEpochMask) ||
        ((stamp - HeldSuccesses::stamp(h)) & kStampMask) > slack ||
        HeldSuccesses::count(h) + 1 >=
            cfg.field<uint8_t, offsetof(Config, shape) + offsetof(WindowShape, held_limit)>())
      return false;
    own.store(h + 1, std::memory_order_relaxed);
    return true;
  }
  // Settles the successes this thread holds back (HeldSuccesses) into the
  // window `win`, with this outcome's (`now` places them in a time window)
  // and `successes` more; false if nothing was recorded.
  bool settle_held(uint64_t w, Window &win, uint64_t now, uint32_t successes, bool failure,
                   Window::Position *at);
  // What judging a window needs of the configuration.
  struct Judging {
    WindowShape shape;
    uint32_t minimum_calls = 0;
    bool rates_failures = true;  // a window policy (not only slow calls)
    uint32_t failure_rate_billionths = 0;
    uint64_t slow_call_ns = 0;
    uint32_t slow_rate_billionths = 0;
    static Judging of(const Config &c) {
      return {c.window_shape(),          c.minimum_calls, c.policy != Policy::Consecutive,
              c.failure_rate_billionths, c.slow_call_ns,  c.slow_rate_billionths};
    }
  };
  // Whether the window, with an outcome just recorded at `at`, trips the
  // breaker of state word `w`, and the trip.
  Result done_judged(uint64_t w, const Judging &j, const Window::Position &at, uint64_t now);
  Result done_probe(uint64_t w, const Config &cfg, uint64_t ticket, Outcome outcome, bool slow);
  // The open duration of the OPEN period with state word `w`.
  uint64_t open_duration(uint64_t w, const Config &cfg) const;
  // Publishes `to` in place of `from`, stamping the transition time first so
  // a reader that sees the new state sees a fresh stamp.
  bool transition(uint64_t from, uint64_t to, uint64_t at, Reason reason);
  // Into OPEN; the winner caches the period's duration (OpenPeriod).
  bool trip(const Config &cfg, uint64_t from, uint64_t at, Reason reason,
            bool explicit_duration = false);
  // Caches the deadline of the OPEN period with state word `w`, opened at
  // `opened_at` for `duration` (OpenPeriod).
  void cache_open_period(uint64_t w, uint64_t opened_at, uint64_t duration) {
    const uint64_t slack = clock_.coarse_slack_ns;
    const uint64_t deadline = opened_at > UINT64_MAX - duration ? 0 : opened_at + duration;
    hot_.open_period.store(
        OpenPeriod::pack(StateWord::epoch(w), deadline > slack ? deadline - slack : 0),
        std::memory_order_relaxed);
  }
  // Into CLOSED with a fresh failure run and an empty window.
  bool close(uint64_t from, uint64_t at, Reason reason);
  uint64_t ticket_start(const Config &cfg, uint64_t now) const {
    return cfg.slow_call_ns == 0 ? 0 : now >> cfg.slow_unit_shift;
  }
  bool slow(const Config &cfg, uint64_t ticket, uint64_t now) const;
  // Gives back a probe slot claimed in a period that ended meanwhile.
  void release_probe(uint32_t epoch, uint32_t seq);
  Window window(const Config &cfg) const { return Window(window_, cfg.window_shape()); }

  Hot &hot_;
  const ConfigCell &cfg_;
  const WindowCells window_;
  const Clock &clock_;
  uint64_t jitter_seed_;
  EventSink *events_;
  HeldCells held_;
};

}  // namespace lazybreaker::core
