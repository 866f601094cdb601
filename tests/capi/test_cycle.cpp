// What the conformance scenarios cannot say about the cycle: behaviour near
// the end of a manual clock's range (scenarios start from 0 or from a fixed
// offset, tests/conformance/README.md). Everything else about the cycle is a
// scenario in tests/conformance/ (closed, open, half_open, stale,
// lost_probe, manual, cycle), so every binding runs it.
#include "fixture.hpp"

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
