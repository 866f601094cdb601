#include "registry/repair.hpp"

#include <string_view>

#include "platform/platform.hpp"
#include "registry/file_attachment.hpp"
#include "registry/registry.hpp"

namespace lazybreaker::registry {

FoldEnd finish_fold(FileHeader &h, core::Cell *cells, uint32_t slots, uint32_t f) {
  const uint64_t seq = h.sequence[f].n.load(std::memory_order_acquire);
  if ((seq & 1) == 0) return FoldEnd::None;
  const uint64_t log = h.fold_log[f].load(std::memory_order_acquire);
  FoldEnd end = FoldEnd::Unlogged;
  if (FoldLog::any(log) && FoldLog::slot(log) < slots &&
      FoldLog::counter(log) < core::kCellFields) {
    if (FoldLog::phase(log) == 1) {
      std::atomic<uint16_t> &field =
          cells[size_t(f) * slots + FoldLog::slot(log)].n[FoldLog::counter(log)];
      const uint16_t v = field.load(std::memory_order_relaxed);
      if (v >= core::kFoldAt) field.store(uint16_t(v - core::kFoldAt), std::memory_order_release);
      end = FoldEnd::Undone;
    } else {
      h.uncertain_folds.fetch_add(1, std::memory_order_relaxed);
      end = FoldEnd::Uncertain;
    }
  }
  h.fold_log[f].store(0, std::memory_order_relaxed);
  h.sequence[f].n.store(seq + 1, std::memory_order_release);
  return end;
}

bool FileAttachment::reclaim_stripe(uint32_t f, uint64_t dead_owner) {
  FileHeader &h = header();
  // Ours while we finish its fold: the process that died holds nothing.
  const uint64_t mine = OwnerWord::reclaiming(ProcessId::self());
  uint64_t expected = dead_owner;
  if (!h.stripe_owner[f].compare_exchange_strong(expected, mine, std::memory_order_acq_rel))
    return false;
  // A log that names no fold is a damaged file's: uncertain too, here.
  if (finish_fold(h, cells_, slots_, f) == FoldEnd::Unlogged)
    h.uncertain_folds.fetch_add(1, std::memory_order_relaxed);
  // Owner 0: a stripe nobody held, whose fold a reader finished.
  if (dead_owner != 0) h.stripes_reclaimed.fetch_add(1, std::memory_order_relaxed);
  h.stripe_owner[f].store(0, std::memory_order_release);
  return true;
}

// A stripe's sequence word odd for longer than a fold takes: its owner
// died in one (finished at once), or the file is damaged (or a co-tenant
// wrote it): a reader waits kNobodyNs for an owner that is 0 or not a live
// process of the file, kAnyoneNs for any other, then finishes the fold
// (reclaim_stripe) or reads around it (skipped_fold_). Either is counted
// in the file's uncertain folds.
bool FileAttachment::repair_stuck_folds(const uint64_t *seen, uint32_t used,
                                        std::optional<OddWatch> &watch) {
  const uint64_t now = platform::monotonic_ns();
  if (!watch) watch.emplace(now);
  FileHeader &h = header();
  for (uint32_t s = 0; s < used; ++s) {
    if ((seen[s] & 1) == 0 || skips_fold(s, seen[s]) ||
        h.sequence[s].n.load(std::memory_order_acquire) != seen[s])
      continue;
    const uint64_t owner = h.stripe_owner[s].load(std::memory_order_acquire);
    if (owner != 0 && !ProcessId::alive(owner)) {
      reclaim_stripe(s, owner);
      continue;
    }
    if (watch->value[s] != seen[s]) {
      watch->value[s] = seen[s];
      watch->since[s] = now;
      continue;
    }
    const uint64_t odd_for = now - watch->since[s];
    if (odd_for >= OddWatch::kNobodyNs && (owner == 0 || !ProcessId::maps(owner, dev_, ino_))) {
      reclaim_stripe(s, owner);
    } else if (odd_for >= OddWatch::kAnyoneNs) {
      uint64_t before = skipped_fold_[s].load(std::memory_order_relaxed);
      if (before != seen[s] && skipped_fold_[s].compare_exchange_strong(before, seen[s]))
        h.uncertain_folds.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Sequence words that never stay still are a co-tenant's: the counts as
  // they are, then.
  return now - watch->began > OddWatch::kGiveUpNs;
}

bool PendingRecords::take(uint32_t i, uint32_t incarnation, uint64_t destroying) {
  for (uint64_t p = records_[i].load(std::memory_order_acquire);;) {
    if (!core::StateWord::alive_in(hot_[i].word.load(std::memory_order_acquire), incarnation))
      return false;
    // Free, a create that has begun this life and not yet cleared its
    // record (only that is left of it), or a destroy by a dead process: take
    // it. Another live destroy of this life: it wins.
    const bool ours_to_take =
        p == 0 || (p & Pending::kCreating) != 0 ||
        ((p & Pending::kDestroying) != 0 && !ProcessId::alive(Pending::owner(p)));
    if (!ours_to_take) return false;
    if (records_[i].compare_exchange_strong(p, destroying, std::memory_order_acq_rel)) {
      if (core::StateWord::alive_in(hot_[i].word.load(std::memory_order_acquire), incarnation))
        return true;
      records_[i].store(0, std::memory_order_release);
      return false;
    }
  }
}

bool PendingRecords::take_left(uint32_t i, uint64_t finishing) {
  uint64_t p = records_[i].load(std::memory_order_acquire);
  return p != 0 && !ProcessId::alive(Pending::owner(p)) &&
         records_[i].compare_exchange_strong(p, finishing, std::memory_order_acq_rel);
}

bool PendingRecords::stale(uint32_t slot, bool claimed) const {
  // A name-index entry's slot is not free unless a create or destroy of it
  // is recorded (create() records before it inserts, destroy() before it
  // ends the life, and both clear the record after): free and unrecorded
  // is a damaged file's, free and recorded by the dead is what a death left.
  // A claimed entry's slot is never alive (its life begins once the entry
  // is named): alive is a damaged file's too.
  const uint64_t p = records_[slot].load(std::memory_order_acquire);
  const bool free =
      core::StateWord::state(hot_[slot].word.load(std::memory_order_acquire)) == core::State::Free;
  if ((p & Pending::kFinishing) != 0) return false;
  return free ? p == 0 || !ProcessId::alive(Pending::owner(p)) : claimed;
}

const char *Registry::damaged_part() const {
  if (!free_->consistent()) return "free slots";
  if (!configs_->consistent(capacity_)) return "configurations";
  if (!windows_.consistent()) return "free windows";
  if (!names_->consistent(slots_)) return "names";
  if (!index_->consistent(slots_)) return "name index";
  for (uint32_t i = 0, end = free_->high_water(); i < end; ++i) {
    const uint64_t refs = slot_refs_[i].load(std::memory_order_relaxed);
    if (SlotRefs::config(refs) >= capacity_ ||
        !WindowPool::valid(SlotRefs::window(refs), capacity_))
      return "slots' references";
    // The configuration of a live breaker (a free slot's may be any
    // entry's, and is read only by calls racing a destroy).
    if (core::StateWord::state(hot_[i].word.load(std::memory_order_relaxed)) != core::State::Free &&
        !stored_config_plausible(configs_->cell(SlotRefs::config(refs))))
      return "configurations";
  }
  return nullptr;
}

void Registry::finish_left_work() {
  const uint64_t finishing = ProcessId::self() | Pending::kFinishing;
  for (uint32_t i = 0, end = free_->high_water(); i < end; ++i) {
    if (!pending_->take_left(i, finishing)) continue;
    // A live breaker: its create got as far as its life (all but the
    // record), or its destroy had not ended it. Nothing else to do.
    if (core::StateWord::state(hot_[i].word.load(std::memory_order_acquire)) != core::State::Free) {
      pending_->store(i, 0);
      continue;
    }
    // A create that died before the life began, or a destroy after the life
    // ended: out of the index, its name's space back, the slot back. Its
    // configuration entry and window block may stay taken (which it had
    // taken or given back is not recorded): the bound in
    // docs/shared-registries.md.
    char name[NameStore::kMaxBytes + 1];
    const size_t len = names_->read(i, name);
    if (len > 0) index_->erase_left(NameIndex::hash(std::string_view(name, len)), i);
    names_->release(i);
    pending_->store(i, 0);
    if (core::StateWord::retired(hot_[i].word.load(std::memory_order_acquire)))
      retire_slot();
    else
      free_->push(i);
  }
}

}  // namespace lazybreaker::registry
