// A count window whose last N outcomes are all successes is quiet
// (docs/policies.md, "A clean count window is quiet"): its calls take the
// write-free path of a consecutive breaker without a failure run, and the
// first failure makes it loud again and lands in the window as it stood,
// so every rate and every trip is the one the window would give had each
// success been recorded.
#include "published_quiet_path.h"

#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>

#include <atomic>
#include <thread>

#include "fixture.hpp"

namespace {

lb_quiet thread_quiet() {
  lb_quiet q;
  REQUIRE(lb_quiet_init(&q, 0) == CB_OK);
  return q;
}

bool quiet_now(const lb_quiet &q, cb_handle h) {
  return lb_quiet_is_quiet(h, lb_quiet_word(&q, h));
}

// One success through the published rules; whether the library was left out.
bool native_success(const lb_quiet &q, cb_handle h) {
  cb_ticket t = 0;
  int admitted = 0, reported = 0;
  REQUIRE(lb_quiet_allow(&q, h, &t, &admitted) == CB_OK);
  REQUIRE(lb_quiet_done(&q, h, t, CB_SUCCESS, &reported) == CB_OK);
  return admitted != 0 && reported != 0;
}

}  // namespace

TEST_CASE("a count window goes quiet once it is full of successes, and not before") {
  // 10 buckets of 1: full at 10 outcomes.
  ManualRegistry r;
  const cb_handle h = r.create(count_window(10, 5, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 9, CB_SUCCESS);
  CHECK_FALSE(quiet_now(q, h));
  calls(h, 3, CB_SUCCESS);
  CHECK(quiet_now(q, h));
  for (int i = 0; i < 1000; ++i) REQUIRE(native_success(q, h));
  const cb_stats s = stats(h);
  CHECK(s.successes == 1012);
  CHECK(s.admitted == 1012);
  CHECK(s.failure_rate == 0.0);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("a window that holds a failure is not quiet until the failure has left it") {
  ManualRegistry r;
  const cb_handle h = r.create(count_window(10, 5, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 20, CB_SUCCESS);
  REQUIRE(quiet_now(q, h));
  call(h, CB_FAILURE);
  CHECK_FALSE(quiet_now(q, h));
  CHECK(stats(h).failure_rate == doctest::Approx(0.1));
  calls(h, 8, CB_SUCCESS);  // the failure is still among the last 10
  CHECK_FALSE(quiet_now(q, h));
  CHECK(stats(h).failure_rate == doctest::Approx(0.1));
  calls(h, 3, CB_SUCCESS);  // and now it has left
  CHECK(quiet_now(q, h));
  CHECK(stats(h).failure_rate == 0.0);
}

TEST_CASE("after a quiet stretch, failures trip exactly where the recorded window would") {
  // 5 failures of the last 10 reach 0.5: the fifth trips, however many
  // successes went by quietly before them.
  ManualRegistry r;
  const cb_handle h = r.create(count_window(10, 10, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 12, CB_SUCCESS);
  REQUIRE(quiet_now(q, h));
  for (int i = 0; i < 100'000; ++i) REQUIRE(native_success(q, h));
  calls(h, 4, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).failure_rate == doctest::Approx(0.4));
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("a wide window: a failure after a quiet stretch is judged against a full window") {
  // 25 buckets of 4: a full window holds 97 to 100 outcomes.
  ManualRegistry r;
  const cb_handle h = r.create(count_window(100, 100, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 200, CB_SUCCESS);
  REQUIRE(quiet_now(q, h));
  for (int i = 0; i < 10'000; ++i) REQUIRE(native_success(q, h));
  call(h, CB_FAILURE);
  // 1 failure of K, K from 97 to 100 (docs/policies.md; every K:
  // test_quiet_window_bound.cpp).
  const double rate = stats(h).failure_rate;
  CHECK(rate >= 1.0 / 100);
  CHECK(rate <= 1.0 / 97);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("a ticket taken while loud and failed once the window is quiet still counts") {
  ManualRegistry r;
  const cb_handle h = r.create(count_window(10, 5, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 9, CB_SUCCESS);
  const cb_ticket loud = admit(h);
  calls(h, 5, CB_SUCCESS);
  REQUIRE(quiet_now(q, h));
  REQUIRE(cb_done(h, loud, CB_FAILURE) == CB_OK);
  CHECK_FALSE(quiet_now(q, h));
  CHECK(stats(h).failure_rate == doctest::Approx(0.1));
}

TEST_CASE("a ticket taken while quiet and failed once the window is loud still counts") {
  ManualRegistry r;
  const cb_handle h = r.create(count_window(10, 5, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 12, CB_SUCCESS);
  REQUIRE(quiet_now(q, h));
  const cb_ticket quiet = admit(h);
  call(h, CB_FAILURE);
  REQUIRE_FALSE(quiet_now(q, h));
  REQUIRE(cb_done(h, quiet, CB_FAILURE) == CB_OK);
  CHECK(stats(h).failure_rate == doctest::Approx(0.2));
  // A success of a quiet ticket once loud is recorded as any other.
  const cb_ticket another = admit(h);
  REQUIRE(cb_done(h, another, CB_SUCCESS) == CB_OK);
  CHECK(stats(h).failure_rate == doctest::Approx(0.2));
}

TEST_CASE("a time window and a count window with slow-call tracking never go quiet") {
  ManualRegistry r;
  const cb_handle timed = r.create(time_window(1'000'000'000, 10, 5, 0.5));
  cb_config slow = count_window(10, 5, 0.5);
  slow.slow_call_ns = 1'000'000;
  const cb_handle tracked = r.create(slow);
  const lb_quiet q = thread_quiet();
  calls(timed, 100, CB_SUCCESS);
  calls(tracked, 100, CB_SUCCESS);
  CHECK_FALSE(quiet_now(q, timed));
  CHECK_FALSE(quiet_now(q, tracked));
}

TEST_CASE("cb_reset empties a quiet window: loud until it is full again") {
  ManualRegistry r;
  const cb_handle h = r.create(count_window(10, 5, 0.5));
  const lb_quiet q = thread_quiet();
  calls(h, 12, CB_SUCCESS);
  REQUIRE(quiet_now(q, h));
  REQUIRE(cb_reset(h) == CB_OK);
  CHECK_FALSE(quiet_now(q, h));
  calls(h, 5, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("a failure racing the successes that make the window quiet is never lost") {
  // Each round: an old failure at the edge of a window of 40 (20 buckets
  // of 2, a thread holds up to 10 successes back), then two threads whose
  // successes push it out and settle (and so try to make the window quiet)
  // while this thread fails once more. However they interleave, the new
  // failure is in the window once they are done (24 outcomes at most came
  // after it), so the word must be loud and the rate above 0.
  constexpr int kRounds = 2000;
  MonotonicRegistry r;
  const cb_handle h = r.create(count_window(40, 10, 0.99));
  const lb_quiet q = thread_quiet();
  std::atomic<int> round{0}, finished{0};
  auto succeed = [&] {
    const lb_quiet mine = thread_quiet();
    for (int seen = 1; seen <= kRounds; ++seen) {
      while (round.load() < seen) std::this_thread::yield();
      for (int i = 0; i < 12; ++i) {
        cb_ticket t = 0;
        int native = 0;
        REQUIRE(lb_quiet_allow(&mine, h, &t, &native) == CB_OK);
        REQUIRE(lb_quiet_done(&mine, h, t, CB_SUCCESS, &native) == CB_OK);
      }
      finished.fetch_add(1);
    }
  };
  std::thread a(succeed), b(succeed);
  int loud_rounds = 0;
  for (int n = 1; n <= kRounds; ++n) {
    call(h, CB_FAILURE);
    calls(h, 36, CB_SUCCESS);
    round.store(n);
    call(h, CB_FAILURE);
    while (finished.load() < 2 * n) std::this_thread::yield();
    loud_rounds += !quiet_now(q, h) && stats(h).failure_rate > 0 ? 1 : 0;
  }
  a.join();
  b.join();
  CHECK(loud_rounds == kRounds);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}
