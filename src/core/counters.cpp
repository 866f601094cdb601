#include "core/counters.hpp"

namespace lazybreaker::core {

void fold(Cell &cell, StripeSequence &sequence, Totals &totals, Counter c) {
  // A seqlock's writer: the odd value is ordered before the moves (the
  // fence), the moves before the even value (the release), so a reader
  // that sees either move, or a count made after them, sees the sequence
  // change and reads again.
  const uint64_t s = sequence.n.load(std::memory_order_relaxed);
  sequence.n.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::atomic<uint16_t> &field = cell.n[unsigned(c)];
  totals.n[unsigned(c)].fetch_add(kFoldAt, std::memory_order_relaxed);
  field.store(uint16_t(field.load(std::memory_order_relaxed) - kFoldAt), std::memory_order_relaxed);
  sequence.n.store(s + 2, std::memory_order_release);
}

}  // namespace lazybreaker::core
