// Shared set-up for the C ABI tests: a manual-clock registry and helpers
// that keep each test to the behaviour it pins.
#pragma once

#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>

#include <cstdint>

struct ManualRegistry {
  cb_registry *reg = nullptr;

  explicit ManualRegistry(uint32_t capacity = 64, uint32_t event_capacity = 0) {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.clock = CB_CLOCK_MANUAL;
    o.capacity = capacity;
    o.event_capacity = event_capacity;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  }
  ~ManualRegistry() { cb_registry_close(reg); }
  ManualRegistry(const ManualRegistry &) = delete;
  ManualRegistry &operator=(const ManualRegistry &) = delete;

  void advance(uint64_t ns) { REQUIRE(cb_clock_advance(reg, ns) == CB_OK); }

  cb_handle create(const cb_config &cfg, const char *name = nullptr) {
    cb_handle h = 0;
    REQUIRE(cb_create(reg, name, &cfg, &h) == CB_OK);
    return h;
  }
};

// A registry on the monotonic clock, the default options (rejections
// decided on the hot line need it).
struct MonotonicRegistry {
  cb_registry *reg = nullptr;

  MonotonicRegistry() { REQUIRE(cb_registry_open(nullptr, &reg) == CB_OK); }
  ~MonotonicRegistry() { cb_registry_close(reg); }
  MonotonicRegistry(const MonotonicRegistry &) = delete;
  MonotonicRegistry &operator=(const MonotonicRegistry &) = delete;

  cb_handle create(const cb_config &cfg) {
    cb_handle h = 0;
    REQUIRE(cb_create(reg, nullptr, &cfg, &h) == CB_OK);
    return h;
  }
};

inline cb_config config(uint32_t failure_threshold, uint64_t open_ns, uint32_t probes = 1,
                        uint32_t successes = 1, uint64_t lease_ns = 0) {
  cb_config c;
  cb_config_init(&c);
  c.failure_threshold = failure_threshold;
  c.open_duration_ns = open_ns;
  c.half_open_max_calls = probes;
  c.half_open_success_threshold = successes;
  c.half_open_timeout_ns = lease_ns;
  return c;
}

// Admits a call or fails the test; returns its ticket.
inline cb_ticket admit(cb_handle h) {
  cb_ticket t = 0;
  REQUIRE(cb_allow(h, &t) == CB_OK);
  return t;
}

// A call that takes `ns` on the manual clock.
inline void timed_call(ManualRegistry &r, cb_handle h, uint64_t ns, int outcome) {
  const cb_ticket t = admit(h);
  r.advance(ns);
  REQUIRE(cb_done(h, t, outcome) == CB_OK);
}

inline bool rejected(cb_handle h) {
  cb_ticket t = 0;
  return cb_allow(h, &t) == CB_REJECTED;
}

inline void call(cb_handle h, int outcome) { REQUIRE(cb_done(h, admit(h), outcome) == CB_OK); }

inline uint64_t retry_after(cb_handle h) {
  uint64_t ns = 0;
  REQUIRE(cb_retry_after(h, &ns) == CB_OK);
  return ns;
}

inline cb_stats stats(cb_handle h) {
  cb_stats s;
  s.struct_size = sizeof s;
  REQUIRE(cb_stats_get(h, &s) == CB_OK);
  return s;
}

// A rate policy's configuration (failure_threshold, which it ignores, at
// its default), with a 1 µs open duration.
inline cb_config count_window(uint32_t size, uint32_t minimum, double rate) {
  cb_config c = config(5, 1000);
  c.policy = CB_POLICY_COUNT_WINDOW;
  c.window_size = size;
  c.minimum_calls = minimum;
  c.failure_rate_threshold = rate;
  return c;
}

inline cb_config time_window(uint64_t duration, uint32_t buckets, uint32_t minimum, double rate) {
  cb_config c = config(5, 1000);
  c.policy = CB_POLICY_TIME_WINDOW;
  c.window_duration_ns = duration;
  c.window_buckets = buckets;
  c.minimum_calls = minimum;
  c.failure_rate_threshold = rate;
  return c;
}

// n calls, each admitted and reported with `outcome`.
inline void calls(cb_handle h, int n, int outcome) {
  for (int i = 0; i < n; ++i) call(h, outcome);
}
