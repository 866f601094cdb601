// Each thread that calls the library owns one counter stripe for as long as
// it lives, so it bumps its own counter cells with plain stores (no locked
// instruction, no cache line shared with another writer). Threads beyond
// kExclusiveStripes share one stripe that is bumped atomically.
#pragma once

#include <cstdint>

namespace lazybreaker::registry {

inline constexpr uint32_t kExclusiveStripes = 64;
inline constexpr uint32_t kSharedStripe = kExclusiveStripes;

namespace detail {
uint32_t claim_stripe();
extern thread_local constinit uint32_t t_stripe_plus_one __attribute__((tls_model("initial-exec")));
}  // namespace detail

// The calling thread's stripe: < kExclusiveStripes if it owns one, else
// kSharedStripe. The first call on a thread claims one.
inline uint32_t thread_stripe() {
  const uint32_t s = detail::t_stripe_plus_one;
  return __builtin_expect(s != 0, 1) ? s - 1 : detail::claim_stripe();
}

}  // namespace lazybreaker::registry
