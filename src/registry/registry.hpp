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
#include "registry/event_queue.hpp"
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

enum EventMask : uint32_t { kTransitionEvents = 1, kRejectionEvents = 2 };

class Registry {
 public:
  static constexpr uint32_t kDefaultCapacity = 65536;
  static constexpr uint32_t kDefaultEventCapacity = 1024;

  // `event_capacity` is rounded up to a power of two.
  static Status open(uint32_t capacity, core::ClockKind clock, uint32_t event_capacity,
                     Registry **out);
  // Makes every handle into `reg` stale and frees it.
  static void close(Registry *reg);
  // The open registry with this id, or nullptr.
  static Registry *by_id(uint32_t id) {
    Registry *r =
        id <= Handle::kMaxRegistries ? table_[id].load(std::memory_order_acquire) : nullptr;
    return r == &none_ ? nullptr : r;
  }
  // For the fast paths: the registry with this 16-bit id, or an empty one
  // that holds no index, so no null test is needed.
  static Registry &at_id(uint32_t id16) {
    return *table_[id16 & Handle::kMaxRegistries].load(std::memory_order_acquire);
  }

  // Run once, when the library loads: every id names the empty registry.
  static void point_ids_at_none();

  uint32_t id() const { return id_; }
  core::Clock &clock() { return clock_; }
  bool holds(uint32_t index) const { return index < capacity_; }

  // `events` receives its transitions (nullptr: none are reported).
  core::Breaker breaker(uint32_t index, core::EventSink *events = nullptr) {
    return core::Breaker(hot_[index], configs_[index], windows_[index], clock_, events);
  }
  std::atomic<uint64_t> &state_word(uint32_t index) { return hot_[index].word; }
  // The calling thread's own counter cells in this registry, as an address,
  // or an odd number when it has none yet or counts in the shared stripe
  // (then use tally()).
  uintptr_t own_cells() const { return own_cells_[detail::t_stripe_plus_one]; }
  // A counter in cells only this thread writes: one unlocked add. Readers
  // load it atomically, and an aligned 8-byte store is atomic on x86-64.
  static void bump_own(uintptr_t cells, uint32_t index, core::Counter c) {
    std::atomic<uint64_t> &n = reinterpret_cast<core::Cell *>(cells)[index].n[unsigned(c)];
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
    asm("addq $1, %0" : "+m"(n));
#else
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#endif
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
  // The name of slot `index` as it stands (for events and metrics, where a
  // racing destroy may leave it a moment behind).
  size_t name(uint32_t index, char *buf) const { return names_.read(index, buf); }
  // The name of the breaker in its `incarnation`-th life; false if that
  // life is over (or ended while the name was read).
  bool name(uint32_t index, uint32_t incarnation, char *buf, size_t *len) const;
  // Handles of the live breakers, up to `max`; returns how many there are.
  size_t list(uint64_t *out, size_t max) const;

  EventQueue &events() { return *events_; }
  uint32_t event_mask() const { return event_mask_.load(std::memory_order_relaxed); }
  void set_event_mask(uint32_t mask) { event_mask_.store(mask, std::memory_order_relaxed); }

 private:
  Registry() = default;
  Counts raw_counts(uint32_t index) const;
  // Whether slot `index` still holds the life whose state word was `w`
  // (after name reads, whose acquire loads keep this load after them).
  bool same_life(uint32_t index, uint64_t w) const;

  static Registry none_;
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
  core::WindowCells *windows_ = nullptr;
  std::optional<EventQueue> events_;
  std::atomic<uint32_t> event_mask_{kTransitionEvents};
  // By thread stripe + 1: [0] no stripe yet, [s + 1] stripe s's cells if this
  // registry gives it cells of its own; else 1.
  uintptr_t own_cells_[kExclusiveStripes + 2] = {};
  NameStore names_{nullptr};
  std::optional<FreeList> free_;
  std::optional<NameIndex> index_;
};

}  // namespace lazybreaker::registry
