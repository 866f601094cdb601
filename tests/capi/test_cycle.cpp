// The consecutive-failures cycle with lazy recovery, one behaviour a test,
// driven by a manual clock.
#include "fixture.hpp"

TEST_CASE("a new breaker is CLOSED and admits calls") {
  ManualRegistry r;
  const cb_handle h = r.create(config(3, 1000));
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(retry_after(h) == 0);
  call(h, CB_SUCCESS);
  CHECK(stats(h).admitted == 1);
}

TEST_CASE("the N-th consecutive failure trips, not the one before") {
  ManualRegistry r;
  const cb_handle h = r.create(config(3, 1000));
  call(h, CB_FAILURE);
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).consecutive_failures == 2);
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  CHECK(stats(h).trips == 1);
}

TEST_CASE("a success ends the failure run") {
  ManualRegistry r;
  const cb_handle h = r.create(config(3, 1000));
  call(h, CB_FAILURE);
  call(h, CB_FAILURE);
  call(h, CB_SUCCESS);
  CHECK(stats(h).consecutive_failures == 0);
  call(h, CB_FAILURE);
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("an ignored outcome neither extends nor ends a failure run") {
  ManualRegistry r;
  const cb_handle h = r.create(config(2, 1000));
  call(h, CB_FAILURE);
  call(h, CB_IGNORED);
  CHECK(stats(h).consecutive_failures == 1);
  CHECK(stats(h).ignored == 1);
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("OPEN rejects until exactly the open duration has passed") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  call(h, CB_FAILURE);
  CHECK(rejected(h));
  CHECK(retry_after(h) == 1000);
  r.advance(999);
  CHECK(retry_after(h) == 1);
  CHECK(rejected(h));
  r.advance(1);
  CHECK(retry_after(h) == 0);
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE("cb_state and cb_retry_after never transition and never take the probe") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  call(h, CB_FAILURE);
  r.advance(5000);
  for (int i = 0; i < 3; ++i) {
    CHECK(cb_state(h) == CB_STATE_OPEN);
    CHECK(retry_after(h) == 0);
  }
  cb_ticket probe = 0;
  REQUIRE(cb_allow(h, &probe) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  CHECK(retry_after(h) > 0);
}

TEST_CASE("HALF_OPEN admits half_open_max_calls probes and rejects the rest") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 3, 3));
  call(h, CB_FAILURE);
  r.advance(1000);
  admit(h);
  admit(h);
  admit(h);
  CHECK(rejected(h));
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE("a probe success frees its slot for the next probe") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 1, 2));
  call(h, CB_FAILURE);
  r.advance(1000);
  CHECK(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  CHECK(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("half_open_success_threshold probe successes close with a fresh failure run") {
  ManualRegistry r;
  const cb_handle h = r.create(config(2, 1000, 2, 2));
  call(h, CB_FAILURE);
  call(h, CB_FAILURE);
  r.advance(1000);
  const cb_ticket a = admit(h), b = admit(h);
  CHECK(cb_done(h, a, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  CHECK(cb_done(h, b, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).consecutive_failures == 0);
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("one probe failure re-opens with a fresh open duration") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 2, 2));
  call(h, CB_FAILURE);
  r.advance(1500);
  const cb_ticket a = admit(h);
  r.advance(200);
  CHECK(cb_done(h, a, CB_FAILURE) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  CHECK(retry_after(h) == 1000);
  CHECK(stats(h).trips == 2);
}

TEST_CASE("an ignored probe frees its slot and counts toward nothing") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 1, 1));
  call(h, CB_FAILURE);
  r.advance(1000);
  CHECK(cb_done(h, admit(h), CB_IGNORED) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  CHECK(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("a probe ticket reported twice counts once") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 2, 2));
  call(h, CB_FAILURE);
  r.advance(1000);
  const cb_ticket a = admit(h);
  CHECK(cb_done(h, a, CB_SUCCESS) == CB_OK);
  CHECK(cb_done(h, a, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  // The duplicate freed no second slot: two more probes fit, not three.
  admit(h);
  admit(h);
  CHECK(rejected(h));
}

TEST_CASE("a stale failure from before the trip does not extend OPEN") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  const cb_ticket slow = admit(h);
  call(h, CB_FAILURE);
  REQUIRE(cb_state(h) == CB_STATE_OPEN);
  r.advance(600);
  CHECK(cb_done(h, slow, CB_FAILURE) == CB_OK);
  CHECK(retry_after(h) == 400);
  CHECK(stats(h).trips == 1);
  CHECK(stats(h).failures == 2);
}

TEST_CASE("a late success does not close a breaker that re-opened") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  const cb_ticket slow = admit(h);
  call(h, CB_FAILURE);
  r.advance(1000);
  CHECK(cb_done(h, admit(h), CB_FAILURE) == CB_OK);  // the probe fails: OPEN again
  CHECK(cb_done(h, slow, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("a stale success from before a trip does not close HALF_OPEN") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  const cb_ticket slow = admit(h);
  call(h, CB_FAILURE);
  r.advance(1000);
  admit(h);
  CHECK(cb_done(h, slow, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE("a silent probe is treated as failed once its lease runs out") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 1, 1, 300));
  call(h, CB_FAILURE);
  r.advance(1000);
  const cb_ticket lost = admit(h);
  r.advance(299);
  CHECK(rejected(h));
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  r.advance(1);
  CHECK(rejected(h));  // this call finds the lease out: OPEN as of now
  CHECK(cb_state(h) == CB_STATE_OPEN);
  CHECK(retry_after(h) == 1000);
  CHECK(stats(h).trips == 2);
  r.advance(1000);
  CHECK(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(cb_done(h, lost, CB_SUCCESS) == CB_OK);  // too late: stale
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("an expired lease found late re-opens as of its expiry, not as of the call") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 1, 1, 300));
  call(h, CB_FAILURE);
  r.advance(1000);
  admit(h);
  r.advance(300 + 1000);  // the lease ran out 1000 ns ago
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_OK);  // so the next probe is due now
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE("half_open_timeout_ns 0 means the open duration") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 1, 1, 0));
  call(h, CB_FAILURE);
  r.advance(1000);
  admit(h);
  r.advance(999);
  CHECK(rejected(h));
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  r.advance(1);
  CHECK(rejected(h));
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("retry_after in a full HALF_OPEN counts the lease and the next open duration") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 1, 1, 300));
  call(h, CB_FAILURE);
  r.advance(1000);
  admit(h);
  r.advance(100);
  CHECK(retry_after(h) == 200 + 1000);
}

TEST_CASE("FORCED_OPEN rejects everything until reset") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  REQUIRE(cb_force_open(h) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_FORCED_OPEN);
  CHECK(rejected(h));
  CHECK(retry_after(h) == UINT64_MAX);
  r.advance(1'000'000);
  CHECK(rejected(h));
  REQUIRE(cb_reset(h) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  call(h, CB_SUCCESS);
}

TEST_CASE("DISABLED admits everything and its outcomes feed only the statistics") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  REQUIRE(cb_disable(h) == CB_OK);
  for (int i = 0; i < 10; ++i) call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_DISABLED);
  CHECK(stats(h).failures == 10);
  CHECK(stats(h).trips == 0);
  REQUIRE(cb_reset(h) == CB_OK);
  call(h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("a ticket issued before a manual transition is stale") {
  ManualRegistry r;
  const cb_handle h = r.create(config(2, 1000));
  call(h, CB_FAILURE);
  const cb_ticket before = admit(h);
  REQUIRE(cb_reset(h) == CB_OK);
  CHECK(stats(h).consecutive_failures == 0);
  CHECK(cb_done(h, before, CB_FAILURE) == CB_OK);
  CHECK(stats(h).consecutive_failures == 0);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("reset from OPEN closes and admits at once") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  call(h, CB_FAILURE);
  REQUIRE(cb_reset(h) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(retry_after(h) == 0);
  call(h, CB_SUCCESS);
}

TEST_CASE("statistics count every admission, rejection and outcome in every state") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  const cb_ticket slow = admit(h);
  call(h, CB_FAILURE);  // trips
  CHECK(rejected(h));
  CHECK(cb_done(h, slow, CB_IGNORED) == CB_OK);  // stale, still counted
  r.advance(1000);
  call(h, CB_SUCCESS);  // the probe closes
  const cb_stats s = stats(h);
  CHECK(s.admitted == 3);
  CHECK(s.rejected == 1);
  CHECK(s.successes == 1);
  CHECK(s.failures == 1);
  CHECK(s.ignored == 1);
  CHECK(s.trips == 1);
}

TEST_CASE("the cycle repeats: trip, probe, close, trip again") {
  ManualRegistry r;
  const cb_handle h = r.create(config(2, 1000));
  for (int round = 1; round <= 5; ++round) {
    call(h, CB_FAILURE);
    call(h, CB_FAILURE);
    REQUIRE(cb_state(h) == CB_STATE_OPEN);
    r.advance(1000);
    call(h, CB_SUCCESS);
    REQUIRE(cb_state(h) == CB_STATE_CLOSED);
    CHECK(stats(h).trips == uint64_t(round));
  }
}

TEST_CASE("OPEN near the end of a manual clock's range still rejects and probes exactly") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  r.advance(UINT64_MAX - 1500);
  call(h, CB_FAILURE);
  CHECK(rejected(h));
  CHECK(retry_after(h) == 1000);
  r.advance(999);
  CHECK(rejected(h));
  r.advance(1);
  CHECK(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

namespace {

// cb_retry_after's promise: 0 exactly when cb_allow would admit a call now.
// Checks it, then makes that call (which may move the breaker).
int retry_after_agrees_with_allow(cb_handle h, uint64_t expected_wait) {
  const uint64_t wait = retry_after(h);
  CHECK(wait == expected_wait);
  cb_ticket t = 0;
  const int st = cb_allow(h, &t);
  CHECK(st == (wait == 0 ? CB_OK : CB_REJECTED));
  return st;
}

}  // namespace

TEST_CASE("retry_after near the end of the clock agrees with allow in every state") {
  ManualRegistry r;
  cb_config c = config(1, 1000, 2);
  c.half_open_timeout_ns = 1000;
  const cb_handle h = r.create(c);
  r.advance(UINT64_MAX - 5000);
  retry_after_agrees_with_allow(h, 0);  // CLOSED
  REQUIRE(cb_disable(h) == CB_OK);
  retry_after_agrees_with_allow(h, 0);
  REQUIRE(cb_force_open(h) == CB_OK);
  retry_after_agrees_with_allow(h, UINT64_MAX);
  REQUIRE(cb_trip(h, 1000) == CB_OK);  // OPEN until UINT64_MAX - 4000
  retry_after_agrees_with_allow(h, 1000);
  r.advance(1000);
  retry_after_agrees_with_allow(h, 0);  // the first probe; a slot is still free
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  r.advance(1000);
  retry_after_agrees_with_allow(h, 0);  // the second probe: every slot taken
  // The lease runs out at UINT64_MAX - 2000, and the next open period ends
  // at UINT64_MAX - 1000.
  retry_after_agrees_with_allow(h, 2000);
  r.advance(999);
  retry_after_agrees_with_allow(h, 1001);
  r.advance(1);  // the lease has run out: OPEN as of now
  retry_after_agrees_with_allow(h, 1000);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  r.advance(1000);  // UINT64_MAX - 1000
  retry_after_agrees_with_allow(h, 0);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE("retry_after in a full HALF_OPEN whose re-opening outlasts the clock is not 0") {
  // The case: the lease and the next open duration end past
  // UINT64_MAX, so no call is ever admitted again.
  ManualRegistry r;
  const cb_handle h = r.create(config(5, 1000));
  r.advance(UINT64_MAX - 2000);
  REQUIRE(cb_trip(h, 1000) == CB_OK);
  r.advance(1000);
  admit(h);  // the probe, at UINT64_MAX - 1000: its lease ends at UINT64_MAX
  retry_after_agrees_with_allow(h, 2000);
  r.advance(1000);
  retry_after_agrees_with_allow(h, 1000);  // re-opened as of UINT64_MAX
  CHECK(cb_state(h) == CB_STATE_OPEN);
  CHECK(cb_clock_advance(r.reg, 1) == CB_EINVAL);
  retry_after_agrees_with_allow(h, 1000);
}
