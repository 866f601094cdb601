// Crash repair in a shared registry's file: what a process killed in the
// middle of a create, a destroy or a counter fold leaves there, found and
// finished by the processes that live on (docs/shared-registries.md,
// "Crash safety, and its limits"). Creates and destroys are recorded per
// slot (PendingRecords); a fold is logged per stripe (FoldLog) and finished
// by finish_fold, whoever meets it: a reader that finds the stripe's owner
// dead (FileAttachment::repair_stuck_folds), a thread that takes the
// stripe over, or the first open after a reboot. What the registry's own
// structures hold out of range is Registry::damaged_part (repair.cpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "core/breaker.hpp"
#include "registry/name_index.hpp"
#include "registry/shared_file.hpp"
#include "registry/words.hpp"

namespace lazybreaker::registry {

// What finish_fold found on a stripe.
enum class FoldEnd {
  None,       // no fold in flight (its sequence word even)
  Undone,     // the log's phase 1: the cell's part taken back
  Uncertain,  // the log's phase 0: left undone, counted in uncertain_folds
  Unlogged,   // a log that names no fold (a damaged file's): left undone
};

// Finishes the fold the owner of file stripe `f` stopped inside, if its
// sequence word is odd: phase 1 says the totals have the fold's counts, and
// the cell may still have them too (taken back); phase 0 cannot tell
// whether the totals' add happened (it is one instruction before the
// phase's store), so the fold is counted as uncertain and left undone.
// Either way the log is cleared and the sequence word made even. `cells`
// are the file's, [kFileStripes][slots]. The stripe must be the caller's
// alone (its owner dead, or the file under its lock).
FoldEnd finish_fold(FileHeader &h, core::Cell *cells, uint32_t slots, uint32_t f);

// A shared registry's Pending records, one per slot in its arena: which
// process does which create or destroy of the slot (registry/words.hpp).
// What a process that dies inside one left half done is found by them: its
// name-index entry is taken out of the way of the next create of the name
// (stale()), its slot given back by the next open of the file
// (Registry::finish_left_work).
class PendingRecords final : public StaleSlots {
 public:
  // `records` ([slots], zero-filled at first) and `hot` outlive this.
  PendingRecords(std::atomic<uint64_t> *records, const core::Hot *hot)
      : records_(records), hot_(hot) {}

  // Records `what` (this process's create, before it inserts, or the
  // clearing of a record: 0) of slot `i`, which is the caller's alone.
  void store(uint32_t i, uint64_t what) { records_[i].store(what, std::memory_order_release); }
  // Clears this process's create record `creating` of slot `i`, unless a
  // destroy took it over meanwhile.
  void clear_create(uint32_t i, uint64_t creating) {
    records_[i].compare_exchange_strong(creating, 0, std::memory_order_acq_rel);
  }
  // Records the destroy `destroying` of the `incarnation`-th life of slot
  // `i`; false if that life is over or another live process destroys it.
  bool take(uint32_t i, uint32_t incarnation, uint64_t destroying);
  // A record of slot `i` left by a dead process, taken over for this
  // process's finishing (`finishing`); false if there is none.
  bool take_left(uint32_t i, uint64_t finishing);
  bool stale(uint32_t slot, bool claimed) const override;

 private:
  std::atomic<uint64_t> *records_;
  const core::Hot *hot_;
};

}  // namespace lazybreaker::registry
