// The process-wide space every private registry's breakers live in: one hot
// line per slot index, one line of counter totals per slot index, and for
// each exclusive thread stripe one 8-byte counter cell per slot index
// (core/counters.hpp). A registry owns a run of consecutive indexes, and a
// handle carries its slot's index in this space, so the fast paths find both
// the breaker and the calling thread's counters from the handle alone: no
// registry lookup, no bounds check (every index below 2^24 is readable once
// the space exists).
//
// The space is reserved whole when the first registry opens, without access;
// the hot lines are then readable everywhere, and a registry's runs are made
// writable when it opens. When it closes its counters are given back, while
// its hot lines keep their incarnations, so its handles stay stale whichever
// registry takes the indexes next.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/breaker.hpp"
#include "platform/platform.hpp"
#include "registry/handle.hpp"
#include "registry/thread_stripe.hpp"

namespace lazybreaker::registry {

// Hidden, so the library addresses its statics directly rather than
// through the global offset table: an instruction saved on every call.
// What a shared registry does in place of a counter fold of its own
// (Space::fold_own): its stripes' sequence words and fold logs are in its
// file.
class SharedCounters {
 public:
  virtual void fold(uint32_t stripe, core::Cell &cell, core::Totals &totals, uint32_t index,
                    core::Counter c) = 0;

 protected:
  ~SharedCounters() = default;
};

class LB_HIDDEN Space {
 public:
  static constexpr uint32_t kSlots = 1u << Handle::kIndexBits;
  static constexpr uint32_t kChunkSlots = 1024;  // a registry's run is whole chunks
  static constexpr uint32_t kChunks = kSlots / kChunkSlots;

  // The hot line of the slot a handle names, and where its counter cell is.
  // Before the space exists every handle names one empty line. Two words, so
  // that a Slot passed on goes in registers.
  struct Slot {
    uint64_t cell_offset;  // index * sizeof(core::Cell): where its cell is in a stripe
    core::Hot *hot;
    uint64_t index() const { return cell_offset / sizeof(core::Cell); }
  };
  static Slot slot(uint64_t handle) {
    const uint64_t i = handle & index_mask_.load(std::memory_order_acquire);
    // One shift for both arrays: the hot line is at 8 x the cell offset,
    // which the load's addressing scales for free. Opaque, or the compiler
    // shifts twice.
    uint64_t cell_offset = i * sizeof(core::Cell);
    asm("" : "+r"(cell_offset));
    static_assert(sizeof(core::Hot) == 8 * sizeof(core::Cell));
    return {cell_offset, reinterpret_cast<core::Hot *>(
                             reinterpret_cast<uintptr_t>(hot_.load(std::memory_order_relaxed)) +
                             cell_offset * 8)};
  }
  // The calling thread's own counter cells, as an address (a cell is at
  // its slot's Slot::cell_offset); 0 while it has none (before its first
  // counted call, or in the shared stripe).
  static uintptr_t own_cells() { return detail::t_own_cells; }
  // A counter of the slot at `cell_offset` in cells only this thread writes
  // (core::bump_exclusive), folding the field when it fills.
  static void bump_own(uintptr_t cells, uint64_t cell_offset, core::Counter c) {
    auto *cell = reinterpret_cast<core::Cell *>(cells + cell_offset);
    if (__builtin_expect(core::bump_exclusive(cell->n[unsigned(c)]), 0))
      fold_own(c, cells, cell_offset);
  }
  // bump_own() as the last step of a call that returns `status`: the fold
  // is then a tail call, so the caller needs no stack frame for it.
  [[gnu::always_inline]] static int bump_own_last(uintptr_t cells, uint64_t cell_offset,
                                                  core::Counter c, int status) {
    auto *cell = reinterpret_cast<core::Cell *>(cells + cell_offset);
    if (__builtin_expect(core::bump_exclusive(cell->n[unsigned(c)]), 0))
      return fold_own_last(c, cells, cell_offset, status);
    return status;
  }

  // The published quiet path (capi/fastpath.cpp, lazybreaker/fastpath.h):
  // the space reserved, so that its addresses are final; false if it cannot be.
  static bool ensure();
  static const core::Hot *lines() { return hot_.load(std::memory_order_acquire); }
  static const std::atomic<uint8_t> *lean_rejection_flags() { return lean_rejections_; }
  // Exclusive stripe `s`'s cells, s < exclusive_stripes().
  static core::Cell *stripe_cells(uint32_t s) { return cells_ + size_t(s) * kSlots; }
  // Whether the counters of `index` have ever been writable (once they
  // are, they stay so): only then may a cell of it be touched.
  static bool counters_writable(uint32_t index);
  // bump_own()'s fold, for the writer of stripe `s`, which may be a
  // thread's or a detached one (thread_stripe.hpp).
  static void fold_in_stripe(uint32_t s, uint32_t index, core::Counter c);

  // The slots of the run a registry of `capacity` is given: whole chunks.
  static constexpr uint32_t run_slots(uint32_t capacity) {
    return (capacity + kChunkSlots - 1) / kChunkSlots * kChunkSlots;
  }
  enum class Claim { Ok, NoMemory, Full };
  // `slots` consecutive indexes for registry `owner`, from *base on, made
  // writable (and given huge pages if large) unless `mapped_over`, then
  // only writable (a shared registry maps its file there: map_shared_run,
  // map_stripe). `file_tag` (not 0: a shared registry's
  // file, place_tag_of) keeps the run where no breaker of another registry
  // has been in this process, or where the same file's were at the same
  // place: no earlier handle then names a breaker of the file that it did
  // not name before.
  static Claim claim(uint32_t slots, uint32_t owner, uint32_t *base, bool mapped_over = false,
                     uint64_t file_tag = 0);
  // Gives a registry's run back. Every life in it must have ended.
  static void release(uint32_t base, uint32_t slots);
  // The id of the registry that owns `index`, 0 if none.
  static uint32_t owner(uint32_t index) {
    return owners_[index / kChunkSlots].load(std::memory_order_acquire);
  }

  // Whether the registry that owns `index` lets a rejection be decided and
  // counted without it (FastPath::rejected): its clock is monotonic, and it
  // reports no rejection events.
  static bool lean_rejections(uint64_t index) {
    return lean_rejections_[index / kChunkSlots].load(std::memory_order_relaxed) != 0;
  }
  // Set by the registry that owns the run from `base` on, whenever its clock
  // or event mask says so; cleared when it closes.
  static void set_lean_rejections(uint32_t base, uint32_t slots, bool lean);

  // A shared registry's run: its hot lines and totals become the file's
  // (`fd` at `hot_at` and `totals_at`), and its folds go to `counters`.
  // Where files cannot be mapped in place (platform::kMapsFilesInPlace;
  // Windows) nothing happens here: the run's own lines stay free words,
  // which no quiet path takes, until show_file_lines.
  static bool map_shared_run(uint32_t base, uint32_t slots, int fd, size_t hot_at, size_t totals_at,
                             SharedCounters *counters);
  // Where files are not mapped in place: line() finds the run's breakers
  // at `file_lines` (the run's lines in the file's own view) from now on,
  // so every call on them goes to the checked paths, which count in the
  // file's totals (Registry::tally). Once nothing can fail before the
  // registry is published: the view is unmapped only after a grace once
  // shown (unmap_shared_run).
  static void show_file_lines(uint32_t base, uint32_t slots, core::Hot *file_lines);
  // Process stripe `s`'s cells in the run become the file's from `cells_at`
  // on (`fd` -1: fresh private zeros again).
  static bool map_stripe(uint32_t s, uint32_t base, uint32_t slots, int fd, size_t cells_at);
  // Undoes map_shared_run: the run's lines become private again, each a
  // free slot past the life it held (so that every handle into the shared
  // registry stays stale here), its counters zero. Without kMapsFilesInPlace
  // line() stops finding the file's view, which stays mapped until the
  // registry is given back after its grace (registry/grace.hpp).
  static void unmap_shared_run(uint32_t base, uint32_t slots);
  // The hot line that holds the state of the breaker `h` names, for the
  // checked paths (under a Grace::Reading): slot(h)'s, or a shared run's in
  // its file's view where files are not mapped in place.
  static core::Hot *line(uint64_t h) {
    if constexpr (!platform::kMapsFilesInPlace) {
      const uint32_t i = uint32_t(h & (kSlots - 1));
      if (core::Hot *v = views_[i / kChunkSlots].load(std::memory_order_acquire))
        return v + i % kChunkSlots;
    }
    return slot(h).hot;
  }
  // Whether `index` is in a shared registry's run.
  static bool in_shared_run(uint32_t index) {
    return shared_[index / kChunkSlots].load(std::memory_order_acquire) != nullptr;
  }

  // For a registry's slow paths and readers; only once a run is claimed.
  static core::Hot *hot(uint32_t index) { return hot_.load(std::memory_order_relaxed) + index; }
  // Exclusive stripe `s`'s cell for `index`, s < exclusive_stripes().
  static core::Cell &cell(uint32_t s, uint32_t index) { return cells_[size_t(s) * kSlots + index]; }
  static core::Totals &totals(uint32_t index) { return totals_[index]; }
  static core::StripeSequence &sequence(uint32_t s) { return sequences_[s]; }
  static uint32_t exclusive_stripes() { return exclusive_; }
  // In a forked child: ends the folds that the parent's other threads were
  // in the middle of (their sequence words made even).
  static void settle_orphaned_folds();
  // Where the calling thread counts for `index` (its first call claims a stripe).
  static core::Tally tally(uint32_t index) {
    uint32_t s = detail::t_stripe_plus_one - 1;
    if (__builtin_expect(s == UINT32_MAX, 0))
      s = detail::claim_stripe(exclusive_, reinterpret_cast<uintptr_t>(cells_),
                               uintptr_t(kSlots) * sizeof(core::Cell));
    return s < exclusive_ ? core::Tally{&cell(s, index), &sequences_[s], &totals_[index]}
                          : core::Tally{nullptr, nullptr, &totals_[index]};
  }

 private:
  static bool reserve();
  // The first chunk of the first free run of `chunks` that may take the
  // registry of `file_tag` (claim), or kChunks if there is none.
  static uint32_t find_run(uint32_t chunks, uint64_t file_tag);
  // The fold of bump_own, out of the fast paths' way. Its arguments are in
  // this order so that the fast paths' registers stay where their slow
  // paths want them (bench/callgrind-count.sh counts the difference).
  [[gnu::cold, gnu::noinline]] static int fold_own_last(core::Counter c, uintptr_t cells,
                                                        uint64_t cell_offset, int status);
  [[gnu::cold, gnu::noinline]] static void fold_own(core::Counter c, uintptr_t cells,
                                                    uint64_t cell_offset);

  static std::atomic<uint64_t> index_mask_;
  static std::atomic<core::Hot *> hot_;
  static core::Cell *cells_;     // [exclusive stripes][kSlots]
  static core::Totals *totals_;  // [kSlots]
  static core::StripeSequence sequences_[kMaxExclusiveStripes];
  static uint32_t exclusive_;
  static std::atomic<uint16_t> owners_[kChunks];
  static std::atomic<uint8_t> lean_rejections_[kChunks];
  static std::atomic<SharedCounters *> shared_[kChunks];
  // Per chunk, where files are not mapped in place: its first line in the
  // file's view of the shared run that holds it, or nullptr.
  static std::atomic<core::Hot *> views_[kChunks];
};

}  // namespace lazybreaker::registry
