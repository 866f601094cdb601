// The window memory of a registry's breakers: only a breaker with a window
// (a window policy, or slow-call tracking) has a block, sized by its
// buckets: a 16-byte header, then one call word per bucket and, with
// slow-call tracking, one slow word per bucket (core::WindowCells). Blocks
// come in size classes, bucket rooms of 1, 2, 4, ... kMaxBuckets, each with
// or without slow words; a power-of-two room lets a bucket index be masked
// into its block, whatever a racing reader makes of it.
//
// Each class has its own region of `capacity` blocks (reserved, touched
// only as blocks are used) and its own free list (registry/free_list.hpp:
// freed blocks first, from a tagged lock-free stack whose links live
// outside the blocks, since a call racing a destroy may still write to a
// freed block; then never-used ones). So a registry of `capacity` never
// runs out of blocks below its capacity, whatever mix of windows it holds,
// and its blocks stay packed densely, as many touched as it has held at
// once. Index based: a slot names its block by a WindowRef
// (registry/words.hpp).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/window.hpp"
#include "registry/free_list.hpp"
#include "registry/words.hpp"

namespace lazybreaker::registry {

class WindowPool {
 public:
  static constexpr unsigned kRooms = std::bit_width(core::kMaxBuckets);  // 1, 2, ... 32
  static constexpr unsigned kClasses = 2 * kRooms;                       // without, with slow words
  static_assert(std::has_single_bit(core::kMaxBuckets) && kClasses < 16);

  static constexpr uint32_t room(unsigned cls) { return 1u << (cls % kRooms); }
  static constexpr bool slow(unsigned cls) { return cls >= kRooms; }
  static constexpr size_t block_words(unsigned cls) {
    return core::WindowCells::words(room(cls), slow(cls));
  }
  // The class of a window of `buckets` (1..kMaxBuckets), with or without slow words.
  static constexpr unsigned class_for(uint32_t buckets, bool slow) {
    return unsigned(std::bit_width(std::bit_ceil(buckets)) - 1) + (slow ? kRooms : 0);
  }
  // The class of the block that stands in for the window of a breaker
  // without one (only calls racing a destroy reach it): room kMaxBuckets,
  // slow words, one block.
  static constexpr unsigned kNone = kClasses;
  static constexpr size_t kScratchWords = core::WindowCells::words(core::kMaxBuckets, true);
  // The reference of a breaker without a window.
  static constexpr uint32_t kNoWindow = WindowRef::make(kNone, 0);

  // Class `cls` takes its blocks from `blocks` (capacity x block_words(cls)
  // zeroed words) with `links` (capacity) for its free list.
  // The free lists' states of every class (zero-filled: empty).
  using State = FreeList::State[kClasses];

  void place(State &state, unsigned cls, std::atomic<uint64_t> *blocks,
             std::atomic<uint32_t> *links, uint32_t capacity) {
    classes_[cls] = {blocks, block_words(cls), room(cls), slow(cls)};
    free_[cls].emplace(state[cls], links, capacity, capacity);
  }
  void place_scratch(std::atomic<uint64_t> *scratch) {
    classes_[kNone] = {scratch, kScratchWords, core::kMaxBuckets, true};
  }

  // A block for a window of `buckets`, as a WindowRef (the breaker's first
  // life empties it, core::Breaker::begin_life); nullopt if the class is out.
  std::optional<uint32_t> take(uint32_t buckets, bool slow) {
    const unsigned cls = class_for(buckets, slow);
    const std::optional<uint32_t> block = free_[cls]->pop();
    if (!block) return std::nullopt;
    return WindowRef::make(cls, *block);
  }
  // Whether `ref` is one take() could have given, or kNoWindow (of a
  // registry of `capacity`).
  static bool valid(uint32_t ref, uint32_t capacity) {
    return ref == kNoWindow ||
           (WindowRef::size_class(ref) < kClasses && WindowRef::block(ref) < capacity);
  }
  bool consistent() const {
    for (const std::optional<FreeList> &f : free_)
      if (f && !f->consistent()) return false;
    return true;
  }
  void give_back(uint32_t ref) {
    if (WindowRef::size_class(ref) != kNone)
      free_[WindowRef::size_class(ref)]->push(WindowRef::block(ref));
  }
  // The memory `ref` names (any reference take() or kNoWindow ever gave, or
  // 0): a few loads, no branch, as every call on a breaker asks for it.
  core::WindowCells cells(uint32_t ref) const {
    const Class &c = classes_[WindowRef::size_class(ref)];
    return core::WindowCells(
        reinterpret_cast<core::WindowHeader *>(c.blocks + size_t(WindowRef::block(ref)) * c.words),
        c.room, c.slow);
  }

 private:
  struct Class {
    std::atomic<uint64_t> *blocks = nullptr;
    size_t words = 0;  // a block's
    uint32_t room = 1;
    bool slow = false;
  };
  Class classes_[kClasses + 1];
  std::optional<FreeList> free_[kClasses];
};

}  // namespace lazybreaker::registry
