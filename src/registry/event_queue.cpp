#include "registry/event_queue.hpp"

namespace lazybreaker::registry {
namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

EventQueue::EventQueue(Cell *cells, uint32_t capacity) : cells_(cells), mask_(capacity - 1) {}

// A cell's turn is its position while free to write, position + 1 once
// written (ready to read), and position + capacity once read (free for the
// next lap). Each cell stores its turn less its own index (turn(),
// set_turn()), so zero-filled cells are a fresh queue's.
uint64_t EventQueue::reserve() noexcept {
  uint64_t pos = write_.load(kRelaxed);
  for (;;) {
    const auto diff = int64_t(turn(pos) - pos);
    if (diff == 0) {
      if (write_.compare_exchange_weak(pos, pos + 1, kRelaxed)) return pos + 1;
    } else if (diff < 0) {
      // Full: drop the oldest event to make room, unless it is still being
      // written, in which case this event is the one dropped.
      Event discard;
      if (!pop_any(&discard)) {
        dropped_.fetch_add(1, kRelaxed);
        return 0;
      }
      if (!discard.is_void) dropped_.fetch_add(1, kRelaxed);
      pos = write_.load(kRelaxed);
    } else {
      pos = write_.load(kRelaxed);
    }
  }
}

void EventQueue::publish(uint64_t token, const Event &e) noexcept {
  if (token == 0) {
    dropped_.fetch_add(1, kRelaxed);
    return;
  }
  const uint64_t pos = token - 1;
  Cell &c = cell(pos);
  c.event = e;
  c.event.sequence = pos;
  set_turn(pos, pos + 1);
}

void EventQueue::cancel(uint64_t token) noexcept {
  if (token == 0) return;
  const uint64_t pos = token - 1;
  Cell &c = cell(pos);
  c.event.sequence = pos;
  c.event.is_void = true;
  set_turn(pos, pos + 1);
}

bool EventQueue::pop_any(Event *out) noexcept {
  uint64_t pos = read_.load(kRelaxed);
  for (;;) {
    const auto diff = int64_t(turn(pos) - (pos + 1));
    if (diff == 0) {
      if (read_.compare_exchange_weak(pos, pos + 1, kRelaxed)) {
        *out = cell(pos).event;
        set_turn(pos, pos + mask_ + 1);
        return true;
      }
    } else if (diff < 0) {
      return false;  // empty, or the oldest is still being written
    } else {
      pos = read_.load(kRelaxed);
    }
  }
}

bool EventQueue::pop(Event *out) noexcept {
  while (pop_any(out))
    if (!out->is_void) return true;
  return false;
}

}  // namespace lazybreaker::registry
