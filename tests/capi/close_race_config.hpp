// The configuration the close-race tests and fuzz_close give their
// breakers: every policy, with an open duration so short that OPEN,
// HALF_OPEN and CLOSED all come up while the registry closes.
#pragma once

#include <lazybreaker/lazybreaker.h>

inline cb_config close_race_config(int policy) {
  cb_config c;
  cb_config_init(&c);
  c.policy = policy;
  c.failure_threshold = 3;
  c.window_size = 16;
  c.minimum_calls = 4;
  c.window_duration_ns = 1'000'000'000;
  c.window_buckets = 8;
  c.slow_call_ns = policy == CB_POLICY_TIME_WINDOW ? 1'000'000'000 : 0;
  c.open_duration_ns = 1000;
  return c;
}
