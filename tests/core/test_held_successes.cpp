// Successes a thread holds back from a window (core::HeldSuccesses): where
// they count, when they settle and when they are dropped, on the core alone
// (one breaker's words, a manual clock, stripes made up by the test), so
// every placement is exact. docs/policies.md, "Held successes", states
// these bounds.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>

#include "core/breaker.hpp"
#include "core/window.hpp"

using namespace lazybreaker::core;

namespace {

// One window breaker's memory and three thread stripes' held words.
struct Bench {
  Hot hot;
  ConfigCell cfg;
  // Room for the widest window, without slow-call words.
  alignas(64) std::atomic<uint64_t> memory[WindowCells::words(kMaxBuckets, false)] = {};
  WindowCells cells{reinterpret_cast<WindowHeader *>(memory), kMaxBuckets, false};
  Clock clock;
  std::atomic<uint64_t> held[3] = {};
  Config c;

  Bench(Policy policy, uint32_t size_or_buckets, uint32_t minimum, double threshold = 0.5) {
    clock.kind = ClockKind::Manual;
    c.policy = policy;
    c.window_size = size_or_buckets;
    c.window_buckets = size_or_buckets;
    c.window_duration_ns = uint64_t(size_or_buckets) * 10;  // buckets of 10 ns
    c.minimum_calls = minimum;
    c.failure_rate_threshold = threshold;
    c.failure_threshold = 1000;
    c.finish();
    cfg.store(c);
  }
  // Holds up to `limit` - 1 successes whatever the window's size, so that
  // the placements below can be shown on windows of a few outcomes.
  Bench &holding(uint8_t limit) {
    c.shape.held_limit = limit;
    cfg.store(c);
    return *this;
  }
  // The breaker as thread `stripe` (0..2) sees it.
  Breaker as(uint32_t stripe) {
    return Breaker(hot, cfg, cells, clock, 0, nullptr, HeldCells{&held[stripe], held, 1, 3});
  }
  uint64_t word() const { return hot.word.load(); }
  // Counts to a shared total: the counters are not what this tests.
  Tally tally() {
    static Totals totals;
    return {nullptr, nullptr, &totals};
  }
  // A call's success or failure as thread `stripe`, through the general path.
  void outcome(uint32_t stripe, bool failure) {
    Breaker b = as(stripe);
    uint64_t t = 0;
    REQUIRE(b.allow(1, tally(), &t) == Result::Ok);
    if (!failure && b.holds_success(word())) return;
    REQUIRE(b.done(1, tally(), t, failure ? Outcome::Failure : Outcome::Success) == Result::Ok);
  }
  uint32_t held_by(uint32_t stripe) const { return HeldSuccesses::count(held[stripe].load()); }
  double failure_rate() {
    Observation o;
    REQUIRE(as(0).observe(1, &o) == Result::Ok);
    return o.failure_rate;
  }
};

}  // namespace

TEST_CASE("a success is held back only once the window is known to hold minimum_calls") {
  Bench b(Policy::CountWindow, 4, 4);
  b.holding(HeldSuccesses::kMaxLimit).as(0).begin_life(1, b.c);
  b.outcome(0, true);
  b.outcome(0, true);
  b.outcome(0, false);
  CHECK(b.held_by(0) == 0);  // 3 outcomes: not warm, recorded at once
  b.outcome(0, false);       // the 4th reaches the minimum: judged at once, and trips
  CHECK(StateWord::state(b.word()) == State::Open);
}

TEST_CASE("a count window holds successes from its own minimum on, below a larger configured one") {
  // 25 buckets of 4: a full window always holds 97, which is the window's
  // minimum for minimum_calls 100 (docs/policies.md, count window).
  Bench b(Policy::CountWindow, 100, 100);
  b.as(0).begin_life(1, b.c);
  for (int n = 0; n < 60; ++n) b.outcome(0, false);
  for (int n = 0; n < 36; ++n) b.outcome(0, true);
  b.outcome(0, false);  // the 97th outcome: judged, and the window known to hold its minimum
  CHECK(b.held_by(0) == 0);
  b.outcome(0, false);  // held, though the window holds 98 of the configured 100
  CHECK(b.held_by(0) == 1);
  CHECK(StateWord::state(b.word()) == State::Closed);
}

TEST_CASE("held successes are the newest outcomes of a count window, and push the oldest out") {
  Bench b(Policy::CountWindow, 4, 4, 0.75);  // 4 buckets of 1
  b.holding(HeldSuccesses::kMaxLimit).as(0).begin_life(1, b.c);
  b.outcome(0, false);
  b.outcome(0, true);
  b.outcome(0, true);   // S F F: under the minimum
  b.outcome(1, false);  // recorded: S F F S, warm, 2 of 4
  CHECK(b.held_by(1) == 0);
  CHECK(b.failure_rate() == doctest::Approx(0.5));
  // Nothing recorded since stripe 1's outcome: its next successes are held.
  b.outcome(1, false);  // F F S S
  CHECK(b.held_by(1) == 1);
  CHECK(b.failure_rate() == doctest::Approx(0.5));
  b.outcome(1, false);  // F S S S
  CHECK(b.held_by(1) == 2);
  CHECK(b.failure_rate() == doctest::Approx(0.25));
  // Stripe 0's failure is judged with stripe 1's held successes: of
  // S F F S S S F the last 4 hold one failure.
  b.outcome(0, true);
  CHECK(b.failure_rate() == doctest::Approx(0.25));
  CHECK(StateWord::state(b.word()) == State::Closed);
}

TEST_CASE("a thread holds fewer than the breaker's limit; the next success settles them all") {
  for (const uint32_t size : {100u, 1000u}) {
    CAPTURE(size);
    Bench b(Policy::CountWindow, size, 1);
    // A quarter of the window, at most kMaxLimit: 25 of the default 100.
    const uint32_t limit = size == 100 ? 25 : 250;
    CHECK(b.c.shape.held_limit == limit);
    b.as(0).begin_life(1, b.c);
    b.outcome(0, false);  // warm from the first outcome (minimum 1)
    for (uint32_t n = 1; n < limit; ++n) b.outcome(0, false);
    CHECK(b.held_by(0) == limit - 1);
    b.outcome(0, false);
    CHECK(b.held_by(0) == 0);
    const Window win(b.cells, b.c.window_shape());
    const WindowCounts c = win.sum(win.latest(0));
    CHECK(c.calls == 1 + limit);
    CHECK(c.failures == 0);
  }
}

TEST_CASE("a time window holds up to 254 successes in one bucket; the 255th settles them all") {
  // 4 buckets of 10 ns; the manual clock stays in the first.
  Bench b(Policy::TimeWindow, 4, 1);
  CHECK(b.c.shape.held_limit == 255);
  b.as(0).begin_life(1, b.c);
  b.outcome(0, false);  // warm from the first outcome (minimum 1)
  for (int n = 1; n < 255; ++n) b.outcome(0, false);
  CHECK(b.held_by(0) == 254);
  CHECK(b.failure_rate() == doctest::Approx(0.0));
  b.outcome(0, true);  // a failure settles them, and is judged with them
  CHECK(b.held_by(0) == 0);
  const Window win(b.cells, b.c.window_shape());
  const WindowCounts c = win.sum(win.latest(0));
  CHECK(c.calls == 256);
  CHECK(c.failures == 1);
  for (int n = 0; n < 255; ++n) b.outcome(0, false);
  CHECK(b.held_by(0) == 0);  // the 255th success settled the 254 held
  CHECK(win.sum(win.latest(0)).calls == 256 + 255);
}

TEST_CASE("a count window under 8 outcomes holds nothing back; a time window up to kMaxLimit") {
  Bench small(Policy::CountWindow, 7, 1);
  CHECK(small.c.shape.held_limit == 1);
  small.as(0).begin_life(1, small.c);
  for (int n = 0; n < 5; ++n) small.outcome(0, false);
  CHECK(small.held_by(0) == 0);
  Bench timed(Policy::TimeWindow, 4, 1);
  CHECK(timed.c.shape.held_limit == HeldSuccesses::kMaxLimit);
  Bench consecutive(Policy::Consecutive, 4, 1);
  CHECK(consecutive.c.shape.held_limit == 0);
}

TEST_CASE("held successes of another CLOSED period, or of a bucket that left, count nowhere") {
  Bench b(Policy::CountWindow, 4, 1, 1.0);  // 4 buckets of 1, trips only at 100%
  b.holding(HeldSuccesses::kMaxLimit).as(0).begin_life(1, b.c);
  b.outcome(0, false);
  b.outcome(1, false);
  b.outcome(1, false);  // held by stripe 1 in bucket 1
  CHECK(b.held_by(1) == 1);
  b.outcome(0, true);
  b.outcome(0, true);
  b.outcome(2, false);                              // stripe 2's first outcome: recorded
  CHECK(b.failure_rate() == doctest::Approx(0.5));  // F F S + the held S
  b.outcome(0, true);                               // bucket 1 has left, with what it held: F F S F
  CHECK(b.failure_rate() == doctest::Approx(0.75));
  // Stripe 1's next outcome drops it rather than settle it: F S F S.
  b.outcome(1, false);
  const Window win(b.cells, b.c.window_shape());
  CHECK(win.sum(win.latest(0)).calls == 4);
  CHECK(win.sum(win.latest(0)).failures == 2);
  CHECK(b.held_by(1) == 0);
  // And a word from an earlier period is nobody's.
  b.held[2].store(
      HeldSuccesses::pack(StateWord::epoch(b.word()) - 1, Window::head_stamp(b.cells), 9));
  CHECK(win.held(HeldCells{nullptr, b.held, 1, 3}, StateWord::epoch(b.word()), win.latest(0)) == 0);
}

TEST_CASE("a time window's held successes settle into their own bucket while it is inside") {
  Bench b(Policy::TimeWindow, 4, 1);  // 4 buckets of 10 ns
  b.as(0).begin_life(1, b.c);
  b.clock.manual_ns = 15;
  b.outcome(0, false);  // recorded: the first outcome makes the window warm
  b.outcome(0, false);  // held in bucket 1
  b.outcome(0, false);
  CHECK(b.held_by(0) == 2);
  b.clock.manual_ns = 35;
  b.outcome(0, true);  // bucket 3: the held two go to bucket 1, the failure to 3
  const Window win(b.cells, b.c.window_shape());
  WindowCounts c = win.sum(win.latest(35));
  CHECK(c.calls == 4);
  CHECK(c.failures == 1);
  b.clock.manual_ns = 45;
  b.outcome(0, false);  // bucket 4: recorded (the thread's word was bucket 3's)
  b.outcome(0, false);  // held in bucket 4
  CHECK(b.held_by(0) == 1);
  b.clock.manual_ns = 85;
  // Bucket 4 is 4 buckets behind 8: it and what it held have left.
  CHECK(win.held(HeldCells{nullptr, b.held, 1, 3}, StateWord::epoch(b.word()), win.latest(85)) ==
        0);
  CHECK(b.failure_rate() == 0.0);
}

TEST_CASE("a time window below minimum_calls is judged with the held successes counted in") {
  Bench b(Policy::TimeWindow, 4, 5, 0.4);  // 4 buckets of 10 ns, minimum 5
  b.as(0).begin_life(1, b.c);
  b.clock.manual_ns = 5;
  for (int n = 0; n < 4; ++n) b.outcome(0, false);
  b.outcome(0, true);  // 1 of 5 in bucket 0: warm
  b.clock.manual_ns = 15;
  b.outcome(1, false);  // recorded in bucket 1 (stripe 1's first)
  b.outcome(1, false);
  b.outcome(1, false);  // two held in bucket 1
  CHECK(b.held_by(1) == 2);
  b.clock.manual_ns = 45;  // bucket 0 has left
  b.outcome(0, true);      // 1 S + 2 held + 1 F: under the minimum, no longer warm
  CHECK(StateWord::state(b.word()) == State::Closed);
  b.outcome(0, true);  // 1 S + 2 held + 2 F = 5: 2 of 5 reaches 0.4
  CHECK(StateWord::state(b.word()) == State::Open);
}
