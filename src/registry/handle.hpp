// A handle packs the registry id, the slot's incarnation and the slot index:
// [registry:16 | incarnation:24 | index:24]. Registry id 0 is never used, so
// handle 0 is never valid.
#pragma once

#include <cstdint>

namespace lazybreaker::registry {

struct Handle {
  static constexpr unsigned kIndexBits = 24, kIncarnationBits = 24, kRegistryBits = 16;
  static constexpr uint64_t kIndexMask = (1ull << kIndexBits) - 1;
  static constexpr uint64_t kIncarnationMask = (1ull << kIncarnationBits) - 1;
  static constexpr uint32_t kMaxRegistries = (1u << kRegistryBits) - 1;

  static constexpr uint64_t make(uint32_t registry, uint32_t incarnation, uint32_t index) {
    return (uint64_t(registry) << (kIndexBits + kIncarnationBits)) |
           (uint64_t(incarnation & kIncarnationMask) << kIndexBits) | (index & kIndexMask);
  }
  static constexpr uint32_t registry(uint64_t h) {
    return uint32_t(h >> (kIndexBits + kIncarnationBits));
  }
  static constexpr uint32_t incarnation(uint64_t h) {
    return uint32_t((h >> kIndexBits) & kIncarnationMask);
  }
  static constexpr uint32_t index(uint64_t h) { return uint32_t(h & kIndexMask); }
};

}  // namespace lazybreaker::registry
