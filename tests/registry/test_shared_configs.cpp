// A registry stores each distinct configuration once, shared by the
// breakers that have it, and frees it with the last of them
// (src/registry/config_table.hpp); only window breakers get window memory
// (src/registry/window_pool.hpp). Through the C ABI, with the registry's
// C++ layer for the count of configurations in use.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "capi/fixture.hpp"
#include "capi/resolve.hpp"
#include "core/breaker.hpp"

namespace {

uint32_t configs_in_use(cb_registry *reg) {
  return lazybreaker::capi::from_public(reg)->configs_in_use();
}

cb_config jittered() {
  cb_config c = config(3, 100'000);
  c.open_jitter = 0.2;
  return c;
}

void destroy_all(std::vector<cb_handle> &hs) {
  for (const cb_handle h : hs) REQUIRE(cb_destroy(h) == CB_OK);
  hs.clear();
}

}  // namespace

TEST_CASE("equal configurations have equal words, whatever their padding held") {
  using lazybreaker::core::Config;
  using lazybreaker::core::ConfigCell;
  alignas(Config) unsigned char zeros[sizeof(Config)], garbage[sizeof(Config)];
  std::memset(zeros, 0, sizeof zeros);
  std::memset(garbage, 0xab, sizeof garbage);
  // Default-initialised: the members get their initialisers, the padding
  // keeps what the bytes held.
  Config *a = new (zeros) Config, *b = new (garbage) Config;
  a->finish();
  b->finish();
  // The padding after WindowShape::held_limit, whatever finish() left there.
  std::memset(reinterpret_cast<unsigned char *>(&b->shape) + 2, 0xab, 2);
  CHECK(ConfigCell::words(*a) == ConfigCell::words(*b));
  b->window_buckets = 7;
  b->finish();
  CHECK(ConfigCell::words(*a) != ConfigCell::words(*b));
}

TEST_CASE("breakers with equal configurations share one entry; different ones do not") {
  ManualRegistry r(1024);
  std::vector<cb_handle> first, second;
  for (int i = 0; i < 100; ++i) first.push_back(r.create(jittered()));
  CHECK(configs_in_use(r.reg) == 1);
  cb_config other = jittered();
  other.failure_threshold = 4;
  second.push_back(r.create(other));
  CHECK(configs_in_use(r.reg) == 2);
  for (int i = 0; i < 10; ++i) second.push_back(r.create(other));
  CHECK(configs_in_use(r.reg) == 2);
  cb_config window = jittered();
  window.policy = CB_POLICY_COUNT_WINDOW;
  const cb_handle w = r.create(window);
  CHECK(configs_in_use(r.reg) == 3);
  REQUIRE(cb_destroy(w) == CB_OK);
  CHECK(configs_in_use(r.reg) == 2);
  destroy_all(first);
  CHECK(configs_in_use(r.reg) == 1);
  destroy_all(second);
  CHECK(configs_in_use(r.reg) == 0);
}

TEST_CASE("a shared configuration is each breaker's own: tripping one leaves the others") {
  ManualRegistry r(64);
  const cb_handle a = r.create(config(1, 1000)), b = r.create(config(1, 1000));
  REQUIRE(configs_in_use(r.reg) == 1);
  call(a, CB_FAILURE);
  CHECK(cb_state(a) == CB_STATE_OPEN);
  CHECK(cb_state(b) == CB_STATE_CLOSED);
  REQUIRE(cb_destroy(a) == CB_OK);
  // The entry lives on with b.
  CHECK(configs_in_use(r.reg) == 1);
  call(b, CB_FAILURE);
  CHECK(cb_state(b) == CB_STATE_OPEN);
  CHECK(retry_after(b) == 1000);
}

TEST_CASE("a failed create gives its configuration back") {
  ManualRegistry r(64);
  const cb_handle a = r.create(config(2, 1000), "taken");
  cb_handle h = 0;
  const cb_config other = config(3, 1000);
  CHECK(cb_create(r.reg, "taken", &other, &h) == CB_EEXIST);
  CHECK(configs_in_use(r.reg) == 1);
  REQUIRE(cb_destroy(a) == CB_OK);
  CHECK(configs_in_use(r.reg) == 0);
}

TEST_CASE(
    "distinct configurations and windows at full capacity, over and over: never full below "
    "capacity, nothing leaked") {
  constexpr uint32_t kCapacity = 1024;
  ManualRegistry r(kCapacity);
  std::mt19937 rng(15);
  std::vector<cb_handle> hs;
  for (uint32_t round = 0; round < 24; ++round) {
    for (uint32_t k = 0; k < kCapacity; ++k) {
      cb_config c = config(1 + round * kCapacity + k, 1000);
      // Every round fills one window size class (rooms 1 .. 32, with and
      // without slow words), or mixes them all.
      const uint32_t cls = round < 12 ? round : k % 12;
      c.policy = cls % 3 == 0 ? CB_POLICY_CONSECUTIVE : CB_POLICY_COUNT_WINDOW;
      c.window_size = 1u << (cls % 6);
      c.minimum_calls = 1;
      if (cls >= 6) c.slow_call_ns = 1000;
      cb_handle h = 0;
      REQUIRE(cb_create(r.reg, nullptr, &c, &h) == CB_OK);
      hs.push_back(h);
    }
    CHECK(configs_in_use(r.reg) == kCapacity);
    cb_handle over = 0;
    const cb_config c = config(5, 1000);
    CHECK(cb_create(r.reg, nullptr, &c, &over) == CB_EFULL);
    std::shuffle(hs.begin(), hs.end(), rng);
    destroy_all(hs);
    REQUIRE(configs_in_use(r.reg) == 0);
  }
}

TEST_CASE("neighbouring windows of one size class keep their own counts") {
  // 64 one-bucket windows and 64 thirty-two-bucket windows with slow words,
  // each next to the next in its class's memory: each gets its own pattern.
  ManualRegistry r(256);
  std::vector<cb_handle> small, large;
  for (uint32_t i = 0; i < 64; ++i) {
    cb_config c = config(100, 1000);
    c.policy = CB_POLICY_COUNT_WINDOW;
    c.window_size = 1;
    c.minimum_calls = 2;  // never reached by a one-outcome window: none trips
    small.push_back(r.create(c));
    c.window_size = 32;
    c.minimum_calls = 32;
    c.failure_rate_threshold = 1.0;
    c.slow_call_ns = 1000;
    large.push_back(r.create(c));
  }
  for (uint32_t i = 0; i < 64; ++i) {
    call(small[i], i % 2 == 0 ? CB_FAILURE : CB_SUCCESS);
    for (uint32_t k = 0; k < 32; ++k) {
      const cb_ticket t = admit(large[i]);
      if (k < i % 32) r.advance(1001);  // slow
      REQUIRE(cb_done(large[i], t, k < i % 16 ? CB_FAILURE : CB_SUCCESS) == CB_OK);
    }
  }
  for (uint32_t i = 0; i < 64; ++i) {
    CHECK(stats(small[i]).failure_rate == (i % 2 == 0 ? 1.0 : 0.0));
    const cb_stats s = stats(large[i]);
    CHECK(s.failure_rate == double(i % 16) / 32);
    CHECK(s.slow_rate == double(i % 32) / 32);
    CHECK(cb_state(large[i]) == CB_STATE_CLOSED);
  }
}

TEST_CASE("concurrent creates and destroys of equal and distinct configurations leak nothing") {
  constexpr uint32_t kCapacity = 2048;
  ManualRegistry r(kCapacity);
  constexpr int kThreads = 4, kRounds = 3000, kHeld = 16;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<cb_handle> held;
      for (int i = 0; i < kRounds; ++i) {
        // One in three is shared by every thread, the rest distinct.
        const bool shared = rng() % 3 == 0;
        const uint32_t threshold =
            shared ? 1 + uint32_t(rng() % 3) : 10 + uint32_t(t * kRounds + i);
        cb_config c = config(threshold, 1000);
        if (rng() % 2 == 0) {
          c.policy = CB_POLICY_COUNT_WINDOW;
          c.window_size = 1 + uint32_t(rng() % 32);
          c.minimum_calls = 1;
        }
        cb_handle h = 0;
        if (cb_create(r.reg, nullptr, &c, &h) != CB_OK) {
          ++failures;
          continue;
        }
        // The breaker has its own threshold: that many failures trip it.
        // (A window breaker trips on its first failure, at a rate of 1.)
        const uint32_t trip_after = c.policy == CB_POLICY_COUNT_WINDOW ? 1 : threshold;
        for (uint32_t k = 0; k < std::min<uint32_t>(trip_after, 3); ++k) {
          if (cb_state(h) != CB_STATE_CLOSED) ++failures;
          cb_ticket tk = 0;
          if (cb_allow(h, &tk) != CB_OK || cb_done(h, tk, CB_FAILURE) != CB_OK) ++failures;
        }
        if (trip_after <= 3 && cb_state(h) != CB_STATE_OPEN) ++failures;
        held.push_back(h);
        if (held.size() > kHeld) {
          if (cb_destroy(held.front()) != CB_OK) ++failures;
          held.erase(held.begin());
        }
      }
      for (const cb_handle h : held)
        if (cb_destroy(h) != CB_OK) ++failures;
    });
  for (auto &th : pool) th.join();
  CHECK(failures.load() == 0);
  CHECK(configs_in_use(r.reg) == 0);
}
