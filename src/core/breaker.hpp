// The circuit breaker state machine: pure logic over one breaker's words, a
// clock and a counter cell. No handles, names, memory management or I/O.
// See docs/semantics.md for the behaviour this implements.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/clock.hpp"
#include "core/words.hpp"

namespace lazybreaker::core {

// A validated configuration (half_open_timeout_ns already resolved).
struct Config {
  uint32_t failure_threshold = 5;
  uint64_t open_duration_ns = 30'000'000'000ull;
  uint32_t half_open_max_calls = 1;
  uint32_t half_open_success_threshold = 1;
  uint64_t half_open_timeout_ns = 30'000'000'000ull;
};

// A breaker's configuration as stored in its slot. Written when a breaker is
// created, before its state is published; fields are atomics because a
// thread racing a destroy may read a recycled slot (and then fails the
// incarnation check).
class ConfigCell {
 public:
  void store(const Config &c) {
    failure_threshold_.store(c.failure_threshold, std::memory_order_relaxed);
    open_duration_ns_.store(c.open_duration_ns, std::memory_order_relaxed);
    half_open_max_calls_.store(c.half_open_max_calls, std::memory_order_relaxed);
    half_open_success_threshold_.store(c.half_open_success_threshold, std::memory_order_relaxed);
    half_open_timeout_ns_.store(c.half_open_timeout_ns, std::memory_order_relaxed);
  }
  uint32_t failure_threshold() const { return failure_threshold_.load(std::memory_order_relaxed); }
  uint64_t open_duration_ns() const { return open_duration_ns_.load(std::memory_order_relaxed); }
  uint32_t half_open_max_calls() const {
    return half_open_max_calls_.load(std::memory_order_relaxed);
  }
  uint32_t half_open_success_threshold() const {
    return half_open_success_threshold_.load(std::memory_order_relaxed);
  }
  uint64_t half_open_timeout_ns() const {
    return half_open_timeout_ns_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint32_t> failure_threshold_{0};
  std::atomic<uint64_t> open_duration_ns_{0};
  std::atomic<uint32_t> half_open_max_calls_{0};
  std::atomic<uint32_t> half_open_success_threshold_{0};
  std::atomic<uint64_t> half_open_timeout_ns_{0};
};

// The words every call touches, in one cache line.
struct alignas(64) Hot {
  std::atomic<uint64_t> word{0};        // StateWord
  std::atomic<uint64_t> changed_at{0};  // clock at the last transition; only ever grows
  std::atomic<uint64_t> probes{0};      // ProbeLedger of the current HALF_OPEN epoch
  std::atomic<uint64_t> probe_at{0};    // clock at the last probe admission; only ever grows
  std::atomic<uint64_t> trips{0};
};
static_assert(sizeof(Hot) == 64);

enum class Counter : unsigned { Admitted, Rejected, Successes, Failures, Ignored, Count };

// One thread's (or one stripe's) counts for one breaker.
struct Cell {
  std::atomic<uint64_t> n[unsigned(Counter::Count)];
};

// Where the calling thread's counts go. A cell written by one thread only is
// bumped with a plain load and store: no locked instruction, no contention.
struct Tally {
  Cell *cell;
  bool exclusive;

  void add(Counter c) const {
    std::atomic<uint64_t> &n = cell->n[unsigned(c)];
    if (exclusive)
      n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    else
      n.fetch_add(1, std::memory_order_relaxed);
  }
};

enum class Outcome : uint32_t { Success = 0, Failure = 1, Ignored = 2 };

enum class Result { Ok, Rejected, WrongIncarnation, BadTicket };

class Breaker {
 public:
  Breaker(Hot &hot, const ConfigCell &cfg, const Clock &clock)
      : hot_(hot), cfg_(cfg), clock_(clock) {}

  // Starts a new life of the slot, CLOSED; the epoch goes on from the last
  // life, so tickets from it stay stale.
  void begin_life(uint32_t incarnation);
  // Ends this life: the incarnation moves on. False if `incarnation` is not
  // the current one (someone else ended it, or it never began).
  bool end_life(uint32_t incarnation);

  Result allow(uint32_t incarnation, const Tally &tally, uint64_t *ticket) {
    const uint64_t w = hot_.word.load(std::memory_order_acquire);
    if ((w & StateWord::kIdentityMask) == StateWord::identity(incarnation, State::Closed)) {
      *ticket = Ticket::make(StateWord::epoch(w), TicketKind::Call);
      tally.add(Counter::Admitted);
      return Result::Ok;
    }
    return allow_slow(incarnation, tally, ticket);
  }

  Result done(uint32_t incarnation, const Tally &tally, uint64_t ticket, Outcome outcome) {
    const uint64_t w = hot_.word.load(std::memory_order_acquire);
    // The common case: a success in CLOSED with no failure run to end writes
    // nothing shared.
    if (outcome == Outcome::Success &&
        (w & (StateWord::kIdentityMask | (StateWord::kAuxMax << StateWord::kAuxShift))) ==
            StateWord::identity(incarnation, State::Closed) &&
        ticket == Ticket::make(StateWord::epoch(w), TicketKind::Call)) {
      tally.add(Counter::Successes);
      return Result::Ok;
    }
    return done_slow(w, incarnation, tally, ticket, outcome);
  }

  // Read-only views: never transition, never consume a probe.
  Result state(uint32_t incarnation, State *out) const;
  Result retry_after(uint32_t incarnation, uint64_t *out_ns) const;
  Result consecutive_failures(uint32_t incarnation, uint32_t *out) const;

  // Manual control, from any state.
  Result force(uint32_t incarnation, State target);

 private:
  Result allow_slow(uint32_t incarnation, const Tally &tally, uint64_t *ticket);
  Result done_slow(uint64_t w, uint32_t incarnation, const Tally &tally, uint64_t ticket,
                   Outcome outcome);
  Result done_closed(uint64_t w, uint64_t ticket, Outcome outcome);
  Result done_probe(uint64_t w, uint64_t ticket, Outcome outcome);
  // The open duration of an OPEN period, given the trips since the last close.
  uint64_t open_duration(uint32_t trips_since_close) const;
  // Publishes `to` in place of `from`, stamping the transition time first
  // so a reader that sees the new state sees a fresh stamp.
  bool transition(uint64_t from, uint64_t to, uint64_t at);
  bool trip(uint64_t from, uint64_t at);

  Hot &hot_;
  const ConfigCell &cfg_;
  const Clock &clock_;
};

}  // namespace lazybreaker::core
