#include "capi/resolve.hpp"

#include <atomic>

#include "capi/errors.hpp"
#include "registry/setup_lock.hpp"

namespace lazybreaker::capi {

using registry::Registry;
using registry::Status;

namespace {
// A cb_registry* is a tagged registry id and generation, not an address: a
// closed or garbage registry pointer is recognised and refused, never
// dereferenced, even once another registry has the id.
// [generation:32 | id:16 | tag:12]
constexpr uintptr_t kRegistryTag = 0xcb0, kRegistryTagBits = 12, kIdBits = 16;
static_assert(sizeof(uintptr_t) == 8 && (1u << kIdBits) == Registry::kMaxRegistryIds);

}  // namespace

cb_registry *to_public(const Registry *r) {
  const uintptr_t generation = Registry::generation(r->id());
  return reinterpret_cast<cb_registry *>((generation << (kIdBits + kRegistryTagBits)) |
                                         (uintptr_t(r->id()) << kRegistryTagBits) | kRegistryTag);
}

Registry *from_public(const cb_registry *p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  if ((v & ((uintptr_t(1) << kRegistryTagBits) - 1)) != kRegistryTag) return nullptr;
  const auto id = uint32_t((v >> kRegistryTagBits) & (Registry::kMaxRegistryIds - 1));
  const uintptr_t generation = v >> (kIdBits + kRegistryTagBits);
  Registry *r = Registry::by_id(id);
  return r != nullptr && Registry::generation(id) == generation ? r : nullptr;
}

namespace {
std::atomic<Registry *> g_default{nullptr};
registry::SetupLock g_default_creation;
}  // namespace

Registry *default_registry() noexcept {
  if (Registry *r = g_default.load(std::memory_order_acquire)) return r;
  // Creation maps memory and may fail (an address-space limit); a later
  // call tries again rather than inherit the failure.
  registry::SetupLock::Held lock(g_default_creation);
  Registry *r = g_default.load(std::memory_order_acquire);
  if (r == nullptr &&
      Registry::open(CB_DEFAULT_REGISTRY_CAPACITY, lazybreaker::core::ClockKind::Monotonic,
                     Registry::kDefaultEventCapacity, &r) == Status::Ok)
    g_default.store(r, std::memory_order_release);
  return r;
}

bool is_default_registry(const Registry *r) noexcept {
  return r == g_default.load(std::memory_order_acquire);
}

// NULL = the default registry.
int resolve_registry(cb_registry *p, Registry **out) {
  Registry *r = p == nullptr ? default_registry() : from_public(p);
  if (r == nullptr)
    return p == nullptr ? fail(CB_ENOMEM, "the default registry could not be reserved")
                        : fail(CB_EINVAL, "registry %p is not an open registry", (void *)p);
  *out = r;
  return CB_OK;
}

}  // namespace lazybreaker::capi
