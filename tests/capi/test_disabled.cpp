// DISABLED under slow-call tracking: its calls are timed as CLOSED calls
// are, from cb_allow to cb_done, and a slow one counts in cb_stats.slow
// (docs/policies.md, "Manual control"), whichever path admits it: the
// checked path (a thread with no counter stripe yet) or the hot line (a
// thread that has one).
#include <thread>

#include "fixture.hpp"

namespace {

constexpr uint64_t kSlowNs = 1000;

cb_config slow_tracking() {
  cb_config c = config(5, 1000);
  c.slow_call_ns = kSlowNs;
  return c;
}

struct Seen {
  int allow = -1, done = -1;
};

// One DISABLED call that takes `ns` on the manual clock, made by a thread
// of its own that has never called the library: its cb_allow is the
// thread's first call, made without a counter stripe.
Seen call_from_new_thread(ManualRegistry &r, cb_handle h, uint64_t ns) {
  Seen seen;
  std::thread t([&] {
    cb_ticket ticket = 0;
    seen.allow = cb_allow(h, &ticket);
    cb_clock_advance(r.reg, ns);
    seen.done = cb_done(h, ticket, CB_SUCCESS);
  });
  t.join();
  return seen;
}

}  // namespace

TEST_CASE("DISABLED: a call reported at once is not slow, on a thread with a stripe") {
  ManualRegistry r;
  const cb_handle h = r.create(slow_tracking());
  r.advance(10 * kSlowNs);          // the clock far from 0
  timed_call(r, h, 1, CB_SUCCESS);  // this thread has a stripe from here on
  REQUIRE(cb_disable(h) == CB_OK);
  timed_call(r, h, kSlowNs - 1, CB_SUCCESS);
  timed_call(r, h, 0, CB_FAILURE);
  CHECK(stats(h).slow == 0);
  CHECK(stats(h).successes == 2);
  CHECK(stats(h).failures == 1);
  CHECK(cb_state(h) == CB_STATE_DISABLED);
}

TEST_CASE("DISABLED: a call reported at once is not slow, on a thread without a stripe") {
  ManualRegistry r;
  const cb_handle h = r.create(slow_tracking());
  r.advance(10 * kSlowNs);
  REQUIRE(cb_disable(h) == CB_OK);
  const Seen seen = call_from_new_thread(r, h, kSlowNs - 1);
  CHECK(seen.allow == CB_OK);
  CHECK(seen.done == CB_OK);
  CHECK(stats(h).slow == 0);
  CHECK(stats(h).successes == 1);
}

TEST_CASE("DISABLED: a slow call counts in cb_stats.slow on either path, and trips nothing") {
  ManualRegistry r;
  cb_config c = slow_tracking();
  c.window_size = 1;
  c.minimum_calls = 1;
  c.slow_call_rate_threshold = 0.1;  // one slow call would trip a CLOSED breaker
  const cb_handle h = r.create(c);
  r.advance(10 * kSlowNs);
  timed_call(r, h, 1, CB_SUCCESS);  // a stripe for this thread
  REQUIRE(cb_disable(h) == CB_OK);
  timed_call(r, h, kSlowNs + 1, CB_SUCCESS);
  CHECK(stats(h).slow == 1);
  const Seen seen = call_from_new_thread(r, h, kSlowNs + 1);
  CHECK(seen.done == CB_OK);
  CHECK(stats(h).slow == 2);
  CHECK(cb_state(h) == CB_STATE_DISABLED);
  CHECK(stats(h).slow_rate == 0.0);  // the window saw none of them
}

TEST_CASE("DISABLED without slow-call tracking counts no call slow, however long") {
  ManualRegistry r;
  const cb_handle h = r.create(config(5, 1000));
  timed_call(r, h, 1, CB_SUCCESS);
  REQUIRE(cb_disable(h) == CB_OK);
  timed_call(r, h, 1'000'000'000, CB_SUCCESS);
  const Seen seen = call_from_new_thread(r, h, 1'000'000'000);
  CHECK(seen.done == CB_OK);
  CHECK(stats(h).slow == 0);
  CHECK(stats(h).successes == 3);
}
