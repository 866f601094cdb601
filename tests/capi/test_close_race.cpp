// cb_registry_close while threads call the registry's breakers: every call
// in flight returns its pre-close result or CB_EHANDLE, every call after
// the close returns CB_EHANDLE, and none faults, for private and shared
// registries and every trip policy (docs/semantics.md, "Closing a registry").
#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr int kThreads = 8, kRounds = 100, kBreakers = 4;

cb_config policy_config(int policy) {
  cb_config c;
  cb_config_init(&c);
  c.policy = policy;
  c.failure_threshold = 3;
  c.window_size = 16;
  c.minimum_calls = 4;
  c.window_duration_ns = 1000000000;
  c.window_buckets = 8;
  c.slow_call_ns = policy == CB_POLICY_TIME_WINDOW ? 1000000000 : 0;
  c.open_duration_ns = 1000;  // OPEN, HALF_OPEN and CLOSED all come up
  return c;
}

bool in_flight_result(int st) { return st == CB_OK || st == CB_REJECTED || st == CB_EHANDLE; }

struct Worker {
  std::atomic<uint64_t> calls{0};
  std::atomic<int> bad{0};        // a result no call may give
  std::atomic<int> after_bad{0};  // a call after the close that did not give CB_EHANDLE
};

void work(const cb_handle *hs, Worker &me, const std::atomic<bool> &closed,
          const std::atomic<bool> &stop, unsigned seed) {
  std::vector<std::pair<cb_handle, cb_ticket>> held;  // admitted, not yet reported
  while (!stop.load(std::memory_order_acquire)) {
    // Read before the call: a call that starts once `closed` is seen began
    // after cb_registry_close returned.
    const bool after = closed.load(std::memory_order_acquire);
    seed = seed * 1103515245u + 12345u;
    const cb_handle h = hs[(seed >> 8) % kBreakers];
    int st;
    switch ((seed >> 16) % 5) {
      case 0:
      case 1: {
        cb_ticket t = 0;
        st = cb_allow(h, &t);
        if (st == CB_OK) held.emplace_back(h, t);
        break;
      }
      case 2:
      case 3:
        if (held.empty()) {
          const int state = cb_state(h);
          st = state >= 0 ? CB_OK : state;
        } else {
          st = cb_done(held.back().first, held.back().second,
                       (seed >> 24) % 3 == 0 ? CB_FAILURE : CB_SUCCESS);
          held.pop_back();
        }
        break;
      default: {
        cb_stats s;
        s.struct_size = sizeof s;
        st = cb_stats_get(h, &s);
      }
    }
    if (!in_flight_result(st)) me.bad.fetch_add(1, std::memory_order_relaxed);
    if (after && st != CB_EHANDLE) me.after_bad.fetch_add(1, std::memory_order_relaxed);
    // Nine threads on few cores: the closing thread gets its turn soon.
    if (me.calls.fetch_add(1, std::memory_order_relaxed) % 8 == 7) std::this_thread::yield();
  }
}

void race(int policy, const char *path) {
  for (int round = 0; round < kRounds; ++round) {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.capacity = 64;
    if (path != nullptr) {
      o.path = path;
      o.flags = CB_REGISTRY_CREATE;
    }
    cb_registry *reg = nullptr;
    if (path != nullptr) unlink(path);
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    cb_handle hs[kBreakers];
    const cb_config cfg = policy_config(policy);
    for (int i = 0; i < kBreakers; ++i) {
      const std::string name = "b" + std::to_string(round) + "." + std::to_string(i);
      REQUIRE(cb_create(reg, name.c_str(), &cfg, &hs[i]) == CB_OK);
    }
    std::atomic<bool> closed{false}, stop{false};
    Worker workers[kThreads];
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(work, hs, std::ref(workers[t]), std::cref(closed), std::cref(stop),
                           unsigned(round * kThreads + t + 1));
    // Closed while every thread is calling (each has made calls), at a
    // point that moves from round to round.
    for (Worker &w : workers)
      while (w.calls.load(std::memory_order_relaxed) < uint64_t(1 + round % 7) * 10)
        std::this_thread::yield();
    REQUIRE(cb_registry_close(reg) == CB_OK);
    closed.store(true, std::memory_order_release);
    uint64_t at_close[kThreads];
    for (int t = 0; t < kThreads; ++t) at_close[t] = workers[t].calls.load();
    for (int t = 0; t < kThreads; ++t)
      while (workers[t].calls.load(std::memory_order_relaxed) < at_close[t] + 10)
        std::this_thread::yield();
    stop.store(true, std::memory_order_release);
    for (std::thread &t : threads) t.join();
    for (const Worker &w : workers) {
      CHECK(w.bad.load() == 0);
      CHECK(w.after_bad.load() == 0);
    }
    // A second close of the same pointer is refused, not a double free.
    CHECK(cb_registry_close(reg) == CB_EINVAL);
  }
}

std::string temp_path() {
  char buf[] = "/tmp/lb-close-race-XXXXXX";
  const int fd = mkstemp(buf);
  REQUIRE(fd >= 0);
  close(fd);
  unlink(buf);
  return buf;
}

}  // namespace

TEST_CASE("closing a private registry under its calls: consecutive failures") {
  race(CB_POLICY_CONSECUTIVE, nullptr);
}
TEST_CASE("closing a private registry under its calls: count window") {
  race(CB_POLICY_COUNT_WINDOW, nullptr);
}
TEST_CASE("closing a private registry under its calls: time window") {
  race(CB_POLICY_TIME_WINDOW, nullptr);
}
TEST_CASE("closing a shared registry under its calls: every policy") {
  for (int policy : {CB_POLICY_CONSECUTIVE, CB_POLICY_COUNT_WINDOW, CB_POLICY_TIME_WINDOW}) {
    CAPTURE(policy);
    const std::string path = temp_path();
    race(policy, path.c_str());
    unlink(path.c_str());
  }
}

TEST_CASE("two threads closing one registry: one closes it, the other is refused") {
  for (int round = 0; round < 200; ++round) {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.capacity = 16;
    cb_registry *reg = nullptr;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    std::atomic<int> ok{0}, refused{0};
    std::thread a([&] { (cb_registry_close(reg) == CB_OK ? ok : refused).fetch_add(1); });
    std::thread b([&] { (cb_registry_close(reg) == CB_OK ? ok : refused).fetch_add(1); });
    a.join();
    b.join();
    CHECK(ok.load() == 1);
    CHECK(refused.load() == 1);
  }
}
