// The footprint of many breakers in one registry, measured (resident
// memory from /proc/self/statm), never timed: at a smaller scale than the
// scale benchmark (bench/scale.cpp, a million breakers), it pins the bytes
// per breaker that docs/policies.md states, so that a change which makes
// breakers bigger fails here. The bounds are today's figures with a margin
// for the allocator and page granularity. Breakers with equal
// configurations share one copy of it, only window breakers have window
// memory, sized by their buckets, a thread's counter cell is 8 bytes per
// breaker, and a name costs its own length rounded up to 8 bytes plus an
// 8-byte reference (src/registry/name_index.hpp).
#include <unistd.h>

#include <barrier>
#include <cstdio>
#include <thread>
#include <vector>

#include "fixture.hpp"

namespace {

long resident_bytes() {
  long size = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  REQUIRE(f != nullptr);
  REQUIRE(std::fscanf(f, "%ld %ld", &size, &resident) == 2);
  std::fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

struct Footprint {
  double at_rest, after_calls;  // bytes per breaker, its 32-byte name included
};

Footprint measure(int policy, uint32_t n, int threads, uint32_t window_size = 100,
                  uint64_t slow_call_ns = 0) {
  std::vector<std::string> names(n);
  for (uint32_t i = 0; i < n; ++i) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "downstream-host-%016u", i);
    names[i] = buf;
  }
  std::vector<cb_handle> handles(n);
  cb_config c;
  cb_config_init(&c);
  c.policy = policy;
  c.window_size = window_size;
  c.slow_call_ns = slow_call_ns;
  const long before = resident_bytes();
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = n;
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  for (uint32_t i = 0; i < n; ++i)
    REQUIRE(cb_create(reg, names[i].c_str(), &c, &handles[i]) == CB_OK);
  const long rest = resident_bytes();
  std::vector<std::thread> pool;
  // No thread exits before every thread has called: each keeps a counter
  // stripe of its own, as the threads of a pool do (an exited thread's
  // stripe goes to the next thread).
  std::barrier all_called(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (const cb_handle h : handles) {
        cb_ticket k = 0;
        if (cb_allow(h, &k) == CB_OK) cb_done(h, k, CB_SUCCESS);
      }
      all_called.arrive_and_wait();
    });
  for (auto &t : pool) t.join();
  const long called = resident_bytes();
  for (const cb_handle h : handles) CHECK(stats(h).successes == uint64_t(threads));
  cb_registry_close(reg);
  return {double(rest - before) / n, double(called - before) / n};
}

}  // namespace

TEST_CASE(
    "a consecutive breaker takes at most 128 bytes at rest beyond its 32-byte name, and 16 threads "
    "calling it add at most 160") {
  const Footprint f = measure(CB_POLICY_CONSECUTIVE, 65536, 16);
  MESSAGE("consecutive: " << f.at_rest << " bytes at rest, " << f.after_calls << " after calls");
  // No counter page is touched before a call (a fresh slot's counts start
  // at zero without writing their base).
  CHECK(f.at_rest <= 32 + 128);
  // 8 bytes of counter cell per thread (core::Cell), and page granularity.
  CHECK(f.after_calls - f.at_rest <= 160);
}

TEST_CASE("a count-window breaker of 25 buckets takes at most 128 + 16 per bucket at rest") {
  const Footprint f = measure(CB_POLICY_COUNT_WINDOW, 65536, 1);
  MESSAGE("count window: " << f.at_rest << " bytes at rest, " << f.after_calls << " after calls");
  CHECK(f.at_rest <= 32 + 128 + 16 * 25);
}

TEST_CASE("a window takes its 16-byte header and 8 bytes a bucket, 16 with slow-call tracking") {
  // Bucket rooms are powers of two: 1, 32 (window_size 32: 32 buckets of 1).
  constexpr uint32_t n = 65536;
  const double consecutive = measure(CB_POLICY_CONSECUTIVE, n, 0).at_rest;
  const double one = measure(CB_POLICY_COUNT_WINDOW, n, 0, 1).at_rest - consecutive;
  const double many = measure(CB_POLICY_COUNT_WINDOW, n, 0, 32).at_rest - consecutive;
  const double slow = measure(CB_POLICY_COUNT_WINDOW, n, 0, 32, 1'000'000).at_rest - consecutive;
  MESSAGE("window beyond a consecutive breaker: 1 bucket " << one << ", 32 buckets " << many
                                                           << ", 32 with slow calls " << slow);
  CHECK(one <= 16 + 8 + 8);
  CHECK(many <= 16 + 32 * 8 + 8);
  CHECK(many >= 16 + 32 * 8 - 8);
  CHECK(slow <= 16 + 32 * 16 + 8);
}

TEST_CASE("breakers created after others were destroyed reuse their names' space") {
  // A name of a destroyed breaker is reused by the next name of its size:
  // a second generation of as many breakers with names as long costs no
  // more memory than the first left behind (a leak would cost 32 bytes per
  // breaker here).
  constexpr uint32_t kBreakers = 65536;
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = kBreakers;
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  std::vector<cb_handle> handles(kBreakers);
  auto create_all = [&](const char *prefix) {
    for (uint32_t i = 0; i < kBreakers; ++i) {
      char name[40];
      std::snprintf(name, sizeof name, "%s-host-%016u", prefix, i);
      REQUIRE(cb_create(reg, name, nullptr, &handles[i]) == CB_OK);
    }
  };
  create_all("first");
  for (const cb_handle h : handles) REQUIRE(cb_destroy(h) == CB_OK);
  const long first = resident_bytes();
  create_all("again");
  const long again = resident_bytes();
  MESSAGE("a second generation grew resident memory by " << double(again - first) / kBreakers
                                                         << " bytes per breaker");
  CHECK(double(again - first) / kBreakers <= 2);
  cb_registry_close(reg);
}
