// The C ABI's configuration defaults: cb_config_init_size from lists.h's
// CB_CONFIG_FIELDS (which the core's Config takes its defaults from too),
// cb_registry_options_init_size from the registry's own.
#include <cstring>

#include "capi/errors.hpp"
#include "capi/validate.hpp"
#include "capi/versioned.hpp"
#include "lazybreaker/lazybreaker.h"

using lazybreaker::capi::fail;
using lazybreaker::capi::FirstVersion;

extern "C" {

CB_API int cb_config_init_size(cb_config *cfg, size_t size) CB_NOEXCEPT {
  if (cfg == nullptr) return fail(CB_EINVAL, "cb_config_init_size: cfg is NULL");
  if (const int st = lazybreaker::capi::check_struct_bound(size, "cb_config_init_size");
      st != CB_OK)
    return st;
  if (size < FirstVersion::kConfig)
    return fail(CB_EINVAL, "cb_config_init_size: size %zu is smaller than the first version's %zu",
                size, FirstVersion::kConfig);
  cb_config defaults;
  std::memset(&defaults, 0, sizeof defaults);
  defaults.struct_size = size;
#define LB_SET_DEFAULT(field, type, since, unit, bounds, lo, hi, def) defaults.field = def;
  CB_CONFIG_FIELDS(LB_SET_DEFAULT)
#undef LB_SET_DEFAULT
  lazybreaker::capi::copy_out(cfg, size, defaults);
  return CB_OK;
}

CB_API int cb_registry_options_init_size(cb_registry_options *opts, size_t size) CB_NOEXCEPT {
  if (opts == nullptr) return fail(CB_EINVAL, "cb_registry_options_init_size: opts is NULL");
  if (const int st = lazybreaker::capi::check_struct_bound(size, "cb_registry_options_init_size");
      st != CB_OK)
    return st;
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
