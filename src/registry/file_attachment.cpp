#include "registry/file_attachment.hpp"

#include <algorithm>
#include <iterator>
#include <new>
#include <utility>

#include "platform/platform.hpp"
#include "registry/setup_lock.hpp"

namespace lazybreaker::registry {

namespace {
// The attachments open in this process, for the stripe claims of new
// threads and for forked children. A thread's first counted call takes the
// lock once.
SetupLock g_shared;
constexpr uint32_t kMaxAttachments = 1u << 16;  // one per registry id at most
FileAttachment *g_attached[kMaxAttachments];    // under g_shared
uint32_t g_attached_count = 0;                  // under g_shared

__attribute__((constructor)) void forget_shared_stripes_in_forked_children() {
  platform::on_fork_child([] { FileAttachment::forget_stripes_in_child(); });
}
}  // namespace

FileAttachment::FileAttachment(MappedFile &&file, const FileLayout &layout, uint32_t base,
                               uint32_t slots, std::atomic<uint64_t> *own_held)
    : file_(std::move(file)),
      layout_(layout),
      base_(base),
      slots_(slots),
      own_held_(own_held),
      cells_(reinterpret_cast<core::Cell *>(file_.at(layout.cells_at))) {
  platform::file_identity(file_.fd, &dev_, &ino_);
  std::fill(std::begin(file_stripe_), std::end(file_stripe_), kNoStripe);
}

bool FileAttachment::map_run() {
  // Its hot lines, totals and the cells of the stripes its threads take are
  // the file's: the run need not be made writable first.
  run_mapped_ = true;
  if (Space::map_shared_run(base_, slots_, file_.fd, layout_.hot_at, layout_.totals_at, this))
    return true;
  unmap_run();
  return false;
}

void FileAttachment::unmap_run() {
  if (!run_mapped_) return;
  Space::unmap_shared_run(base_, slots_);
  run_mapped_ = false;
}

bool FileAttachment::join() {
  // The stripes this process's threads own now get file stripes before any
  // of them can count here; the threads that take one later get theirs in
  // claim_hook.
  if (!platform::kMapsFilesInPlace) {
    Space::show_file_lines(base_, slots_, lines());
    return true;
  }
  SetupLock::Held lock(g_shared);
  // The hook first, then the stripes of the threads alive now: a thread
  // that takes a stripe meanwhile is among them, or reads the hook and
  // waits for this lock in claim_hook, and then finds this attachment
  // (set_stripe_claim_hook). Both may attach its stripe; the second finds
  // it done.
  set_stripe_claim_hook(&claim_hook);
  const uint64_t owned = stripes_owned();
  bool attached = true;
  for (uint32_t s = 0; s < Space::exclusive_stripes() && attached; ++s)
    if ((owned >> s & 1) != 0) attached = attach_stripe(s);
  if (!attached) {
    release_stripes();
    if (g_attached_count == 0) set_stripe_claim_hook(nullptr);
    return false;
  }
  g_attached[g_attached_count++] = this;
  joined_ = true;
  return true;
}

void FileAttachment::leave() {
  if (!joined_) {
    unmap_run();
    return;
  }
  joined_ = false;
  // One step under the lock a stripe claim takes (claim_hook): a thread that
  // takes a stripe once this attachment is off the list attaches nothing
  // here, so the run's cells under its stripe must be private writable
  // ones again by then. The hook goes last: a claim that finds none takes
  // no lock, and counts at once.
  SetupLock::Held lock(g_shared);
  std::remove(g_attached, g_attached + g_attached_count, this);
  --g_attached_count;
  unmap_run();
  release_stripes();
  if (g_attached_count == 0) set_stripe_claim_hook(nullptr);
}

void FileAttachment::forget_stripes_in_child() {
  // The child is one thread: no lock is held by another (g_shared's holder,
  // if any, was a thread of the parent: the lock is made anew).
  new (&g_shared) SetupLock();
  if (g_attached_count == 0) return;
  // The stripes it counted in are its parent's: it takes its own as its
  // threads count.
  for (uint32_t k = 0; k < g_attached_count; ++k) {
    FileAttachment *a = g_attached[k];
    for (uint32_t s = 0; s < kMaxExclusiveStripes; ++s) {
      if (a->file_stripe_[s] == kNoStripe) continue;
      Space::map_stripe(s, a->base_, a->slots_, -1, 0);
      platform::map_zero_at(&a->own_held_[size_t(s) * a->slots_],
                            size_t(a->slots_) * sizeof(uint64_t));
      a->file_stripe_[s] = kNoStripe;
    }
  }
  forget_stripe_owners();
}

bool FileAttachment::claim_hook(uint32_t s) {
  SetupLock::Held lock(g_shared);
  for (uint32_t k = 0; k < g_attached_count; ++k)
    if (!g_attached[k]->attach_stripe(s)) return false;
  return true;
}

// Another attachment of this process to the same file (under g_shared),
// whose stripe `s` counts in file stripe `f`: then ours does too, as the
// same thread writes both.
bool FileAttachment::sibling_counts_in(uint32_t s, uint32_t f) const {
  for (uint32_t k = 0; k < g_attached_count; ++k) {
    const FileAttachment *a = g_attached[k];
    if (a != this && a->dev_ == dev_ && a->ino_ == ino_ && a->file_stripe_[s] == f) return true;
  }
  return false;
}

bool FileAttachment::attach_stripe(uint32_t s) {
  if (s >= Space::exclusive_stripes()) return false;
  if (file_stripe_[s] != kNoStripe) return true;
  FileHeader &h = header();
  const uint64_t me = ProcessId::self();
  uint32_t f = kFileStripes;
  for (uint32_t k = 0; k < kFileStripes && f == kFileStripes; ++k)
    if (sibling_counts_in(s, k)) f = k;
  const bool shared_with_sibling = f != kFileStripes;
  for (uint32_t k = 0; k < kFileStripes && f == kFileStripes; ++k) {
    uint64_t free_owner = 0;
    if (h.stripe_owner[k].compare_exchange_strong(free_owner, me, std::memory_order_acq_rel)) f = k;
  }
  // None free: one a dead process held.
  for (uint32_t k = 0; k < kFileStripes && f == kFileStripes; ++k) {
    const uint64_t owner = h.stripe_owner[k].load(std::memory_order_acquire);
    if (owner != me && !ProcessId::alive(owner) && reclaim_stripe(k, owner)) {
      uint64_t free_owner = 0;
      if (h.stripe_owner[k].compare_exchange_strong(free_owner, me, std::memory_order_acq_rel))
        f = k;
    }
  }
  if (f == kFileStripes) return false;
  // A stripe free with its sequence word odd is a damaged file's (an owner
  // lets go only between folds): ours now, no fold is in it.
  if (uint64_t seq = h.sequence[f].n.load(std::memory_order_acquire);
      !shared_with_sibling && (seq & 1) != 0 &&
      h.sequence[f].n.compare_exchange_strong(seq, seq + 1, std::memory_order_acq_rel))
    h.uncertain_folds.fetch_add(1, std::memory_order_relaxed);
  void *held = &own_held_[size_t(s) * slots_];
  if (!Space::map_stripe(s, base_, slots_, file_.fd, layout_.stripe_cells_at(f)) ||
      !platform::map_file_at(held, size_t(slots_) * sizeof(uint64_t), file_.fd,
                             layout_.stripe_held_at(f))) {
    Space::map_stripe(s, base_, slots_, -1, 0);
    if (!shared_with_sibling) h.stripe_owner[f].store(0, std::memory_order_release);
    return false;
  }
  // Published before the thread counts in the stripe, so that a reader
  // that sees a count there also sums the stripe.
  uint32_t used = h.stripes_used.load(std::memory_order_relaxed);
  while (used < f + 1 && !h.stripes_used.compare_exchange_weak(
                             used, f + 1, std::memory_order_release, std::memory_order_relaxed)) {
  }
  file_stripe_[s] = uint8_t(f);
  return true;
}

void FileAttachment::release_stripes() {
  FileHeader &h = header();
  const uint64_t me = ProcessId::self();
  for (uint32_t s = 0; s < kMaxExclusiveStripes; ++s) {
    const uint8_t f = file_stripe_[s];
    uint64_t owner = me;
    if (f != kNoStripe && !sibling_counts_in(s, f))
      h.stripe_owner[f].compare_exchange_strong(owner, 0, std::memory_order_acq_rel);
  }
}

void FileAttachment::fold(uint32_t stripe, core::Cell &cell, core::Totals &totals, uint32_t index,
                          core::Counter c) {
  // core::fold's seqlock, with the file stripe's sequence word, and a log
  // of where it stands for reclaim_stripe if this process dies inside it.
  FileHeader &h = header();
  const uint32_t f = file_stripe_[stripe];
  std::atomic<uint64_t> &log = h.fold_log[f];
  std::atomic<uint64_t> &sequence = h.sequence[f].n;
  const uint32_t slot = index - base_;
  // Even, whatever a damaged file's word says: readers wait only while
  // it is odd.
  const uint64_t s = (sequence.load(std::memory_order_relaxed) + 1) & ~uint64_t(1);
  log.store(FoldLog::pack(slot, unsigned(c), 0), std::memory_order_relaxed);
  sequence.store(s + 1, std::memory_order_release);
  std::atomic<uint16_t> &field = cell.n[unsigned(c)];
  totals.n[unsigned(c)].fetch_add(core::kFoldAt, std::memory_order_release);
  log.store(FoldLog::pack(slot, unsigned(c), 1), std::memory_order_release);
  field.store(uint16_t(field.load(std::memory_order_relaxed) - core::kFoldAt),
              std::memory_order_release);
  sequence.store(s + 2, std::memory_order_release);
}

}  // namespace lazybreaker::registry
