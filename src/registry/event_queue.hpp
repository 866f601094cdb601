// A registry's bounded, lock-free queue of breaker events.
//
// A bounded ring of cells with per-cell sequence numbers (Vyukov's bounded
// MPMC queue), index based so that it can live in a mapped file. Two things
// Boost.Lockfree's queue does not do are why it is our own: a producer
// reserves its place *before* the transition it reports is published, so the
// queue holds one breaker's transitions in the order they happened (a
// transition that then loses its race leaves a void, which readers skip); and
// a full queue drops its oldest event, counting it, instead of refusing the
// newest. No producer ever waits: if the oldest cell is still being written,
// the producer drops its own event instead (and counts that).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lazybreaker::registry {

struct Event {
  uint64_t sequence;  // position in the queue: gaps are drops
  uint64_t handle;
  uint64_t at_ns;
  uint32_t from, to, reason, epoch;
  bool is_void;  // a reservation whose transition lost its race
  char name[256];
};

class EventQueue {
 public:
  struct Cell {
    std::atomic<uint64_t> turn;
    Event event;
  };

  // `cells` has room for `capacity` cells (a power of two), zero-filled,
  // and outlives this. Nothing is written to them until an event is: a
  // registry that reports few events touches few of its pages.
  EventQueue(Cell *cells, uint32_t capacity);

  // A place for an event, or 0 when none could be had (the event is dropped).
  uint64_t reserve() noexcept;
  // Fills a reserved place (token from reserve()); token 0 only counts a drop.
  void publish(uint64_t token, const Event &e) noexcept;
  void cancel(uint64_t token) noexcept;
  // Takes the oldest event into `out`; false when there is none ready.
  bool pop(Event *out) noexcept;
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  bool pop_any(Event *out) noexcept;
  Cell &cell(uint64_t pos) const { return cells_[pos & mask_]; }
  uint64_t turn(uint64_t pos) const {
    return cell(pos).turn.load(std::memory_order_acquire) + (pos & mask_);
  }
  void set_turn(uint64_t pos, uint64_t turn) {
    cell(pos).turn.store(turn - (pos & mask_), std::memory_order_release);
  }

  Cell *cells_;
  uint64_t mask_;
  std::atomic<uint64_t> write_{0};
  std::atomic<uint64_t> read_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace lazybreaker::registry
