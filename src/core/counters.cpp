#include "core/counters.hpp"

namespace lazybreaker::core {

void fold(Cell &cell, StripeSequence &sequence, Totals &totals, Counter c) {
  // A seqlock's writer, without fences (TSan does not model them): both
  // moves are releases, so a reader that sees either, or a count made after
  // them (bump_exclusive's store is a release too), with an acquire load
  // also sees the odd value, and reads again.
  const uint64_t s = sequence.n.load(std::memory_order_relaxed);
  sequence.n.store(s + 1, std::memory_order_relaxed);
  std::atomic<uint16_t> &field = cell.n[unsigned(c)];
  totals.n[unsigned(c)].fetch_add(kFoldAt, std::memory_order_release);
  field.store(uint16_t(field.load(std::memory_order_relaxed) - kFoldAt), std::memory_order_release);
  sequence.n.store(s + 2, std::memory_order_release);
}

}  // namespace lazybreaker::core
