// The event queue: order, content, selection, drops; and the Prometheus text.
#include <atomic>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"

namespace {

std::vector<cb_event> poll(cb_registry *reg, size_t max = 4096) {
  std::vector<cb_event> out(max);
  if (max > 0) out[0].struct_size = sizeof(cb_event);
  size_t n = 0;
  REQUIRE(cb_events_poll(reg, out.data(), max, &n) == CB_OK);
  out.resize(n);
  return out;
}

}  // namespace

TEST_CASE("transitions are recorded in order with handle, name, states, reason and time") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000), "payments");
  r.advance(5);
  call(h, CB_FAILURE);
  r.advance(1000);
  const cb_ticket probe = admit(h);
  r.advance(7);
  REQUIRE(cb_done(h, probe, CB_SUCCESS) == CB_OK);
  REQUIRE(cb_force_open(h) == CB_OK);
  REQUIRE(cb_trip(h, 5000) == CB_OK);
  const std::vector<cb_event> ev = poll(r.reg);
  REQUIRE(ev.size() == 5);
  struct Want {
    int from, to, reason;
    uint64_t at;
  };
  const Want want[] = {
      {CB_STATE_CLOSED, CB_STATE_OPEN, CB_REASON_CONSECUTIVE_FAILURES, 5},
      {CB_STATE_OPEN, CB_STATE_HALF_OPEN, CB_REASON_OPEN_ELAPSED, 1005},
      {CB_STATE_HALF_OPEN, CB_STATE_CLOSED, CB_REASON_PROBES_SUCCEEDED, 1012},
      {CB_STATE_CLOSED, CB_STATE_FORCED_OPEN, CB_REASON_MANUAL, 1012},
      {CB_STATE_FORCED_OPEN, CB_STATE_OPEN, CB_REASON_TRIPPED, 1012},
  };
  for (size_t i = 0; i < ev.size(); ++i) {
    CAPTURE(i);
    CHECK(ev[i].breaker == h);
    CHECK(std::string(ev[i].name) == "payments");
    CHECK(ev[i].from == want[i].from);
    CHECK(ev[i].to == want[i].to);
    CHECK(ev[i].reason == want[i].reason);
    CHECK(ev[i].at_ns == want[i].at);
    if (i > 0) CHECK(ev[i].sequence > ev[i - 1].sequence);
  }
  CHECK(poll(r.reg).empty());
}

TEST_CASE("every reason is reported: rates, slow calls and a lost probe's lease") {
  ManualRegistry r;
  cb_config rate = config(1, 1000, 1, 1, 100);
  rate.policy = CB_POLICY_COUNT_WINDOW;
  rate.window_size = 2;
  rate.minimum_calls = 2;
  const cb_handle a = r.create(rate, "rate");
  call(a, CB_SUCCESS);
  call(a, CB_FAILURE);
  r.advance(1000);
  admit(a);  // a probe that never reports
  r.advance(100);
  CHECK(rejected(a));  // the lease is out
  cb_config slow = config(5, 1000);
  slow.slow_call_ns = 10;
  slow.window_size = 1;
  slow.minimum_calls = 1;
  const cb_handle b = r.create(slow, "slow");
  const cb_ticket t = admit(b);
  r.advance(11);
  REQUIRE(cb_done(b, t, CB_SUCCESS) == CB_OK);
  std::vector<int> reasons;
  for (const cb_event &e : poll(r.reg)) reasons.push_back(e.reason);
  CHECK(reasons == std::vector<int>{CB_REASON_FAILURE_RATE, CB_REASON_OPEN_ELAPSED,
                                    CB_REASON_PROBE_LEASE_EXPIRED, CB_REASON_SLOW_CALL_RATE});
}

TEST_CASE("rejections are events only when asked for") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000), "r");
  call(h, CB_FAILURE);
  CHECK(rejected(h));
  CHECK(poll(r.reg).size() == 1);  // the trip only
  REQUIRE(cb_events_select(r.reg, CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS) == CB_OK);
  CHECK(rejected(h));
  CHECK(rejected(h));
  const std::vector<cb_event> ev = poll(r.reg);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].reason == CB_REASON_REJECTED);
  CHECK(ev[0].from == CB_STATE_OPEN);
  CHECK(ev[0].to == CB_STATE_OPEN);
  REQUIRE(cb_events_select(r.reg, 0) == CB_OK);
  REQUIRE(cb_reset(h) == CB_OK);
  CHECK(poll(r.reg).empty());
  CHECK(cb_events_select(r.reg, 4) == CB_EINVAL);
}

TEST_CASE("a full queue drops the oldest events and counts them") {
  ManualRegistry r(64, 8);
  const cb_handle h = r.create(config(1, 1000), "busy");
  for (int i = 0; i < 10; ++i) {  // 20 transitions into 8 places
    call(h, CB_FAILURE);
    REQUIRE(cb_reset(h) == CB_OK);
  }
  uint64_t dropped = 0;
  REQUIRE(cb_events_dropped(r.reg, &dropped) == CB_OK);
  CHECK(dropped == 12);
  const std::vector<cb_event> ev = poll(r.reg);
  REQUIRE(ev.size() == 8);
  CHECK(ev.front().sequence == 12);  // the newest 8 of 20
  CHECK(ev.back().sequence == 19);
  CHECK(ev.back().reason == CB_REASON_MANUAL);
}

TEST_CASE("poll writes at the caller's stride and never past max") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000), "s");
  call(h, CB_FAILURE);
  REQUIRE(cb_reset(h) == CB_OK);
  struct Wider {
    cb_event e;
    uint64_t future;
  } buf[3];
  std::memset(buf, 0xAB, sizeof buf);
  buf[0].e.struct_size = sizeof(Wider);
  size_t n = 0;
  REQUIRE(cb_events_poll(r.reg, &buf[0].e, 1, &n) == CB_OK);
  CHECK(n == 1);
  CHECK(buf[0].future == 0);
  CHECK(buf[1].e.struct_size == 0xABABABABABABABABull);  // untouched
  REQUIRE(cb_events_poll(r.reg, &buf[0].e, 3, &n) == CB_OK);
  CHECK(n == 1);
  CHECK(buf[0].e.to == CB_STATE_CLOSED);
  CHECK(cb_events_poll(r.reg, nullptr, 1, &n) == CB_EINVAL);
  CHECK(cb_events_poll(r.reg, &buf[0].e, 1, nullptr) == CB_EINVAL);
  buf[0].e.struct_size = 8;
  CHECK(cb_events_poll(r.reg, &buf[0].e, 1, &n) == CB_EINVAL);
  CHECK(cb_events_poll(r.reg, nullptr, 0, &n) == CB_OK);
}

TEST_CASE("under concurrency each breaker's events form one unbroken chain of states") {
  ManualRegistry r(8, 65536);
  std::vector<cb_handle> hs;
  for (int i = 0; i < 4; ++i) hs.push_back(r.create(config(2, 1000), std::to_string(i).c_str()));
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < 3; ++t)
    pool.emplace_back([&, t] {
      for (int n = 0; n < 20000; ++n) {
        const cb_handle h = hs[(n + t) % hs.size()];
        cb_ticket k = 0;
        if (cb_allow(h, &k) == CB_OK)
          REQUIRE(cb_done(h, k, n % 3 ? CB_FAILURE : CB_SUCCESS) == CB_OK);
        if (n % 97 == 0) REQUIRE(cb_reset(h) == CB_OK);
      }
    });
  std::thread clock([&] {
    while (!stop.load()) {
      REQUIRE(cb_clock_advance(r.reg, 250) == CB_OK);
      std::this_thread::yield();
    }
  });
  for (auto &t : pool) t.join();
  stop.store(true);
  clock.join();
  uint64_t dropped = 1;
  REQUIRE(cb_events_dropped(r.reg, &dropped) == CB_OK);
  REQUIRE(dropped == 0);
  std::map<cb_handle, int> state;
  for (cb_handle h : hs) state[h] = CB_STATE_CLOSED;
  size_t total = 0;
  for (std::vector<cb_event> ev = poll(r.reg); !ev.empty(); ev = poll(r.reg)) {
    for (const cb_event &e : ev) {
      REQUIRE(state.count(e.breaker) == 1);
      REQUIRE(e.from == state[e.breaker]);
      state[e.breaker] = e.to;
      ++total;
    }
  }
  CHECK(total > 100);
  for (cb_handle h : hs) CHECK(state[h] == cb_state(h));
}

TEST_CASE("the Prometheus text parses, and says what the breakers did") {
  ManualRegistry r;
  const cb_handle a = r.create(config(1, 1000), "pay\"ments\\eu\nwest");
  const cb_handle anon = r.create(config(5, 1000));
  call(a, CB_SUCCESS);
  call(a, CB_FAILURE);
  CHECK(rejected(a));
  call(anon, CB_IGNORED);
  r.advance(2'500'000'000ull);

  size_t needed = 0;
  CHECK(cb_metrics_prometheus(r.reg, nullptr, 0, &needed) == CB_OK);  // the size only
  std::string text(needed + 1, '\0');
  REQUIRE(cb_metrics_prometheus(r.reg, text.data(), text.size(), &needed) == CB_OK);
  text.resize(needed);
  CHECK(cb_metrics_prometheus(r.reg, text.data(), needed, &needed) == CB_ERANGE);
  CHECK(cb_metrics_prometheus(r.reg, nullptr, 5, &needed) == CB_EINVAL);
  CHECK(cb_metrics_prometheus(r.reg, text.data(), text.size(), nullptr) == CB_EINVAL);

  // Every line is a HELP, a TYPE or a sample of the family they announced,
  // and a family's samples are together.
  const std::regex help(R"(# HELP (lazybreaker_[a-z_]+) .+)");
  const std::regex type(R"(# TYPE (lazybreaker_[a-z_]+) (counter|gauge))");
  const std::regex sample(
      R"((lazybreaker_[a-z_]+)(\{((breaker|state|outcome)="([^"\\]|\\[\\"n])*",?)+\})? (-?[0-9.e+-]+|NaN))");
  std::map<std::string, double> values;
  std::string family;
  std::set<std::string> seen;
  std::istringstream in(text);
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    CAPTURE(line);
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      family = m[1];
      REQUIRE(seen.insert(family).second);
      continue;
    }
    if (std::regex_match(line, m, type)) {
      REQUIRE(m[1] == family);
      continue;
    }
    REQUIRE(std::regex_match(line, m, sample));
    REQUIRE(m[1] == family);
    values[line.substr(0, line.rfind(' '))] = std::stod(line.substr(line.rfind(' ') + 1));
    ++samples;
  }
  CHECK(samples > 20);
  const std::string la = "breaker=\"pay\\\"ments\\\\eu\\nwest\"";
  char anon_label[64];
  std::snprintf(anon_label, sizeof anon_label, "breaker=\"#%016llx\"", (unsigned long long)anon);
  const std::string lb = anon_label;
  CHECK(values["lazybreaker_breakers"] == 2);
  CHECK(values["lazybreaker_calls_admitted_total{" + la + "}"] == 2);
  CHECK(values["lazybreaker_calls_rejected_total{" + la + "}"] == 1);
  CHECK(values["lazybreaker_outcomes_total{" + la + ",outcome=\"failure\"}"] == 1);
  CHECK(values["lazybreaker_outcomes_total{" + la + ",outcome=\"success\"}"] == 1);
  CHECK(values["lazybreaker_outcomes_total{" + lb + ",outcome=\"ignored\"}"] == 1);
  CHECK(values["lazybreaker_trips_total{" + la + "}"] == 1);
  CHECK(values["lazybreaker_state{" + la + ",state=\"open\"}"] == 1);
  CHECK(values["lazybreaker_state{" + la + ",state=\"closed\"}"] == 0);
  CHECK(values["lazybreaker_state{" + lb + ",state=\"closed\"}"] == 1);
  CHECK(values["lazybreaker_state_seconds{" + la + "}"] == doctest::Approx(2.5));
  CHECK(values.count("lazybreaker_events_dropped_total") == 1);
}

TEST_CASE("cb_registry_list lists the live breakers") {
  ManualRegistry r;
  const cb_handle a = r.create(config(1, 1000), "a");
  const cb_handle b = r.create(config(1, 1000));
  const cb_handle c = r.create(config(1, 1000), "c");
  REQUIRE(cb_destroy(b) == CB_OK);
  size_t n = 0;
  REQUIRE(cb_registry_list(r.reg, nullptr, 0, &n) == CB_OK);
  CHECK(n == 2);
  cb_handle out[1] = {0};
  REQUIRE(cb_registry_list(r.reg, out, 1, &n) == CB_OK);
  CHECK(n == 2);
  CHECK(out[0] == a);
  cb_handle all[4] = {0};
  REQUIRE(cb_registry_list(r.reg, all, 4, &n) == CB_OK);
  CHECK(all[1] == c);
  CHECK(cb_registry_list(r.reg, nullptr, 1, &n) == CB_EINVAL);
}
