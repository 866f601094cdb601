// When an outcome judges a rate window (docs/policies.md, "Which outcome
// judges the window"): the minimum a count window uses, which successes are
// judged, and what settling held successes does, through the C ABI on a
// manual clock. Every call here comes from one thread, so where its held
// successes go is exact.
#include "fixture.hpp"

namespace {

// A count window of 100 (25 buckets of 4, so a full window holds 97 to 100
// outcomes) brought to 100 outcomes, 49 of them failed, the failures last:
// no failure reached 0.5 when it was judged (k failures of 51 + k). The
// bucket of outcomes 1-4, all successes, is the next to leave: once it has,
// the window holds 49 failures of 97, over 0.5.
void fill_to_the_edge(cb_handle h) {
  calls(h, 51, CB_SUCCESS);
  calls(h, 49, CB_FAILURE);
  REQUIRE(cb_state(h) == CB_STATE_CLOSED);
  REQUIRE(stats(h).failure_rate == doctest::Approx(0.49));
}

}  // namespace

TEST_CASE("count window: minimum_calls is the window's own, min(minimum_calls, (n - 1) w + 1)") {
  // 25 buckets of 4: a full window always holds 97, so 97 outcomes are
  // enough, not the configured 100.
  ManualRegistry r;
  const cb_handle h = r.create(count_window(100, 100, 0.5));
  calls(h, 96, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  call(h, CB_SUCCESS);  // the 97th outcome: judged, 96 of 97 failed
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("count window: a success after the window held its minimum is not judged") {
  // The window has held 97 outcomes (its minimum) and then 100; the
  // success that starts a bucket pushes outcomes 1-4 out, and the bucketed
  // window reads 49 of 97. Judged, that would trip; it is not: of the last
  // N outcomes a success only takes an older one's place.
  ManualRegistry r;
  const cb_handle h = r.create(count_window(100, 100, 0.5));
  fill_to_the_edge(h);
  call(h, CB_SUCCESS);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).failure_rate == doctest::Approx(49.0 / 97));
  call(h, CB_FAILURE);  // judged: 50 of 98
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("count window: the success that settles held successes does not judge the window") {
  // 24 successes are held back (held_limit 25 for a window of 100); the
  // 25th settles all 25 into the window, filling six buckets and starting
  // a seventh, so outcomes 1-28 leave: 49 failures of 97. Settling judges
  // nothing; the next failure judges the window with them.
  ManualRegistry r;
  const cb_handle h = r.create(count_window(100, 100, 0.5));
  fill_to_the_edge(h);
  calls(h, 24, CB_SUCCESS);
  // Held, as the newest outcomes: 24 and the newest 19 buckets fit in 100.
  CHECK(stats(h).failure_rate == doctest::Approx(0.49));
  call(h, CB_SUCCESS);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).failure_rate == doctest::Approx(49.0 / 97));
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("count window with slow-call tracking: a fast success is not judged either") {
  // Nothing is held back (every outcome is timed and recorded at once),
  // and the rule is the same: the success that starts a bucket changes
  // nothing until the next judged outcome, a failure here.
  ManualRegistry r;
  cb_config c = count_window(100, 100, 0.5);
  c.slow_call_ns = 1'000'000;
  const cb_handle h = r.create(c);
  fill_to_the_edge(h);
  call(h, CB_SUCCESS);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).failure_rate == doctest::Approx(49.0 / 97));
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("time window: a success that starts a bucket is judged, with nothing held") {
  // 10 ms in 10 buckets. Four successes at t=0 reach the minimum, three
  // failures at t=5 ms are judged (3 of 7). At t=10 ms the successes have
  // left; the thread holds nothing (its last outcome was a failure), and the
  // success that starts the new bucket finds 3 of 4 failed.
  ManualRegistry r;
  const cb_handle h = r.create(time_window(10'000'000, 10, 4, 0.5));
  calls(h, 4, CB_SUCCESS);
  r.advance(5'000'000);
  calls(h, 3, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  r.advance(5'000'000);
  call(h, CB_SUCCESS);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("time window: a success that starts a bucket is judged with the ones held settled") {
  // As above, with two successes held at t=5 ms: they settle into their
  // own bucket, still inside the window, and the judge counts them.
  ManualRegistry r;
  const cb_handle h = r.create(time_window(10'000'000, 10, 4, 0.5));
  calls(h, 4, CB_SUCCESS);
  r.advance(5'000'000);
  calls(h, 3, CB_FAILURE);
  calls(h, 2, CB_SUCCESS);  // held: the window is warm
  CHECK(stats(h).failure_rate == doctest::Approx(3.0 / 9));
  r.advance(5'000'000);
  call(h, CB_SUCCESS);  // 3 of 6: 0.5
  CHECK(cb_state(h) == CB_STATE_OPEN);
}
