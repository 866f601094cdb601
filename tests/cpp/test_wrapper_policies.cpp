// The C++ wrapper over the 1.1 C API: Config's policy, slow-call and backoff
// fields, the new Stats fields, trip(), events, Prometheus text and the
// breaker list. Each test checks the mapping to the C ABI; the semantics
// themselves are pinned by tests/capi (test_policies, test_events).
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "lazybreaker/lazybreaker.hpp"

using namespace std::chrono_literals;
using lazybreaker::Breaker;
using lazybreaker::BreakerRef;
using lazybreaker::Config;
using lazybreaker::Error;
using lazybreaker::Event;
using lazybreaker::EventKind;
using lazybreaker::Permit;
using lazybreaker::Policy;
using lazybreaker::Reason;
using lazybreaker::Registry;
using lazybreaker::State;

namespace {

Config one_strike() { return Config().failure_threshold(1).open_duration(1ms); }

}  // namespace

TEST_CASE("Config leaves unset fields at cb_config_init's defaults") {
  cb_config want;
  cb_config_init(&want);
  const cb_config got = Config().to_c();
  CHECK(got.struct_size == sizeof(cb_config));
  CHECK(got.policy == want.policy);
  CHECK(got.window_size == want.window_size);
  CHECK(got.window_duration_ns == want.window_duration_ns);
  CHECK(got.window_buckets == want.window_buckets);
  CHECK(got.minimum_calls == want.minimum_calls);
  CHECK(got.failure_rate_threshold == want.failure_rate_threshold);
  CHECK(got.slow_call_ns == want.slow_call_ns);
  CHECK(got.slow_call_rate_threshold == want.slow_call_rate_threshold);
  CHECK(got.open_backoff_multiplier == want.open_backoff_multiplier);
  CHECK(got.open_duration_max_ns == want.open_duration_max_ns);
  CHECK(got.open_jitter == want.open_jitter);
}

TEST_CASE("Config maps every 1.1 setter to its cb_config field") {
  const cb_config c = Config()
                          .policy(Policy::TimeWindow)
                          .window_size(7)
                          .window_duration(2s)
                          .window_buckets(4)
                          .minimum_calls(3)
                          .failure_rate_threshold(0.25)
                          .slow_call(150ms)
                          .slow_call_rate_threshold(0.75)
                          .open_duration(1s)
                          .backoff(2.5, 1min)
                          .jitter(0.1)
                          .to_c();
  CHECK(c.policy == CB_POLICY_TIME_WINDOW);
  CHECK(c.window_size == 7);
  CHECK(c.window_duration_ns == 2'000'000'000ull);
  CHECK(c.window_buckets == 4);
  CHECK(c.minimum_calls == 3);
  CHECK(c.failure_rate_threshold == 0.25);
  CHECK(c.slow_call_ns == 150'000'000ull);
  CHECK(c.slow_call_rate_threshold == 0.75);
  CHECK(c.open_backoff_multiplier == 2.5);
  CHECK(c.open_duration_max_ns == 60'000'000'000ull);
  CHECK(c.open_jitter == 0.1);
  CHECK(Config().backoff(3.0).to_c().open_duration_max_ns == 0);  // no cap unless asked
  CHECK(Config().policy(Policy::CountWindow).to_c().policy == CB_POLICY_COUNT_WINDOW);

  Registry reg = Registry::manual_clock();
  try {
    (void)reg.create(Config().slow_call(-1ms));
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.detail() == "Config: slow_call is negative");
  }
  try {
    (void)reg.create(Config().failure_rate_threshold(1.5));  // the library's range check
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.status() == CB_EINVAL);
    CHECK(e.detail().find("failure_rate_threshold") != std::string::npos);
  }
}

TEST_CASE("a count-window breaker trips on its failure rate") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(Config()
                                   .policy(Policy::CountWindow)
                                   .window_size(4)
                                   .minimum_calls(4)
                                   .failure_rate_threshold(0.5));
  b.execute([] {});
  b.execute([] {});
  b.acquire().failure();
  CHECK(b.state() == State::Closed);  // 1 of 3, under the minimum
  CHECK(b.stats().failure_rate == doctest::Approx(1.0 / 3));
  b.acquire().failure();  // 2 of 4
  CHECK(b.state() == State::Open);
  const std::vector<Event> ev = reg.poll_events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].reason == Reason::FailureRate);
}

TEST_CASE("a time-window breaker forgets outcomes older than its window") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(Config()
                                   .policy(Policy::TimeWindow)
                                   .window_duration(10ms)
                                   .window_buckets(10)
                                   .minimum_calls(2)
                                   .failure_rate_threshold(1.0));
  b.acquire().failure();
  reg.advance(20ms);
  b.acquire().failure();  // the first has aged out: 1 call, under the minimum
  CHECK(b.state() == State::Closed);
  b.acquire().failure();
  CHECK(b.state() == State::Open);
}

TEST_CASE("slow calls are timed from acquire to report and counted in Stats") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(
      Config().slow_call(1ms).slow_call_rate_threshold(0.5).window_size(3).minimum_calls(3));
  const auto slow_success = [&] {
    Permit p = b.acquire();
    reg.advance(2ms);
    p.success();
  };
  slow_success();
  b.execute([] {});  // fast
  const lazybreaker::Stats s = b.stats();
  CHECK(s.slow == 1);
  CHECK(s.slow_rate == doctest::Approx(0.5));
  CHECK(s.failures == 0);
  CHECK(b.state() == State::Closed);  // under the minimum
  slow_success();                     // 2 of 3 slow
  CHECK(b.state() == State::Open);
  const std::vector<Event> ev = reg.poll_events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].reason == Reason::SlowCallRate);
}

TEST_CASE("backoff and its cap show in retry_after; jitter stays in its band") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(Config().failure_threshold(1).open_duration(1ms).backoff(2.0, 3ms));
  b.acquire().failure();
  CHECK(b.retry_after() == 1ms);
  for (auto want : {2ms, 3ms, 3ms}) {
    reg.advance(b.retry_after());
    b.acquire().failure();  // the probe fails
    CHECK(b.retry_after() == want);
  }
  const Breaker j = reg.create(Config().failure_threshold(1).open_duration(10ms).jitter(0.5));
  j.acquire().failure();
  CHECK(j.retry_after() >= 5ms);
  CHECK(j.retry_after() <= 15ms);
}

TEST_CASE("trip() opens for exactly the given time and counts as a trip") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("api");
  b.trip(20s);
  CHECK(b.state() == State::Open);
  CHECK(b.retry_after() == 20s);
  CHECK(b.stats().trips == 1);
  CHECK_THROWS_AS(b.trip(-1s), Error);
  try {
    b.trip(0ns);  // under CB_MIN_OPEN_DURATION_NS: the library says so
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.status() == CB_EINVAL);
  }
  reg.advance(20s);
  CHECK(b.try_acquire().has_value());  // the probe
}

TEST_CASE("Stats: time in state on the registry clock") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  reg.advance(500ns);
  CHECK(b.stats().time_in_state == 500ns);
  b.acquire().failure();
  CHECK(b.stats().time_in_state == 0ns);
  const lazybreaker::Stats s = b.stats();
  CHECK(s.slow == 0);  // tracking is off
  CHECK(s.failure_rate == 0.0);
  CHECK(s.slow_rate == 0.0);
}

TEST_CASE("events come in order, with breaker, states, reason, time and name") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("payments", one_strike());
  reg.advance(5ns);
  b.acquire().failure();
  reg.advance(1ms);
  b.acquire().success();  // the probe
  b.trip(1s);
  const std::vector<Event> ev = reg.poll_events();
  REQUIRE(ev.size() == 4);
  struct Want {
    State from, to;
    Reason reason;
    std::chrono::nanoseconds at;
  };
  const Want want[] = {
      {State::Closed, State::Open, Reason::ConsecutiveFailures, 5ns},
      {State::Open, State::HalfOpen, Reason::OpenElapsed, 1ms + 5ns},
      {State::HalfOpen, State::Closed, Reason::ProbesSucceeded, 1ms + 5ns},
      {State::Closed, State::Open, Reason::Tripped, 1ms + 5ns},
  };
  for (size_t i = 0; i < ev.size(); ++i) {
    CAPTURE(i);
    CHECK(ev[i].breaker == b);
    CHECK(ev[i].name == "payments");
    CHECK(ev[i].from == want[i].from);
    CHECK(ev[i].to == want[i].to);
    CHECK(ev[i].reason == want[i].reason);
    CHECK(ev[i].at == want[i].at);
    if (i > 0) CHECK(ev[i].sequence > ev[i - 1].sequence);
  }
  CHECK(reg.poll_events().empty());
  CHECK(std::string(to_string(Reason::ProbeLeaseExpired)) == "probe_lease_expired");
  CHECK(std::string(to_string(static_cast<Reason>(99))) == "unknown");
}

TEST_CASE("poll_events takes at most max, across its internal chunks, oldest first") {
  Registry::Options o;
  o.clock = lazybreaker::Clock::Manual;
  o.event_capacity = 512;
  Registry reg(o);
  const Breaker b = reg.create(one_strike());
  for (int i = 0; i < 100; ++i) {  // 200 transitions
    b.acquire().failure();
    b.reset();
  }
  CHECK(reg.poll_events(0).empty());
  const std::vector<Event> first = reg.poll_events(3);
  REQUIRE(first.size() == 3);
  CHECK(first[0].sequence == 0);
  const std::vector<Event> rest = reg.poll_events(1000);
  REQUIRE(rest.size() == 197);
  CHECK(rest.front().sequence == 3);
  CHECK(rest.back().sequence == 199);
  CHECK(rest.back().reason == Reason::Manual);
  CHECK(reg.events_dropped() == 0);
}

TEST_CASE("Options::event_capacity bounds the queue; drops are counted") {
  Registry::Options o;
  o.clock = lazybreaker::Clock::Manual;
  o.event_capacity = 8;
  Registry reg(o);
  const Breaker b = reg.create(one_strike());
  for (int i = 0; i < 10; ++i) {  // 20 transitions into 8 places
    b.acquire().failure();
    b.reset();
  }
  CHECK(reg.events_dropped() == 12);
  const std::vector<Event> ev = reg.poll_events();
  REQUIRE(ev.size() == 8);
  CHECK(ev.front().sequence == 12);
}

TEST_CASE("select_events chooses transitions, rejections, both or none") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("r", one_strike());
  b.force_open();
  CHECK_FALSE(b.try_acquire());
  CHECK(reg.poll_events().size() == 1);  // the transition only
  reg.select_events(EventKind::Transitions | EventKind::Rejections);
  CHECK_FALSE(b.try_acquire());
  const std::vector<Event> ev = reg.poll_events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].reason == Reason::Rejected);
  CHECK(ev[0].from == State::ForcedOpen);
  CHECK(ev[0].to == State::ForcedOpen);
  reg.select_events(EventKind::None);
  b.reset();
  CHECK(reg.poll_events().empty());
  constexpr EventKind both = EventKind::Transitions | EventKind::Rejections;
  static_assert(static_cast<unsigned>(both) == (CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS));
  static_assert((both & EventKind::Rejections) == EventKind::Rejections);
}

TEST_CASE("prometheus() returns the whole text") {
  Registry reg = Registry::manual_clock();
  const Breaker pay = reg.create("payments", one_strike());
  pay.acquire().failure();
  CHECK_FALSE(pay.try_acquire());
  std::vector<Breaker> many;  // a text far longer than the first guess
  for (int i = 0; i < 50; ++i) many.push_back(reg.create("b" + std::to_string(i)));
  const std::string text = reg.prometheus();
  CHECK(text.find('\0') == std::string::npos);
  CHECK(text.find("lazybreaker_breakers 51\n") != std::string::npos);
  CHECK(text.find("lazybreaker_calls_admitted_total{breaker=\"payments\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("lazybreaker_calls_rejected_total{breaker=\"payments\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("lazybreaker_trips_total{breaker=\"payments\"} 1\n") != std::string::npos);
  CHECK(text.find("lazybreaker_state{breaker=\"payments\",state=\"open\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("lazybreaker_state{breaker=\"b49\",state=\"closed\"} 1\n") != std::string::npos);
  CHECK(text.back() == '\n');
}

TEST_CASE("breakers() lists views of the live breakers") {
  Registry reg = Registry::manual_clock();
  CHECK(reg.breakers().empty());
  const Breaker a = reg.create("a");
  Breaker anon = reg.create();
  const Breaker c = reg.create("c");
  anon.destroy();
  const std::vector<BreakerRef> all = reg.breakers();
  REQUIRE(all.size() == 2);
  CHECK(all[0] == a);
  CHECK(all[1] == c);
  CHECK(all[1].name() == "c");
}
