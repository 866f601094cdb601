// A breaker's counters: per thread stripe, a cell of small fields that only
// the stripe's owner thread writes, and per breaker, 64-bit totals that
// every other count goes to with fetch_add. A field that fills folds into
// the totals under its stripe's sequence word, so that a reader summing
// totals and cells (registry::Registry::raw_counts) sees every count
// exactly once, whichever thread made it.
#pragma once

#include <atomic>
#include <cstdint>

namespace lazybreaker::core {

enum class Counter : unsigned { Admitted, Rejected, Successes, Failures, Ignored, Slow, Count };

// The counters a stripe's cell holds: those its owner bumps on the fast
// paths (admitting, rejecting, a success) and a failure. Ignored and slow
// calls, rare, go straight to the totals.
inline constexpr unsigned kCellFields = 4;
constexpr bool in_cell(Counter c) { return unsigned(c) < kCellFields; }

// When a field reaches this it folds: the top bit, so that on x86-64 the
// bump that reaches it sets the sign flag (`addw $1` then `js`).
inline constexpr uint16_t kFoldAt = 0x8000;

// One stripe's counts for one breaker: 8 bytes, so that 16 threads that
// each called a breaker once cost 128 bytes, not 16 cache lines. Only the
// owner writes them (bump_exclusive), so no locked instruction; a field
// never holds more than kFoldAt.
struct alignas(8) Cell {
  std::atomic<uint16_t> n[kCellFields];
};
static_assert(sizeof(Cell) == 8);

// One breaker's counts that live in no stripe: the shared stripe's (threads
// beyond the exclusive stripes), the rare counters, and every field's
// folds. A cache line, as these are the words many threads write.
struct alignas(64) Totals {
  std::atomic<uint64_t> n[unsigned(Counter::Count)];
};
static_assert(sizeof(Totals) == 64);

// One word per stripe (not per breaker): odd while its owner folds a field
// of any breaker. On a line of its own, as readers poll it.
struct alignas(64) StripeSequence {
  std::atomic<uint64_t> n{0};
};

// Bumps a field only the calling thread writes; true when the field has
// reached kFoldAt and must be folded (fold()) before the thread counts in it
// again. Written out for x86-64 (one `addw` to memory and one branch on its
// sign; an aligned 2-byte add is seen whole by a reader); TSan is shown the
// portable form, which it can see. The portable store is a release, so that
// a reader that sees a count made after a fold also sees the fold's
// sequence change (raw_counts); on x86-64 every store is one.
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && (defined(__clang__) || __GNUC__ >= 11)
[[gnu::always_inline]] inline bool bump_exclusive(std::atomic<uint16_t> &field) {
  asm goto("addw $1, %0\n\tjs %l[full]" : "+m"(field) : : "cc" : full);
  return false;
full:
  return true;
}
#else
[[gnu::always_inline]] inline bool bump_exclusive(std::atomic<uint16_t> &field) {
  const auto v = uint16_t(field.load(std::memory_order_relaxed) + 1);
  field.store(v, std::memory_order_release);
  return (v & kFoldAt) != 0;
}
#endif

// Moves kFoldAt counts of `c` from the owner's full `cell` into `totals`,
// with its stripe's `sequence` odd meanwhile. Only the owner calls it.
[[gnu::cold]] void fold(Cell &cell, StripeSequence &sequence, Totals &totals, Counter c);

// Where the calling thread's counts for one breaker go.
struct Tally {
  Cell *cell;                // the thread's own, or nullptr in the shared stripe
  StripeSequence *sequence;  // the own stripe's (with `cell`)
  Totals *totals;

  void add(Counter c) const {
    if (cell != nullptr && in_cell(c)) {
      if (bump_exclusive(cell->n[unsigned(c)])) fold(*cell, *sequence, *totals, c);
    } else {
      totals->n[unsigned(c)].fetch_add(1, std::memory_order_relaxed);
    }
  }
};

}  // namespace lazybreaker::core
