// A well-mixed 64-bit hash of a 64-bit value: splitmix64's finaliser. For
// the jitter factor of an OPEN period and the configuration table's hash.
#pragma once

#include <cstdint>

namespace lazybreaker::core {

constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace lazybreaker::core
