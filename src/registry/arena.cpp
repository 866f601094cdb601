#include "registry/arena.hpp"

#include "platform/platform.hpp"

namespace lazybreaker::registry {

namespace {

// The name index is read at random, one bucket per create, lookup and
// destroy: on 4 KB pages nearly each of those missed the TLB, a page walk
// of a few hundred ns in a virtual machine, the largest part of creating a
// breaker in a large registry. Huge pages make that walk rare. Random
// hashing touches every 4 KB page of a table after a few thousand names
// anyway, so a table of several huge pages costs no more memory on them;
// smaller tables are left alone. Best effort: without transparent huge
// pages nothing changes.
void prefer_huge_pages(void *begin, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (bytes < 2 * kHuge) return;
  const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(kHuge - 1);
  if (from < to) platform::advise_huge_pages(reinterpret_cast<void *>(from), to - from);
}

}  // namespace

Registry::ArenaLayout Registry::arena_layout(uint32_t capacity, uint32_t slots) {
  ArenaLayout a{};
  a.log2_buckets = unsigned(std::bit_width(std::bit_ceil(uint64_t(capacity) * 2) - 1));
  Layout &layout = a.layout;
  a.state_at = layout.add<RegistryState>(1);
  a.refs_at = layout.add<std::atomic<uint64_t>>(slots);
  a.base_at = layout.add<std::atomic<uint64_t>[unsigned(core::Counter::Count)]>(slots);
  a.name_refs_at = layout.add<std::atomic<uint64_t>>(slots);
  a.name_words_at = layout.add<std::atomic<uint64_t>>(NameStore::words_needed(capacity, slots));
  // Every breaker alive at once could have a configuration of its own, and
  // a window of any class.
  a.entries_at = layout.add<core::ConfigCell>(capacity);
  a.entry_refs_at = layout.add<std::atomic<uint64_t>>(capacity);
  a.entry_links_at = layout.add<std::atomic<uint32_t>>(capacity);
  a.config_buckets_at = layout.add<std::atomic<uint64_t>>(size_t(1) << a.log2_buckets);
  for (unsigned k = 0; k < WindowPool::kClasses; ++k) {
    a.blocks_at[k] =
        layout.add<std::atomic<uint64_t>>(size_t(capacity) * WindowPool::block_words(k));
    a.block_links_at[k] = layout.add<std::atomic<uint32_t>>(capacity);
  }
  a.scratch_at = layout.add<std::atomic<uint64_t>>(WindowPool::kScratchWords);
  a.links_at = layout.add<std::atomic<uint32_t>>(slots);
  a.buckets_at = layout.add<std::atomic<uint64_t>>(size_t(1) << a.log2_buckets);
  a.pending_at = layout.add<std::atomic<uint64_t>>(slots);
  return a;
}

size_t Registry::arena_bytes(uint32_t capacity, uint32_t slots) {
  return arena_layout(capacity, slots).layout.size();
}

void Registry::place(void *arena, const ArenaLayout &a, unsigned log2_buckets) {
  auto &state = *at<RegistryState>(arena, a.state_at);
  slot_refs_ = at<std::atomic<uint64_t>>(arena, a.refs_at);
  configs_.emplace(state.configs, at<core::ConfigCell>(arena, a.entries_at),
                   at<std::atomic<uint64_t>>(arena, a.entry_refs_at),
                   at<std::atomic<uint32_t>>(arena, a.entry_links_at),
                   at<std::atomic<uint64_t>>(arena, a.config_buckets_at), log2_buckets, capacity_);
  counts_base_ = at<std::atomic<uint64_t>[unsigned(core::Counter::Count)]>(arena, a.base_at);
  names_.emplace(state.names, at<std::atomic<uint64_t>>(arena, a.name_refs_at),
                 at<std::atomic<uint64_t>>(arena, a.name_words_at), capacity_, slots_);
  for (unsigned k = 0; k < WindowPool::kClasses; ++k)
    windows_.place(state.windows, k, at<std::atomic<uint64_t>>(arena, a.blocks_at[k]),
                   at<std::atomic<uint32_t>>(arena, a.block_links_at[k]), capacity_);
  windows_.place_scratch(at<std::atomic<uint64_t>>(arena, a.scratch_at));
  free_.emplace(state.free_slots, at<std::atomic<uint32_t>>(arena, a.links_at), capacity_, slots_);
  if (shared()) pending_.emplace(at<std::atomic<uint64_t>>(arena, a.pending_at), hot_);
  index_.emplace(state.longest_name_probe, at<std::atomic<uint64_t>>(arena, a.buckets_at),
                 log2_buckets, *names_, pending_ ? &*pending_ : nullptr);
  prefer_huge_pages(at<char>(arena, a.buckets_at), sizeof(uint64_t) << log2_buckets);
}

bool Registry::reserve_private(size_t bytes) {
  // Zero-filled memory is a valid empty state for every array; on Linux
  // pages get memory only as slots are used.
  private_ = platform::allocate(bytes);
  private_size_ = private_ != nullptr ? bytes : 0;
  return private_ != nullptr;
}

}  // namespace lazybreaker::registry
