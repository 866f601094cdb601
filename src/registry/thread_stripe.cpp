#include "registry/thread_stripe.hpp"

#include <atomic>

#include "platform/platform.hpp"

namespace lazybreaker::registry {
namespace detail {

constinit thread_local uint32_t t_stripe_plus_one __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local uintptr_t t_own_cells __attribute__((tls_model("initial-exec"))) = 0;

namespace {

std::atomic<uint64_t> g_owned{0};     // bit i: stripe i has a living owner
std::atomic<uint32_t> g_used{0};      // stripes ever owned: the highest + 1
std::atomic<uint64_t> g_detached{0};  // bit i: stripe i is owned by no thread
platform::ThreadExitKey g_release_key;
std::atomic<StripeClaimHook> g_claim_hook{nullptr};

// The key is made when the library loads, so a thread's first call only
// sets a value for it, which for the first keys of a process allocates
// nothing.
__attribute__((constructor)) void make_release_key() {
  platform::make_thread_exit_key(&g_release_key, [](void *stripe_plus_one) {
    const uint32_t s = uint32_t(reinterpret_cast<uintptr_t>(stripe_plus_one)) - 1;
    // Anything this thread still counts from later destructors
    // goes to the shared stripe.
    t_own_cells = 0;
    t_stripe_plus_one = kMaxExclusiveStripes + 1;
    g_owned.fetch_and(~(1ull << s), std::memory_order_release);
  });
}

}  // namespace

namespace {

// Takes the lowest free stripe of the first `exclusive` for an owner that
// `bind` records (false: it could not, and the stripe is free again).
template <class Bind>
uint32_t take_stripe(uint32_t exclusive, Bind bind) {
  const uint64_t usable = exclusive >= 64 ? ~0ull : (1ull << exclusive) - 1;
  uint64_t owned = g_owned.load(std::memory_order_relaxed);
  while (g_release_key.made && (~owned & usable) != 0) {
    const uint32_t s = uint32_t(__builtin_ctzll(~owned & usable));
    // Sequentially consistent, as the hook's load after it and a joining
    // registry's store of the hook before it reads the owners
    // (FileAttachment::join): one of the two sees the other.
    if (!g_owned.compare_exchange_weak(owned, owned | (1ull << s), std::memory_order_seq_cst,
                                       std::memory_order_relaxed))
      continue;
    const StripeClaimHook hook = g_claim_hook.load(std::memory_order_seq_cst);
    if ((hook != nullptr && !hook(s)) || !bind(s)) {
      g_owned.fetch_and(~(1ull << s), std::memory_order_release);
      return UINT32_MAX;
    }
    // Published before anything is counted in the stripe, so a reader that
    // sees a count there also sums the stripe.
    uint32_t used = g_used.load(std::memory_order_relaxed);
    while (used < s + 1 && !g_used.compare_exchange_weak(used, s + 1, std::memory_order_release,
                                                         std::memory_order_relaxed)) {
    }
    return s;
  }
  return UINT32_MAX;
}

}  // namespace

uint32_t claim_stripe(uint32_t exclusive, uintptr_t own_cells, uintptr_t stripe_stride) {
  const uint32_t s = take_stripe(exclusive, [](uint32_t taken) {
    return platform::set_thread_exit_value(g_release_key,
                                           reinterpret_cast<void *>(uintptr_t(taken) + 1));
  });
  if (s == UINT32_MAX) {
    t_stripe_plus_one = kMaxExclusiveStripes + 1;
    return exclusive;
  }
  t_stripe_plus_one = s + 1;
  t_own_cells = own_cells + s * stripe_stride;
  return s;
}

}  // namespace detail

uint32_t claim_detached_stripe(uint32_t exclusive) {
  return detail::take_stripe(exclusive, [](uint32_t s) {
    detail::g_detached.fetch_or(1ull << s, std::memory_order_relaxed);
    return true;
  });
}

bool release_detached_stripe(uint32_t s) {
  if (s >= kMaxExclusiveStripes) return false;
  const uint64_t bit = 1ull << s;
  if ((detail::g_detached.fetch_and(~bit, std::memory_order_acq_rel) & bit) == 0) return false;
  detail::g_owned.fetch_and(~bit, std::memory_order_release);
  return true;
}

bool detached_stripe(uint32_t s) {
  return s < kMaxExclusiveStripes &&
         (detail::g_detached.load(std::memory_order_acquire) >> s & 1) != 0;
}

uint32_t stripes_used() { return detail::g_used.load(std::memory_order_acquire); }

uint64_t stripes_owned() { return detail::g_owned.load(std::memory_order_seq_cst); }

void set_stripe_claim_hook(StripeClaimHook hook) {
  detail::g_claim_hook.store(hook, std::memory_order_seq_cst);
}

void forget_stripe_owners() {
  // The thread's release at exit would otherwise free a stripe that another
  // thread of the child may own by then.
  platform::set_thread_exit_value(detail::g_release_key, nullptr);
  detail::g_owned.store(0, std::memory_order_relaxed);
  detail::g_detached.store(0, std::memory_order_relaxed);
  detail::t_stripe_plus_one = 0;
  detail::t_own_cells = 0;
}

}  // namespace lazybreaker::registry
