// How a registry's memory is laid out: its arena (the same for a private
// registry and in a shared one's file) and its private part, carved as
// consecutive arrays out of one reservation (registry.cpp, arena.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "registry/registry.hpp"

namespace lazybreaker::registry {

inline size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Carves consecutive, cache-line aligned arrays out of one reservation.
class Layout {
 public:
  template <typename T>
  size_t add(size_t count) {
    const size_t at = align_up(size_, 64);
    size_ = at + count * sizeof(T);
    return at;
  }
  size_t size() const { return align_up(size_, 4096); }

 private:
  size_t size_ = 0;
};

template <typename T>
T *at(void *base, size_t offset) {
  return reinterpret_cast<T *>(static_cast<char *>(base) + offset);
}

// Where each array of a registry's arena begins: the same for a private
// registry and a shared one's file (for which the held words and the event
// queue are private, and come after it).
struct Registry::ArenaLayout {
  size_t state_at, refs_at, base_at, name_refs_at, name_words_at, entries_at, entry_refs_at,
      entry_links_at, config_buckets_at, blocks_at[WindowPool::kClasses],
      block_links_at[WindowPool::kClasses], scratch_at, links_at, buckets_at, pending_at;
  unsigned log2_buckets;
  Layout layout;
};

// The private part: held words [kMaxExclusiveStripes][slots], then the
// event queue.
struct PrivateLayout {
  size_t held_at, events_at;
  uint32_t event_cells;
  Layout layout;
  PrivateLayout(Layout base, uint32_t slots, uint32_t event_capacity) : layout(base) {
    event_cells = std::bit_ceil(std::max<uint32_t>(event_capacity, 2));
    held_at = layout.add<std::atomic<uint64_t>>(size_t(kMaxExclusiveStripes) * slots);
    events_at = layout.add<EventQueue::Cell>(event_cells);
  }
};

}  // namespace lazybreaker::registry
