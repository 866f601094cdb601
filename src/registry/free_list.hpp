// The free slots of a registry: first the recycled slots, from a lock-free
// stack, last one freed first; then the never-used slots, handed out in
// order by a bump counter. So a registry touches the memory of no more
// slots than it has held at once (create/destroy churn keeps reusing the
// same few, however large the capacity), and every slot it has ever
// handed out is below high_water().
//
// The stack is Treiber's, index based so that it can live in a mapped file
// (Boost.Lockfree's fixed-size structures address at most 65,535 nodes, far
// below a registry's capacity), with a 32-bit tag in the head against ABA.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "registry/words.hpp"

namespace lazybreaker::registry {

class FreeList {
 public:
  // What the list changes, apart from its links: zero-filled is an empty
  // list, so that it can live in a registry's arena or file.
  struct State {
    std::atomic<uint32_t> grown{0};  // slots beyond the capacity handed out (grow)
    std::atomic<uint32_t> fresh{0};  // the bump counter
    std::atomic<uint64_t> head{0};   // FreeListHead (registry/words.hpp)
  };

  // `state` and `next` (room for `end` links) live as long as this list;
  // the first `capacity` slots are handed out, and those up to `end` stand
  // in for retired ones (grow).
  FreeList(State &state, std::atomic<uint32_t> *next, uint32_t capacity, uint32_t end)
      : next_(next),
        capacity_(capacity),
        end_(end),
        fresh_(state.fresh),
        head_(state.head),
        grown_(state.grown) {}

  std::optional<uint32_t> pop() {
    uint64_t head = head_.load(std::memory_order_acquire);
    // Beyond the links only in a damaged registry file: no recycled slot
    // then, only never-used ones.
    for (uint32_t top; (top = FreeListHead::top_plus_one(head)) != 0 && top <= end_;) {
      const uint64_t next =
          FreeListHead::next(head, next_[top - 1].load(std::memory_order_relaxed));
      if (head_.compare_exchange_weak(head, next, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
        return top - 1;
    }
    uint32_t fresh = fresh_.load(std::memory_order_relaxed);
    while (fresh < capacity_ + grown_.load(std::memory_order_relaxed)) {
      if (fresh_.compare_exchange_weak(fresh, fresh + 1, std::memory_order_relaxed)) return fresh;
    }
    return std::nullopt;
  }

  // One more never-used slot may be handed out, in place of one retired;
  // false when none is left.
  bool grow() {
    uint32_t grown = grown_.load(std::memory_order_relaxed);
    while (capacity_ + grown < end_)
      if (grown_.compare_exchange_weak(grown, grown + 1, std::memory_order_relaxed)) return true;
    return false;
  }

  // Whether the state and links are those of a list of `end` (a registry
  // file's, checked when it is opened).
  bool consistent() const {
    const uint64_t limit = uint64_t(capacity_) + grown_.load(std::memory_order_relaxed);
    if (limit > end_ || fresh_.load(std::memory_order_relaxed) > limit ||
        FreeListHead::top_plus_one(head_.load(std::memory_order_relaxed)) > end_)
      return false;
    for (uint32_t i = 0; i < end_; ++i)
      if (next_[i].load(std::memory_order_relaxed) > end_) return false;
    return true;
  }

  // Every slot ever handed out is below this.
  uint32_t high_water() const { return fresh_.load(std::memory_order_acquire); }

  void push(uint32_t index) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    for (;;) {
      next_[index].store(FreeListHead::top_plus_one(head), std::memory_order_relaxed);
      const uint64_t next = FreeListHead::next(head, index + 1);
      if (head_.compare_exchange_weak(head, next, std::memory_order_release,
                                      std::memory_order_relaxed))
        return;
    }
  }

 private:
  std::atomic<uint32_t> *next_;
  uint32_t capacity_, end_;
  std::atomic<uint32_t> &fresh_;
  std::atomic<uint64_t> &head_;
  std::atomic<uint32_t> &grown_;
};

}  // namespace lazybreaker::registry
