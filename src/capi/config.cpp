// The C ABI's configuration defaults: cb_config_init_size and
// cb_registry_options_init_size, filled from the core's and the registry's
// own defaults, so no default is written twice.
#include <cstring>

#include "capi/errors.hpp"
#include "capi/versioned.hpp"
#include "core/breaker.hpp"
#include "lazybreaker/lazybreaker.h"

using lazybreaker::capi::fail;
using lazybreaker::capi::FirstVersion;

extern "C" {

CB_API int cb_config_init_size(cb_config *cfg, size_t size) CB_NOEXCEPT {
  if (cfg == nullptr) return fail(CB_EINVAL, "cb_config_init_size: cfg is NULL");
  if (size < FirstVersion::kConfig)
    return fail(CB_EINVAL, "cb_config_init_size: size %zu is smaller than the first version's %zu",
                size, FirstVersion::kConfig);
  const lazybreaker::core::Config core;
  cb_config defaults;
  std::memset(&defaults, 0, sizeof defaults);
  defaults.struct_size = size;
  defaults.failure_threshold = core.failure_threshold;
  defaults.open_duration_ns = core.open_duration_ns;
  defaults.half_open_max_calls = core.half_open_max_calls;
  defaults.half_open_success_threshold = core.half_open_success_threshold;
  defaults.half_open_timeout_ns = core.half_open_timeout_ns;
  defaults.policy = int(core.policy);
  defaults.window_size = core.window_size;
  defaults.window_duration_ns = core.window_duration_ns;
  defaults.window_buckets = core.window_buckets;
  defaults.minimum_calls = core.minimum_calls;
  defaults.failure_rate_threshold = core.failure_rate_threshold;
  defaults.slow_call_ns = core.slow_call_ns;
  defaults.slow_call_rate_threshold = core.slow_call_rate_threshold;
  defaults.open_backoff_multiplier = core.open_backoff_multiplier;
  defaults.open_duration_max_ns = core.open_duration_max_ns;
  defaults.open_jitter = core.open_jitter;
  lazybreaker::capi::copy_out(cfg, size, defaults);
  return CB_OK;
}

CB_API int cb_registry_options_init_size(cb_registry_options *opts, size_t size) CB_NOEXCEPT {
  if (opts == nullptr) return fail(CB_EINVAL, "cb_registry_options_init_size: opts is NULL");
  if (size < FirstVersion::kOptions)
    return fail(CB_EINVAL,
                "cb_registry_options_init_size: size %zu is smaller than the first version's %zu",
                size, FirstVersion::kOptions);
  cb_registry_options defaults;
  std::memset(&defaults, 0, sizeof defaults);
  defaults.struct_size = size;
  defaults.capacity = 0;  // 0 = the registry's default
  defaults.clock = CB_CLOCK_MONOTONIC;
  defaults.path = nullptr;
  lazybreaker::capi::copy_out(opts, size, defaults);
  return CB_OK;
}

}  // extern "C"
