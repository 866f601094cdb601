// The versioned-struct idiom (docs/conventions.md) in one place: a
// struct_size-led struct's size up to a field, whether a caller's struct has
// a field, the first versions' sizes, and writing a struct out to a caller
// whose struct may be shorter or longer than the library's.
#pragma once

#include <cstddef>
#include <cstring>

#include "lazybreaker/lazybreaker.h"

// The size of `type` up to and including `field`.
#define LB_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)nullptr)->field))
// Whether a caller's struct of `size` bytes has `field` (it may be older).
#define LB_HAS(type, size, field) (LB_SIZE_THROUGH(type, field) <= (size))

namespace lazybreaker::capi {

// Each struct's size in the version that introduced it; smaller is refused.
struct FirstVersion {
  static constexpr size_t kConfig = LB_SIZE_THROUGH(cb_config, half_open_timeout_ns);
  static constexpr size_t kOptions = LB_SIZE_THROUGH(cb_registry_options, path);
  static constexpr size_t kStats = LB_SIZE_THROUGH(cb_stats, consecutive_failures);
  static constexpr size_t kEvent = LB_SIZE_THROUGH(cb_event, name);
  // lazybreaker/fastpath.h's, since 1.3.
  static constexpr size_t kFastpath = 48;
  static constexpr size_t kFastpathCells = 24;
};

// Writes `value` to a caller's struct of `size` bytes: the bytes both know,
// then zeros for any this library does not.
template <typename T>
void copy_out(void *out, size_t size, const T &value) noexcept {
  const size_t known = size < sizeof value ? size : sizeof value;
  std::memcpy(out, &value, known);
  if (size > known) std::memset(static_cast<char *>(out) + known, 0, size - known);
}

}  // namespace lazybreaker::capi
