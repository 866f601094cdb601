// Concurrency: both cores, many rounds. Each test checks an invariant that a
// race would break, not a timing.
//
// LB_STRESS_DIVISOR=N (a whole number, default 1) divides the rounds and
// calls of each case by N, for a platform where a run costs more (the
// Windows build under Wine runs with 10). Counts that a case's invariant
// needs (the 80 threads past the 64 stripes, the calls that cross a
// counter's fold) are not divided.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "barrier.hpp"
#include "fixture.hpp"

namespace {

unsigned thread_count() { return std::max(4u, 2 * std::thread::hardware_concurrency()); }

// n divided by LB_STRESS_DIVISOR, at least 1.
int sized(int n) {
  static const int divisor = [] {
    const char *text = std::getenv("LB_STRESS_DIVISOR");
    const int d = text == nullptr ? 1 : std::atoi(text);
    REQUIRE_MESSAGE(d >= 1, "LB_STRESS_DIVISOR must be a whole number from 1");
    return d;
  }();
  return std::max(1, n / divisor);
}

}  // namespace

TEST_CASE("thundering herd: exactly half_open_max_calls of T threads get a probe, every round") {
  for (uint32_t probes : {1u, 3u}) {
    CAPTURE(probes);
    ManualRegistry r;
    const cb_handle h = r.create(config(1, 1000, probes, 1));
    call(h, CB_FAILURE);
    const unsigned threads = thread_count();
    const int rounds = sized(2000);
    std::atomic<int> admitted{0};
    std::vector<cb_ticket> tickets(threads);
    std::vector<int> got(threads);
    lb_test::Barrier start(threads + 1), finish(threads + 1);
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i)
      pool.emplace_back([&, i] {
        for (int round = 0; round < rounds; ++round) {
          start.arrive_and_wait();
          got[i] = cb_allow(h, &tickets[i]);
          if (got[i] == CB_OK) admitted.fetch_add(1);
          finish.arrive_and_wait();
        }
      });
    bool exact = true;
    for (int round = 0; round < rounds; ++round) {
      r.advance(1000);  // the open duration ends for everyone at once
      admitted.store(0);
      start.arrive_and_wait();
      finish.arrive_and_wait();
      exact = exact && admitted.load() == int(probes) && cb_state(h) == CB_STATE_HALF_OPEN;
      // Fail every probe: the first re-opens, the rest are stale.
      for (unsigned i = 0; i < threads; ++i)
        if (got[i] == CB_OK) REQUIRE(cb_done(h, tickets[i], CB_FAILURE) == CB_OK);
      REQUIRE(cb_state(h) == CB_STATE_OPEN);
    }
    for (auto &t : pool) t.join();
    CHECK(exact);
    CHECK(stats(h).trips == uint64_t(rounds) + 1);
    CHECK(stats(h).admitted == uint64_t(rounds) * probes + 1);
  }
}

TEST_CASE("no lost trip, no double trip, and counters match what was reported") {
  ManualRegistry r;
  const uint32_t threshold = 8;
  const cb_handle h = r.create(config(threshold, 1000));
  const unsigned threads = 2;
  const int calls_per_thread = sized(1'000'000);
  struct Tally {
    uint64_t admitted = 0, rejected = 0, successes = 0, failures = 0, ignored = 0;
  };
  std::vector<Tally> tallies(threads);
  std::atomic<bool> running{true};
  std::atomic<uint64_t> resets{0};
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      Tally &t = tallies[i];
      uint64_t x = 0x9e3779b97f4a7c15ull * (i + 1);
      for (int n = 0; n < calls_per_thread; ++n) {
        cb_ticket ticket = 0;
        const int st = cb_allow(h, &ticket);
        if (st == CB_REJECTED) {
          ++t.rejected;
          continue;
        }
        REQUIRE(st == CB_OK);
        ++t.admitted;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const int outcome = (x % 16) < 13 ? CB_FAILURE : (x % 16) < 15 ? CB_SUCCESS : CB_IGNORED;
        REQUIRE(cb_done(h, ticket, outcome) == CB_OK);
        (outcome == CB_FAILURE ? t.failures : outcome == CB_SUCCESS ? t.successes : t.ignored)++;
      }
    });
  // The clock never moves, so only a reset leaves OPEN: every trip is one
  // CLOSED period ending, and no CLOSED period may hold a full failure run.
  std::thread resetter([&] {
    while (running.load()) {
      const cb_stats s = stats(h);
      const int state = cb_state(h);
      if (state == CB_STATE_OPEN) {
        REQUIRE(cb_reset(h) == CB_OK);
        resets.fetch_add(1);
      } else {
        REQUIRE(s.consecutive_failures < threshold);
      }
    }
  });
  for (auto &t : pool) t.join();
  running.store(false);
  resetter.join();

  Tally total;
  for (const Tally &t : tallies) {
    total.admitted += t.admitted, total.rejected += t.rejected, total.successes += t.successes;
    total.failures += t.failures, total.ignored += t.ignored;
  }
  const cb_stats s = stats(h);
  CHECK(s.admitted == total.admitted);
  CHECK(s.rejected == total.rejected);
  CHECK(s.successes == total.successes);
  CHECK(s.failures == total.failures);
  CHECK(s.ignored == total.ignored);
  CHECK(s.admitted + s.rejected == uint64_t(threads) * calls_per_thread);
  CHECK(resets.load() > 0);
  CHECK(s.trips == resets.load() + (cb_state(h) == CB_STATE_OPEN ? 1 : 0));
}

TEST_CASE("destroying a breaker while threads call it: no crash, they get CB_EHANDLE") {
  ManualRegistry r(4);
  for (int round = 0; round < sized(200); ++round) {
    const cb_handle h = r.create(config(2, 1000), "contended");
    std::atomic<bool> destroyed{false};
    std::atomic<int> started{0};
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < 3; ++i)
      pool.emplace_back([&] {
        started.fetch_add(1);
        for (;;) {
          const bool after = destroyed.load();
          cb_ticket t = 0;
          const int st = cb_allow(h, &t);
          const int d = st == CB_OK ? cb_done(h, t, CB_FAILURE) : st;
          const int s = cb_state(h);
          REQUIRE((st == CB_OK || st == CB_REJECTED || st == CB_EHANDLE));
          REQUIRE((d == CB_OK || d == CB_REJECTED || d == CB_EHANDLE));
          REQUIRE((s >= 0 || s == CB_EHANDLE));
          if (after) {
            REQUIRE(st == CB_EHANDLE);
            REQUIRE(s == CB_EHANDLE);
            return;
          }
        }
      });
    while (started.load() < 3) std::this_thread::yield();
    REQUIRE(cb_destroy(h) == CB_OK);
    destroyed.store(true);
    // The slot is reused at once; the old handle must stay dead.
    const cb_handle again = r.create(config(2, 1000), "contended");
    for (auto &t : pool) t.join();
    CHECK(cb_state(h) == CB_EHANDLE);
    CHECK(cb_state(again) >= 0);
    REQUIRE(cb_destroy(again) == CB_OK);
  }
}

TEST_CASE("racing creates of one name: exactly one wins, every round") {
  ManualRegistry r(64);
  const unsigned threads = thread_count();
  lb_test::Barrier sync(threads);
  std::vector<std::atomic<int>> wins(size_t(sized(400)));
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      for (size_t round = 0; round < wins.size(); ++round) {
        const std::string name = "race-" + std::to_string(round % 16);
        sync.arrive_and_wait();
        cb_handle h = 0;
        const int st = cb_create(r.reg, name.c_str(), nullptr, &h);
        REQUIRE((st == CB_OK || st == CB_EEXIST));
        if (st == CB_OK) wins[round].fetch_add(1);
        sync.arrive_and_wait();
        if (st == CB_OK) REQUIRE(cb_destroy(h) == CB_OK);
      }
    });
  for (auto &t : pool) t.join();
  for (auto &w : wins) REQUIRE(w.load() == 1);
}

TEST_CASE("concurrent create, lookup and destroy keep names and handles consistent") {
  ManualRegistry r(256);
  const int cycles = sized(20000);
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < 2; ++i)
    pool.emplace_back([&, i] {
      for (int n = 0; n < cycles; ++n) {
        const std::string name = "t" + std::to_string(i) + "-" + std::to_string(n % 100);
        cb_handle h = 0;
        REQUIRE(cb_create(r.reg, name.c_str(), nullptr, &h) == CB_OK);
        cb_handle found = 0;
        REQUIRE(cb_lookup(r.reg, name.c_str(), &found) == CB_OK);
        REQUIRE(found == h);
        REQUIRE(cb_destroy(h) == CB_OK);
        REQUIRE(cb_lookup(r.reg, name.c_str(), &found) == CB_ENOENT);
      }
    });
  for (auto &t : pool) t.join();
}

TEST_CASE("count window under both cores: once calls return, the window holds whole buckets") {
  ManualRegistry r;
  cb_config c = config(1, 1000);
  c.policy = CB_POLICY_COUNT_WINDOW;
  c.window_size = 1000;            // 32 buckets of 32 outcomes
  c.failure_rate_threshold = 1.0;  // each thread alternates, so never reached
  const cb_handle h = r.create(c);
  const int per_thread = sized(500'000);
  std::vector<std::thread> pool;
  for (int t = 0; t < 2; ++t)
    pool.emplace_back([&] {
      for (int n = 0; n < per_thread; ++n)
        REQUIRE(cb_done(h, admit(h), n % 2 ? CB_FAILURE : CB_SUCCESS) == CB_OK);
    });
  for (auto &t : pool) t.join();
  const cb_stats s = stats(h);
  CHECK(s.failures == uint64_t(per_thread));
  CHECK(s.successes == uint64_t(per_thread));
  // Each thread ends on a failure, which settles the success it held back,
  // so nothing is held. A held success whose bucket the other thread moved
  // the window past meanwhile was dropped (docs/policies.md, held
  // successes), so the head may be part full: the window holds 31 full
  // buckets and the head, 993 to 1,024 calls, and failure_rate is a
  // fraction of one of them.
  int denominators = 0;
  for (int calls = 31 * 32 + 1; calls <= 32 * 32; ++calls) {
    const double failures = s.failure_rate * calls;
    if (std::abs(failures - std::round(failures)) < 1e-6) ++denominators;
  }
  CHECK(denominators > 0);
  CHECK(s.failure_rate > 0.4);
  CHECK(s.failure_rate < 0.6);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("rate policies under both cores: a failure storm trips exactly once") {
  for (int policy : {CB_POLICY_COUNT_WINDOW, CB_POLICY_TIME_WINDOW}) {
    CAPTURE(policy);
    ManualRegistry r;
    cb_config c = config(1, 1'000'000'000);
    c.policy = policy;
    c.window_size = 100;
    c.minimum_calls = 100;
    c.failure_rate_threshold = 0.5;
    const cb_handle h = r.create(c);
    const int per_thread = sized(200'000);
    std::vector<std::thread> pool;
    for (int t = 0; t < 2; ++t)
      pool.emplace_back([&] {
        for (int n = 0; n < per_thread; ++n) {
          cb_ticket k = 0;
          if (cb_allow(h, &k) == CB_OK) REQUIRE(cb_done(h, k, CB_FAILURE) == CB_OK);
        }
      });
    for (auto &t : pool) t.join();
    const cb_stats s = stats(h);
    CHECK(cb_state(h) == CB_STATE_OPEN);
    CHECK(s.trips == 1);
    CHECK(s.admitted >= 97);  // a full count window of 100 always holds 97 (buckets of 4)
    CHECK(s.admitted + s.rejected == uint64_t(2) * per_thread);
  }
}

TEST_CASE("time window under both cores with a moving clock: counts stay exact per bucket") {
  ManualRegistry r;
  cb_config c = config(1, 1000);
  c.policy = CB_POLICY_TIME_WINDOW;
  c.window_duration_ns = 32'000'000;
  c.window_buckets = 32;
  c.minimum_calls = CB_MAX_MINIMUM_CALLS;
  const cb_handle h = r.create(c);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reported{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 2; ++t)
    pool.emplace_back([&] {
      while (!stop.load()) {
        REQUIRE(cb_done(h, admit(h), CB_FAILURE) == CB_OK);
        reported.fetch_add(1);
      }
    });
  for (int i = 0; i < sized(2000); ++i) {
    // The callers make progress between the clock's steps, however loaded
    // the machine (else nothing would be counted and the rate would be 0).
    const uint64_t before = reported.load();
    while (reported.load() < before + 2) std::this_thread::yield();
    REQUIRE(cb_clock_advance(r.reg, 10'000) == CB_OK);  // 20 ms in all: all in the window
  }
  stop.store(true);
  for (auto &t : pool) t.join();
  // Every outcome is inside the window, and the rate stays exactly 1.
  CHECK(stats(h).failure_rate == 1.0);
  CHECK(stats(h).failures == reported.load());
}

TEST_CASE("a lookup racing destroy and reuse never returns the breaker now in the slot") {
  ManualRegistry r(1);  // one slot: every create reuses it
  std::atomic<bool> stop{false};
  const int cycles = sized(200'000);
  std::thread churn([&] {
    for (int n = 0; n < cycles; ++n) {
      cb_handle h = 0;
      REQUIRE(cb_create(r.reg, n % 2 ? "odd" : "even", nullptr, &h) == CB_OK);
      REQUIRE(cb_destroy(h) == CB_OK);
    }
    stop.store(true);
  });
  uint64_t found = 0;
  while (!stop.load()) {
    cb_handle h = 0;
    if (cb_lookup(r.reg, "odd", &h) != CB_OK) continue;
    char name[CB_MAX_NAME_BYTES + 1];
    const int st = cb_name(h, name, sizeof name);
    REQUIRE((st == CB_EHANDLE || (st == CB_OK && std::string(name) == "odd")));
    found += st == CB_OK;
  }
  churn.join();
  MESSAGE("lookups that found \"odd\" alive: " << found);
}

TEST_CASE("counts stay exact with more threads than counter stripes, coming and going") {
  ManualRegistry r;
  const cb_handle h = r.create(config(8, 1000));
  const int waves = 3, threads_per_wave = 80,
            calls = sized(20'000);  // 80 > the 64 own stripes at most
  for (int wave = 0; wave < waves; ++wave) {
    std::vector<std::thread> pool;
    std::atomic<int> bad{0};
    for (int i = 0; i < threads_per_wave; ++i)
      pool.emplace_back([&] {
        for (int n = 0; n < calls; ++n) {
          cb_ticket t = 0;
          if (cb_allow(h, &t) != CB_OK || cb_done(h, t, CB_SUCCESS) != CB_OK) bad.fetch_add(1);
        }
      });
    for (auto &t : pool) t.join();
    REQUIRE(bad.load() == 0);
    const uint64_t expected = uint64_t(wave + 1) * threads_per_wave * calls;
    const cb_stats s = stats(h);
    CHECK(s.admitted == expected);
    CHECK(s.successes == expected);
  }
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE(
    "a closed registry's handle stays stale while other registries take its slots and close") {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = 1024;
  cb_registry *gone = nullptr;
  REQUIRE(cb_registry_open(&o, &gone) == CB_OK);
  cb_handle stale = 0;
  REQUIRE(cb_create(gone, "gone", nullptr, &stale) == CB_OK);
  REQUIRE(cb_registry_close(gone) == CB_OK);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> calls{0}, wrong{0};
  std::thread caller([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      cb_ticket t = 0;
      if (cb_allow(stale, &t) != CB_EHANDLE || cb_state(stale) != CB_EHANDLE ||
          cb_done(stale, t, CB_FAILURE) != CB_EHANDLE)
        wrong.fetch_add(1);
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // Each of these takes the run the closed registry had, and frees it again
  // while the caller above is in the middle of its calls.
  for (int i = 0; i < sized(3000); ++i) {
    cb_registry *next = nullptr;
    REQUIRE(cb_registry_open(&o, &next) == CB_OK);
    cb_handle h = 0;
    REQUIRE(cb_create(next, "next", nullptr, &h) == CB_OK);
    REQUIRE(cb_registry_close(next) == CB_OK);
  }
  stop.store(true);
  caller.join();
  CHECK(calls.load() > 0);
  CHECK(wrong.load() == 0);
}

TEST_CASE("mixed outcomes from 2 to 80 threads: every count is exact under each policy") {
  struct Policy {
    int policy;
    uint64_t slow_ns;
  };
  for (const Policy p : {Policy{CB_POLICY_CONSECUTIVE, 0}, Policy{CB_POLICY_COUNT_WINDOW, 0},
                         Policy{CB_POLICY_TIME_WINDOW, 0}, Policy{CB_POLICY_COUNT_WINDOW, 500}}) {
    for (const int threads : {2, 8, 80}) {
      CAPTURE(p.policy);
      CAPTURE(p.slow_ns);
      CAPTURE(threads);
      ManualRegistry r;
      cb_config c = config(CB_MAX_FAILURE_THRESHOLD, 1000);
      c.policy = p.policy;
      c.failure_rate_threshold = 1.0;  // a third of the outcomes fail: never reached
      c.slow_call_ns = p.slow_ns;
      c.slow_call_rate_threshold = 1.0;
      const cb_handle h = r.create(c);
      const int per_thread = sized(300'000) / threads;
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          for (int n = 0; n < per_thread; ++n) {
            const int outcome = (n + t) % 3 == 0   ? CB_FAILURE
                                : (n + t) % 7 == 0 ? CB_IGNORED
                                                   : CB_SUCCESS;
            REQUIRE(cb_done(h, admit(h), outcome) == CB_OK);
          }
        });
      for (auto &t : pool) t.join();
      uint64_t failures = 0, ignored = 0;
      for (int t = 0; t < threads; ++t)
        for (int n = 0; n < per_thread; ++n) {
          failures += (n + t) % 3 == 0;
          ignored += (n + t) % 3 != 0 && (n + t) % 7 == 0;
        }
      const uint64_t total = uint64_t(threads) * per_thread;
      const cb_stats s = stats(h);
      CHECK(cb_state(h) == CB_STATE_CLOSED);
      CHECK(s.admitted == total);
      CHECK(s.failures == failures);
      CHECK(s.ignored == ignored);
      CHECK(s.successes == total - failures - ignored);
      CHECK(s.rejected == 0);
    }
  }
}

TEST_CASE("OPEN rejections on a monotonic clock from 2 to 80 threads are each counted once") {
  for (const int threads : {2, 8, 80}) {
    CAPTURE(threads);
    cb_registry *reg = nullptr;
    REQUIRE(cb_registry_open(nullptr, &reg) == CB_OK);
    const cb_config c = config(1, CB_MAX_DURATION_NS);
    cb_handle h = 0;
    REQUIRE(cb_create(reg, nullptr, &c, &h) == CB_OK);
    call(h, CB_FAILURE);
    const int per_thread = sized(400'000) / threads;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (int n = 0; n < per_thread; ++n) REQUIRE(rejected(h));
      });
    for (auto &t : pool) t.join();
    CHECK(stats(h).rejected == uint64_t(threads) * per_thread);
    CHECK(stats(h).admitted == 1);
    cb_registry_close(reg);
  }
}

namespace {

// Every counter of `now` is at least that of `before`.
bool no_counter_went_back(const cb_stats &before, const cb_stats &now) {
  return now.admitted >= before.admitted && now.rejected >= before.rejected &&
         now.successes >= before.successes && now.failures >= before.failures &&
         now.ignored >= before.ignored && now.slow >= before.slow;
}

}  // namespace

TEST_CASE("counts folded from each thread's cell many times stay exact and never go back") {
  // Each thread's own counters are 16-bit fields that fold into the
  // breaker's totals every 32,768 counts: 250,000 calls per thread cross
  // the admitted field's fold 7 times, the successes' 5 and the failures' 2;
  // 70,000 rejections per thread cross the rejected field's twice. A reader
  // racing the folds must never see a count twice or miss one.
  ManualRegistry r;
  const cb_handle h = r.create(config(CB_MAX_FAILURE_THRESHOLD, CB_MAX_DURATION_NS));
  const int threads = 6, calls = 250'000, rejections = 70'000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> reads{0}, went_back{0};
  std::thread reader([&] {
    cb_stats last = stats(h);
    while (!done.load(std::memory_order_acquire)) {
      const cb_stats now = stats(h);
      if (!no_counter_went_back(last, now)) went_back.fetch_add(1);
      last = now;
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  lb_test::Barrier tripped(threads + 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int n = 0; n < calls; ++n) {
        const int outcome = (n + t) % 3 == 0   ? CB_FAILURE
                            : (n + t) % 7 == 0 ? CB_IGNORED
                                               : CB_SUCCESS;
        REQUIRE(cb_done(h, admit(h), outcome) == CB_OK);
      }
      tripped.arrive_and_wait();  // the main thread trips the breaker
      tripped.arrive_and_wait();
      for (int n = 0; n < rejections; ++n) REQUIRE(rejected(h));
    });
  tripped.arrive_and_wait();
  const cb_stats closed = stats(h);
  REQUIRE(cb_trip(h, CB_MAX_DURATION_NS) == CB_OK);
  tripped.arrive_and_wait();
  for (auto &t : pool) t.join();
  done.store(true, std::memory_order_release);
  reader.join();
  uint64_t failures = 0, ignored = 0;
  for (int t = 0; t < threads; ++t)
    for (int n = 0; n < calls; ++n) {
      failures += (n + t) % 3 == 0;
      ignored += (n + t) % 3 != 0 && (n + t) % 7 == 0;
    }
  const uint64_t total = uint64_t(threads) * calls;
  CHECK(closed.admitted == total);
  CHECK(closed.failures == failures);
  CHECK(closed.ignored == ignored);
  CHECK(closed.successes == total - failures - ignored);
  const cb_stats s = stats(h);
  CHECK(s.admitted == total);
  CHECK(s.successes == total - failures - ignored);
  CHECK(s.failures == failures);
  CHECK(s.rejected == uint64_t(threads) * rejections);
  MESSAGE("concurrent reads: " << reads.load());
  CHECK(reads.load() > 0);
  CHECK(went_back.load() == 0);
}

TEST_CASE("a thread that takes over an exited thread's counter stripe goes on from its counts") {
  // Fewer threads than stripes, so each wave's threads take the stripes the
  // last wave gave back; 20,000 calls per thread per wave means a field
  // folds only under its second owner (at 32,768), and again under its
  // fourth.
  ManualRegistry r;
  const cb_handle h = r.create(config(8, 1000));
  cb_registry_options o;
  cb_registry_options_init(&o);
  cb_registry *monotonic = nullptr;
  REQUIRE(cb_registry_open(&o, &monotonic) == CB_OK);
  const cb_config c = config(1, CB_MAX_DURATION_NS);
  cb_handle open = 0;
  REQUIRE(cb_create(monotonic, nullptr, &c, &open) == CB_OK);
  call(open, CB_FAILURE);  // OPEN: its rejections take the fast path
  const int waves = 4, threads = 3, calls = 20'000;
  for (int wave = 1; wave <= waves; ++wave) {
    CAPTURE(wave);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (int n = 0; n < calls; ++n) {
          call(h, CB_SUCCESS);
          REQUIRE(rejected(open));
        }
      });
    for (auto &t : pool) t.join();
    const uint64_t expected = uint64_t(wave) * threads * calls;
    const cb_stats s = stats(h);
    CHECK(s.admitted == expected);
    CHECK(s.successes == expected);
    CHECK(stats(open).rejected == expected);
    CHECK(stats(open).admitted == 1);
  }
  cb_registry_close(monotonic);
}

TEST_CASE("held successes are never counted twice: a reader racing a settling thread") {
  // One thread reports successes, which it holds back and settles every
  // 32nd; the main thread reads the failure rate meanwhile. The window
  // holds exactly 100 failures, so the rate says how many calls the reader
  // counted: never more than had completed by the end of its read, plus
  // the one in flight (docs/policies.md, held successes).
  ManualRegistry r;
  cb_config c = config(1, 1000);
  c.policy = CB_POLICY_TIME_WINDOW;
  c.window_duration_ns = 60'000'000'000ull;  // the manual clock stays in one bucket
  c.minimum_calls = 50;
  c.failure_rate_threshold = 1.0;
  const cb_handle h = r.create(c);
  REQUIRE(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
  for (int n = 0; n < 100; ++n) REQUIRE(cb_done(h, admit(h), CB_FAILURE) == CB_OK);
  std::atomic<uint64_t> done{0};
  std::atomic<bool> stop{false};
  std::thread reporter([&] {
    while (!stop.load()) {
      REQUIRE(cb_done(h, admit(h), CB_SUCCESS) == CB_OK);
      done.fetch_add(1);
    }
  });
  uint64_t too_many = 0;
  for (int n = 0; n < sized(200'000); ++n) {
    const cb_stats s = stats(h);
    const uint64_t completed = done.load();
    const double calls = 100.0 / s.failure_rate;
    if (calls > double(101 + completed + 1) + 0.5) ++too_many;
  }
  stop = true;
  reporter.join();
  CHECK(too_many == 0);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}
