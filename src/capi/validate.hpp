// Argument checking for the C ABI: turns caller structs into validated core
// values, or a status and a message naming what is wrong.
#pragma once

#include <string_view>

#include "core/breaker.hpp"
#include "lazybreaker/lazybreaker.h"

namespace lazybreaker::capi {

// NULL = defaults. CB_OK or CB_EINVAL (with the message set).
int to_core_config(const cb_config *cfg, core::Config *out) noexcept;

// NULL = anonymous (an empty view). CB_OK or CB_EINVAL.
int check_name(const char *name, bool allow_null, std::string_view *out) noexcept;

// Checks a caller-sized struct: size at least `v1_size`, and any tail
// beyond `known_size` all zero. CB_OK or CB_EINVAL naming `what`.
int check_struct_size(const void *s, size_t size, size_t v1_size, size_t known_size,
                      const char *what) noexcept;

bool valid_utf8(std::string_view s) noexcept;

}  // namespace lazybreaker::capi
