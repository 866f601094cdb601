// Rejections decided on the hot line and the cheap clock (the cached OPEN
// deadline, core/words.hpp OpenPeriod; a full HALF_OPEN period) agree with
// the exact rule, are counted, and still report rejection events.
#include <cstring>
#include <vector>

#include "fixture.hpp"

namespace {

size_t rejection_events(cb_registry *reg) {
  std::vector<cb_event> out(64);
  out[0].struct_size = sizeof(cb_event);
  size_t n = 0, found = 0;
  REQUIRE(cb_events_poll(reg, out.data(), out.size(), &n) == CB_OK);
  for (size_t i = 0; i < n; ++i) found += out[i].reason == CB_REASON_REJECTED;
  return found;
}

}  // namespace

TEST_CASE(
    "an OPEN breaker on a monotonic clock rejects and counts every call far from its deadline") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(1, 3'600'000'000'000ull));
  call(h, CB_FAILURE);
  REQUIRE(cb_state(h) == CB_STATE_OPEN);
  for (int i = 0; i < 1000; ++i) REQUIRE(rejected(h));
  CHECK(stats(h).rejected == 1000);
  CHECK(stats(h).admitted == 1);
}

TEST_CASE("a FORCED_OPEN breaker rejects and counts every call") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(5, 1'000'000));
  REQUIRE(cb_force_open(h) == CB_OK);
  for (int i = 0; i < 100; ++i) REQUIRE(rejected(h));
  CHECK(stats(h).rejected == 100);
}

TEST_CASE("rejection events are reported on a monotonic clock once asked for, and not after") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(1, 3'600'000'000'000ull));
  call(h, CB_FAILURE);
  REQUIRE(rejected(h));
  REQUIRE(cb_events_select(r.reg, CB_EVENTS_REJECTIONS) == CB_OK);
  REQUIRE(rejected(h));
  REQUIRE(rejected(h));
  CHECK(rejection_events(r.reg) == 2);
  REQUIRE(cb_events_select(r.reg, CB_EVENTS_TRANSITIONS) == CB_OK);
  REQUIRE(rejected(h));
  CHECK(rejection_events(r.reg) == 0);
  CHECK(stats(h).rejected == 4);
}

TEST_CASE(
    "an OPEN period's cached deadline is its own: a shorter later period admits its probe on "
    "time") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 10'000'000'000ull));
  REQUIRE(cb_trip(h, 3'600'000'000'000ull) == CB_OK);
  REQUIRE(rejected(h));
  REQUIRE(cb_reset(h) == CB_OK);
  call(h, CB_FAILURE);  // OPEN again, for the configured 10 s
  r.advance(10'000'000'000ull - 1);
  REQUIRE(rejected(h));
  r.advance(1);
  admit(h);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE(
    "an OPEN breaker admits its probe at the exact deadline, not a cached unit earlier or later") {
  ManualRegistry r;
  // 1.5 ms is not a whole number of the cache's 2^20 ns units.
  const cb_handle h = r.create(config(1, 1'500'000));
  r.advance(123);
  call(h, CB_FAILURE);
  for (uint64_t step : {1'000'000ull, 400'000ull, 99'999ull}) {
    r.advance(step);
    REQUIRE(rejected(h));
  }
  r.advance(1);
  admit(h);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
}

TEST_CASE(
    "a full HALF_OPEN period rejects until the lease runs out, then re-opens as of that instant") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000, 2, 2, 5000));
  call(h, CB_FAILURE);
  r.advance(1000);
  admit(h);
  admit(h);
  REQUIRE(cb_state(h) == CB_STATE_HALF_OPEN);
  r.advance(4999);
  for (int i = 0; i < 10; ++i) REQUIRE(rejected(h));
  CHECK(stats(h).rejected == 10);
  r.advance(1);
  REQUIRE(rejected(h));
  CHECK(cb_state(h) == CB_STATE_OPEN);
  CHECK(stats(h).trips == 2);
}
