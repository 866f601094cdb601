// A registry: a fixed-capacity arena of breaker slots, their names, their
// counters, a free list and a name index, all addressed by index so that the
// same layout can later live in a mapped file. Knows nothing of policies
// beyond storing each breaker's configuration.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/breaker.hpp"
#include "registry/free_list.hpp"
#include "registry/handle.hpp"
#include "registry/name_index.hpp"
#include "registry/thread_stripe.hpp"

namespace lazybreaker::registry {

enum class Status { Ok, Full, NoMemory, Exists, NotFound, BadHandle, TooManyRegistries };

struct Counts {
  uint64_t n[unsigned(core::Counter::Count)];
  uint64_t trips;
};

class Registry {
 public:
  static constexpr uint32_t kDefaultCapacity = 65536;

  static Status open(uint32_t capacity, core::ClockKind clock, Registry **out);
  // Makes every handle into `reg` stale and frees it.
  static void close(Registry *reg);
  // The open registry with this id, or nullptr.
  static Registry *by_id(uint32_t id) {
    return id <= Handle::kMaxRegistries ? table_[id].load(std::memory_order_acquire) : nullptr;
  }

  uint32_t id() const { return id_; }
  core::Clock &clock() { return clock_; }
  bool holds(uint32_t index) const { return index < capacity_; }

  core::Breaker breaker(uint32_t index) {
    return core::Breaker(hot_[index], configs_[index], clock_);
  }
  core::Tally tally(uint32_t index) {
    const uint32_t s = thread_stripe();
    return s < exclusive_stripes_
               ? core::Tally{&cells_[size_t(s) * capacity_ + index], true}
               : core::Tally{&cells_[size_t(exclusive_stripes_) * capacity_ + index], false};
  }

  // `name` empty = anonymous.
  Status create(std::string_view name, const core::Config &cfg, uint64_t *handle);
  Status lookup(std::string_view name, uint64_t *handle) const;
  Status destroy(uint64_t handle);
  // Counters since the breaker was created; the caller validates the handle.
  Counts counts(uint32_t index) const;
  size_t name(uint32_t index, char *buf) const { return names_.read(index, buf); }

 private:
  Registry() = default;
  Counts raw_counts(uint32_t index) const;

  static std::atomic<Registry *> table_[Handle::kMaxRegistries + 1];
  static std::atomic<uint32_t> next_id_;

  uint32_t id_ = 0;
  uint32_t capacity_ = 0;
  uint32_t exclusive_stripes_ = 0;
  core::Clock clock_;
  void *arena_ = nullptr;
  size_t arena_size_ = 0;
  core::Hot *hot_ = nullptr;
  core::ConfigCell *configs_ = nullptr;
  std::atomic<uint64_t> (*counts_base_)[unsigned(core::Counter::Count)] = nullptr;
  core::Cell *cells_ = nullptr;  // [exclusive stripes + 1 shared][capacity]
  NameStore names_{nullptr};
  std::optional<FreeList> free_;
  std::optional<NameIndex> index_;
};

}  // namespace lazybreaker::registry
