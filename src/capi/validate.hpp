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

// No version of any struct_size-led struct is, or will be, larger than
// this: a struct_size above it is a value nobody set (stack garbage), and
// trusting it would read or write far past the caller's struct.
inline constexpr size_t kMaxStructSize = 65536;

// CB_OK if `size` is at most kMaxStructSize, else CB_EINVAL (field
// "struct_size") naming `what`.
int check_struct_bound(size_t size, const char *what) noexcept;

// Checks a caller-sized struct: size from `v1_size` to kMaxStructSize, and
// any tail beyond `known_size` all zero. CB_OK or CB_EINVAL naming `what`.
int check_struct_size(const void *s, size_t size, size_t v1_size, size_t known_size,
                      const char *what) noexcept;

bool valid_utf8(std::string_view s) noexcept;

}  // namespace lazybreaker::capi
