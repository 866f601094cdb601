// cb_hold_open: what a fleet agent calls on the hosts that wait for
// another host's probe (docs/fleet.md). An OPEN period held longer counts
// no trip, moves no backoff, reports no event, and is never shortened.
#include <lazybreaker/lazybreaker.h>

#include <cstdint>
#include <string>

#include "fixture.hpp"

namespace {

constexpr uint64_t kMs = 1'000'000;

uint64_t now(ManualRegistry &r) {
  uint64_t ns = 0;
  REQUIRE(cb_clock_now(r.reg, &ns) == CB_OK);
  return ns;
}

cb_handle tripped(ManualRegistry &r, cb_config cfg) {
  const cb_handle h = r.create(cfg);
  calls(h, int(cfg.failure_threshold), CB_FAILURE);
  REQUIRE(cb_state(h) == CB_STATE_OPEN);
  return h;
}

}  // namespace

TEST_CASE("a held OPEN period ends when held, not before, and counts no trip") {
  ManualRegistry r(8, 16);
  REQUIRE(cb_events_select(r.reg, CB_EVENTS_TRANSITIONS) == CB_OK);
  const cb_handle h = tripped(r, config(1, 100 * kMs));
  cb_event ev[16];
  for (auto &e : ev) e.struct_size = sizeof e;
  size_t n = 0;
  REQUIRE(cb_events_poll(r.reg, ev, 16, &n) == CB_OK);  // the trip
  const cb_stats before = stats(h);

  REQUIRE(cb_hold_open(h, now(r) + 250 * kMs) == CB_OK);
  CHECK(retry_after(h) == 250 * kMs);
  r.advance(100 * kMs);  // the period's own end
  CHECK(rejected(h));
  CHECK(cb_state(h) == CB_STATE_OPEN);
  r.advance(149 * kMs);
  CHECK(rejected(h));
  CHECK(retry_after(h) == 1 * kMs);
  r.advance(1 * kMs);
  CHECK(retry_after(h) == 0);
  const cb_stats after = stats(h);
  CHECK(after.trips == before.trips);
  CHECK(after.state_ns == 250 * kMs);  // the OPEN period began at the trip
  const cb_ticket probe = admit(h);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  REQUIRE(cb_events_poll(r.reg, ev, 16, &n) == CB_OK);
  REQUIRE(n == 1);  // OPEN -> HALF_OPEN only: the hold is no transition
  CHECK(ev[0].to == CB_STATE_HALF_OPEN);
  REQUIRE(cb_done(h, probe, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("a hold never shortens a period, and extends one whose time ran out") {
  ManualRegistry r;
  const cb_handle h = tripped(r, config(1, 100 * kMs));
  REQUIRE(cb_hold_open(h, now(r) + 10 * kMs) == CB_OK);
  CHECK(retry_after(h) == 100 * kMs);
  REQUIRE(cb_hold_open(h, now(r)) == CB_OK);
  REQUIRE(cb_hold_open(h, 0) == CB_OK);
  CHECK(retry_after(h) == 100 * kMs);

  r.advance(120 * kMs);  // over, but no call has moved it yet
  CHECK(retry_after(h) == 0);
  REQUIRE(cb_hold_open(h, now(r) + 30 * kMs) == CB_OK);
  CHECK(retry_after(h) == 30 * kMs);
  CHECK(rejected(h));
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("after a held period, a failed probe's backoff goes on from the trips before it") {
  ManualRegistry r;
  cb_config cfg = config(1, 100 * kMs);
  cfg.open_backoff_multiplier = 2.0;
  const cb_handle h = tripped(r, cfg);
  REQUIRE(cb_hold_open(h, now(r) + 1000 * kMs) == CB_OK);  // several periods' worth
  r.advance(1000 * kMs);
  call(h, CB_FAILURE);  // the probe fails: the second trip, 200 ms
  CHECK(stats(h).trips == 2);
  CHECK(retry_after(h) == 200 * kMs);
}

TEST_CASE("a hold is refused outside OPEN and changes nothing") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 100 * kMs));
  CHECK(cb_hold_open(h, now(r) + kMs) == CB_ESTATE);
  CHECK(std::string(cb_last_error_message()).find("not OPEN") != std::string::npos);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  REQUIRE(cb_force_open(h) == CB_OK);
  CHECK(cb_hold_open(h, now(r) + kMs) == CB_ESTATE);
  CHECK(cb_state(h) == CB_STATE_FORCED_OPEN);
  REQUIRE(cb_trip(h, 10 * kMs) == CB_OK);
  r.advance(10 * kMs);
  const cb_ticket probe = admit(h);
  CHECK(cb_hold_open(h, now(r) + kMs) == CB_ESTATE);  // HALF_OPEN: the probe is out
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  REQUIRE(cb_done(h, probe, CB_SUCCESS) == CB_OK);
  REQUIRE(cb_disable(h) == CB_OK);
  CHECK(cb_hold_open(h, now(r) + kMs) == CB_ESTATE);
}

TEST_CASE("a hold past the longest duration, or on a bad handle, is an error") {
  ManualRegistry r;
  const cb_handle h = tripped(r, config(1, 100 * kMs));
  CHECK(cb_hold_open(h, now(r) + CB_MAX_DURATION_NS + 1) == CB_EINVAL);
  CHECK(std::string(cb_last_error_field()) == "until_ns");
  CHECK(retry_after(h) == 100 * kMs);
  CHECK(cb_hold_open(h, now(r) + CB_MAX_DURATION_NS) == CB_OK);
  CHECK(cb_hold_open(0, 1) == CB_EHANDLE);
  REQUIRE(cb_destroy(h) == CB_OK);
  CHECK(cb_hold_open(h, 1) == CB_EHANDLE);
}

TEST_CASE("a held breaker with jitter ends no earlier than asked") {
  ManualRegistry r;
  cb_config cfg = config(1, 100 * kMs);
  cfg.open_jitter = 0.5;
  const cb_handle h = tripped(r, cfg);
  for (int i = 0; i < 20; ++i) {
    const uint64_t until = now(r) + 300 * kMs;
    REQUIRE(cb_hold_open(h, until) == CB_OK);
    CHECK(retry_after(h) >= 300 * kMs);
    r.advance(10 * kMs);
  }
}
