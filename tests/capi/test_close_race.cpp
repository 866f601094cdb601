// cb_registry_close while threads call the registry's breakers: every call
// in flight returns its pre-close result or CB_EHANDLE, every call after
// the close returns CB_EHANDLE, and none faults, for private and shared
// registries and every trip policy (docs/semantics.md, "Closing a registry").
//
// The close comes at a random moment soon after the threads start, so that
// some of them make their first call (and take their counter stripe) while
// it runs; half the threads count through the published quiet path
// (lazybreaker/fastpath.h), as the Java, C# and Go bindings do. A shared
// registry's file is made anew each round, in /dev/shm and in /tmp.
// LB_CLOSE_RACE_ROUNDS sets the rounds per configuration (100; 4 on Windows).
#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "capi/close_race_config.hpp"
#include "capi/published_quiet_path.h"

namespace {

constexpr int kThreads = 8, kBreakers = 16;
using Clock = std::chrono::steady_clock;

int rounds() {
  const char *env = std::getenv("LB_CLOSE_RACE_ROUNDS");
  const int n = env != nullptr ? std::atoi(env) : 0;
#ifdef _WIN32
  // Under Wine a round's eight thread starts take tens of milliseconds, and
  // this program shares windows.capi's two minutes with every other suite.
  constexpr int kDefault = 4;
#else
  constexpr int kDefault = 100;
#endif
  return n > 0 ? n : kDefault;
}

bool in_flight_result(int st) { return st == CB_OK || st == CB_REJECTED || st == CB_EHANDLE; }

struct Worker {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> calls_after{0};  // begun once the close had returned
  std::atomic<int> bad{0};               // a result no call may give
  std::atomic<int> after_bad{0};         // a call after the close that did not give CB_EHANDLE
};

// One call, through the library (`q` nullptr) or the published quiet path.
int call(const lb_quiet *q, cb_handle h, unsigned r,
         std::vector<std::pair<cb_handle, cb_ticket>> &held) {
  int native = 0;
  switch (r % 5) {
    case 0:
    case 1: {
      cb_ticket t = 0;
      const int st = q != nullptr ? lb_quiet_allow(q, h, &t, &native) : cb_allow(h, &t);
      if (st == CB_OK) held.emplace_back(h, t);
      return st;
    }
    case 2:
    case 3: {
      if (held.empty()) {
        const int state = cb_state(h);
        return state >= 0 ? CB_OK : state;
      }
      const auto [bh, t] = held.back();
      held.pop_back();
      const int outcome = (r >> 8) % 3 == 0 ? CB_FAILURE : CB_SUCCESS;
      return q != nullptr ? lb_quiet_done(q, bh, t, outcome, &native) : cb_done(bh, t, outcome);
    }
    default: {
      cb_ticket t = 0;
      const int st = cb_allow(h, &t);
      return st == CB_OK ? cb_done(h, t, CB_IGNORED) : st;
    }
  }
}

void work(const cb_handle *hs, Worker &me, bool published, const std::atomic<bool> &closed,
          const std::atomic<bool> &stop, unsigned seed) {
  // Taken here, as a binding's thread takes its cells on its first call:
  // perhaps while the registry closes.
  lb_quiet q;
  const bool quiet = published && lb_quiet_init(&q, 0) == CB_OK;
  std::vector<std::pair<cb_handle, cb_ticket>> held;  // admitted, not yet reported
  std::minstd_rand rng(seed);
  for (uint64_t n = 0; !stop.load(std::memory_order_acquire); ++n) {
    // Read before the call: a call that starts once `closed` is seen began
    // after cb_registry_close returned.
    const bool after = closed.load(std::memory_order_acquire);
    const unsigned r = unsigned(rng());
    const cb_handle h = hs[(r >> 16) % kBreakers];
    int st;
    if (n % 64 == 63) {
      cb_stats s;
      s.struct_size = sizeof s;
      st = cb_stats_get(h, &s);
    } else {
      st = call(quiet ? &q : nullptr, h, r, held);
    }
    if (!in_flight_result(st)) me.bad.fetch_add(1, std::memory_order_relaxed);
    if (after && st != CB_EHANDLE) me.after_bad.fetch_add(1, std::memory_order_relaxed);
    me.calls.fetch_add(1, std::memory_order_relaxed);
    if (after) me.calls_after.fetch_add(1, std::memory_order_relaxed);
  }
}

void spin_for(std::chrono::microseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

// `dir`: where a shared registry's file goes (nullptr: a private registry).
void race(int policy, const char *dir) {
  const std::string path = dir != nullptr
                               ? std::string(dir) + "/lb-close-race-" + std::to_string(getpid()) +
                                     "-" + std::to_string(policy) + ".lbr"
                               : std::string();
  std::mt19937 rng(unsigned(policy * 7919 + (dir != nullptr ? dir[1] : 0)));
  const int n = rounds();
  for (int round = 0; round < n; ++round) {
    CAPTURE(round);
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.capacity = round % 2 == 0 ? 64 : 1024;
    if (dir != nullptr) {
      o.path = path.c_str();
      o.flags = CB_REGISTRY_CREATE;
      unlink(path.c_str());
    }
    cb_registry *reg = nullptr;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    cb_handle hs[kBreakers];
    const cb_config cfg = close_race_config(policy);
    for (int i = 0; i < kBreakers; ++i) {
      const std::string name = "b" + std::to_string(round) + "." + std::to_string(i);
      REQUIRE(cb_create(reg, name.c_str(), &cfg, &hs[i]) == CB_OK);
    }
    std::atomic<bool> closed{false}, stop{false};
    Worker workers[kThreads];
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(work, hs, std::ref(workers[t]), t % 2 == 1, std::cref(closed),
                           std::cref(stop), unsigned(rng()));
    // Soon after the threads start, at a moment that moves from round to
    // round: some have made many calls, some none yet.
    spin_for(std::chrono::microseconds(rng() % 400));
    REQUIRE(cb_registry_close(reg) == CB_OK);
    closed.store(true, std::memory_order_release);
    spin_for(std::chrono::microseconds(300));
    // Every thread makes calls after the close (a bounded wait: a thread
    // the scheduler has not run yet gets its turn).
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    for (Worker &w : workers)
      while (w.calls_after.load(std::memory_order_relaxed) < 4 && Clock::now() < give_up)
        std::this_thread::yield();
    stop.store(true, std::memory_order_release);
    for (std::thread &t : threads) t.join();
    for (const Worker &w : workers) {
      CHECK(w.calls_after.load() >= 4);
      CHECK(w.bad.load() == 0);
      CHECK(w.after_bad.load() == 0);
    }
    // A second close of the same pointer is refused, not a double free.
    CHECK(cb_registry_close(reg) == CB_EINVAL);
  }
  if (dir != nullptr) unlink(path.c_str());
}

constexpr int kPolicies[] = {CB_POLICY_CONSECUTIVE, CB_POLICY_COUNT_WINDOW, CB_POLICY_TIME_WINDOW};

}  // namespace

TEST_CASE("closing a private registry under its calls, at any moment, for every policy") {
  for (int policy : kPolicies) {
    CAPTURE(policy);
    race(policy, nullptr);
  }
}

TEST_CASE(
    "closing a shared registry in /dev/shm under its calls, at any moment, for every policy") {
  for (int policy : kPolicies) {
    CAPTURE(policy);
    race(policy, "/dev/shm");
  }
}

TEST_CASE("closing a shared registry in /tmp under its calls, at any moment, for every policy") {
  for (int policy : kPolicies) {
    CAPTURE(policy);
    race(policy, "/tmp");
  }
}

TEST_CASE(
    "threads that take their counter stripes while a shared registry opens count in its file") {
  // Each thread takes its stripe (its first counted call, on a private
  // registry) at about the moment the shared registry joins its file; its
  // quiet calls there must land in the file, where every reader sums them.
  const std::string path = "/tmp/lb-join-race-" + std::to_string(getpid()) + ".lbr";
  cb_registry_options po;
  cb_registry_options_init(&po);
  po.capacity = 16;
  cb_registry *priv = nullptr;
  REQUIRE(cb_registry_open(&po, &priv) == CB_OK);
  const cb_config cfg = close_race_config(CB_POLICY_CONSECUTIVE);
  cb_handle ph = 0;
  REQUIRE(cb_create(priv, "private", &cfg, &ph) == CB_OK);
  std::mt19937 rng(7);
  constexpr int kCalls = 200;
  const int n = rounds();
  for (int round = 0; round < n; ++round) {
    CAPTURE(round);
    unlink(path.c_str());
    std::atomic<bool> go{false};
    std::atomic<cb_handle> shared_h{0};
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        while (!go.load(std::memory_order_acquire)) {
        }
        cb_ticket tk = 0;
        if (cb_allow(ph, &tk) != CB_OK || cb_done(ph, tk, CB_SUCCESS) != CB_OK) bad.fetch_add(1);
        cb_handle h;
        while ((h = shared_h.load(std::memory_order_acquire)) == 0) {
        }
        for (int i = 0; i < kCalls; ++i)
          if (cb_allow(h, &tk) != CB_OK || cb_done(h, tk, CB_SUCCESS) != CB_OK) bad.fetch_add(1);
      });
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.capacity = 16;
    o.path = path.c_str();
    o.flags = CB_REGISTRY_CREATE;
    go.store(true, std::memory_order_release);
    spin_for(std::chrono::microseconds(rng() % 200));
    cb_registry *reg = nullptr;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    cb_handle h = 0;
    REQUIRE(cb_create(reg, "shared", &cfg, &h) == CB_OK);
    shared_h.store(h, std::memory_order_release);
    for (std::thread &t : threads) t.join();
    CHECK(bad.load() == 0);
    cb_stats s;
    s.struct_size = sizeof s;
    REQUIRE(cb_stats_get(h, &s) == CB_OK);
    CHECK(s.admitted == uint64_t(kThreads) * kCalls);
    CHECK(s.successes == uint64_t(kThreads) * kCalls);
    REQUIRE(cb_registry_close(reg) == CB_OK);
  }
  unlink(path.c_str());
  REQUIRE(cb_registry_close(priv) == CB_OK);
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
