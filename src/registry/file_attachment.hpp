// What a shared registry adds to a private one: its file's mapping, laid
// over the process's Space (the run's hot lines and totals, and a file
// stripe of cells and held words under each process stripe whose thread
// counts here), the folds of those cells (SharedCounters, with the file's
// sequence words and fold logs), and the process's list of the shared
// registries open in it, which threads that take a stripe later and forked
// children go through. A Registry (registry/registry.hpp) holds one if it
// is shared; what repairs a dead process's leftovers is registry/repair.hpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/counters.hpp"
#include "registry/shared_file.hpp"
#include "registry/space.hpp"
#include "registry/thread_stripe.hpp"

namespace lazybreaker::registry {

class FileAttachment final : public SharedCounters {
 public:
  // Over the open `file` (closed with the attachment) of that layout, for a
  // registry of run `base`, `slots` slots, whose process stripes' own held
  // words are `own_held` ([kMaxExclusiveStripes][slots], private).
  FileAttachment(MappedFile &&file, const FileLayout &layout, uint32_t base, uint32_t slots,
                 std::atomic<uint64_t> *own_held);
  // The run's lines become the process's own again if leave() has not
  // made them so; the file is closed.
  ~FileAttachment() { unmap_run(); }
  FileAttachment(const FileAttachment &) = delete;
  FileAttachment &operator=(const FileAttachment &) = delete;

  FileHeader &header() const { return *file_.header(); }
  // The registry's arena, in the file.
  void *arena() const { return file_.at(layout_.arena_at); }
  // [kFileStripes][slots]: every process's held words, by file stripe.
  std::atomic<uint64_t> *held_words() const {
    return reinterpret_cast<std::atomic<uint64_t> *>(file_.at(layout_.held_at));
  }
  // Where the registry reads and writes the run's hot lines and totals: the
  // space's, over which the file is mapped, or the file's own view where
  // files are not mapped in place (platform::kMapsFilesInPlace).
  core::Hot *lines() const {
    return platform::kMapsFilesInPlace ? Space::hot(base_)
                                       : reinterpret_cast<core::Hot *>(file_.at(layout_.hot_at));
  }
  core::Totals *totals() const {
    return platform::kMapsFilesInPlace
               ? &Space::totals(base_)
               : reinterpret_cast<core::Totals *>(file_.at(layout_.totals_at));
  }
  const core::Cell &cell(uint32_t f, uint32_t index) const {
    return cells_[size_t(f) * slots_ + index];
  }
  // File stripes ever owned (at most kFileStripes, whatever the file's word
  // says): those a reader sums.
  uint32_t stripes_used() const {
    const uint32_t used = header().stripes_used.load(std::memory_order_acquire);
    return used < kFileStripes ? used : kFileStripes;
  }

  // Maps the run's hot lines and totals to the file's; false if it cannot
  // (then the run is the process's own again).
  bool map_run();
  // Gives the stripes of this process's threads alive now file stripes,
  // and makes this attachment one the threads that take a stripe later get
  // theirs from; false if the file has too few free (its threads would
  // count where no other process sees), with none of them kept. Where files
  // are not mapped in place, it shows the checked paths the file's lines
  // instead (Space::show_file_lines) and the registry counts in the file's
  // totals (Registry::tally). The last step before the registry is
  // published.
  bool join();
  // Undoes join() and map_run(): the run's lines become stale private ones,
  // and the file stripes go back (their counts stay there for the next
  // owner).
  void leave();
  // Undoes map_run() alone (a registry that never joined), once.
  void unmap_run();
  // In a forked child: the file stripes the parent's threads held are not
  // the child's (installed with pthread_atfork).
  static void forget_stripes_in_child();

  // SharedCounters: a fold in the file, logged for a dead owner's finish.
  void fold(uint32_t stripe, core::Cell &cell, core::Totals &totals, uint32_t index,
            core::Counter c) override;

  // How long a reader has seen odd sequence words (a fold in flight), for
  // repair_stuck_folds: docs/shared-registries.md ("A fold that never
  // ends").
  struct OddWatch {
    static constexpr uint64_t kNobodyNs = 100'000'000, kAnyoneNs = 1'000'000'000;
    static constexpr uint64_t kGiveUpNs = 2'000'000'000;
    explicit OddWatch(uint64_t now) : began(now) {}
    uint64_t began;
    uint64_t value[kFileStripes] = {};  // the odd word last seen, and since when
    uint64_t since[kFileStripes] = {};
  };
  // The repair a reader takes on, now and then while it waits, of the
  // stripes whose sequence words it has seen odd (`seen`, of `used`
  // stripes; `watch` kept between its calls, begun by the first): a dead
  // owner's fold is finished at once, a fold that stays odd too long is
  // finished or read around (repair.cpp). True once the reader has waited
  // long enough to take the counts as they stand.
  bool repair_stuck_folds(const uint64_t *seen, uint32_t used, std::optional<OddWatch> &watch);
  // Whether a reader gave up waiting for file stripe `s`'s fold, whose
  // sequence word is `seq` (odd): then it reads around it.
  bool skips_fold(uint32_t s, uint64_t seq) const {
    return skipped_fold_[s].load(std::memory_order_relaxed) == seq;
  }

 private:
  static constexpr uint8_t kNoStripe = 0xff;
  // Gives process stripe `s` a file stripe; false if the file has none free.
  bool attach_stripe(uint32_t s);
  bool sibling_counts_in(uint32_t s, uint32_t f) const;
  // Gives the file stripes back that no other attachment of this process to
  // the same file counts in (under the attachments' lock).
  void release_stripes();
  // The file stripe stripe `f`'s owner died holding: its fold finished, it
  // is free again; false if its owner lives (or another process took it)
  // (repair.cpp).
  bool reclaim_stripe(uint32_t f, uint64_t dead_owner);
  static bool claim_hook(uint32_t s);

  MappedFile file_;
  FileLayout layout_;
  bool run_mapped_ = false;
  bool joined_ = false;
  uint32_t base_, slots_;
  std::atomic<uint64_t> *own_held_;
  core::Cell *cells_;           // [kFileStripes][slots_]
  uint64_t dev_ = 0, ino_ = 0;  // which file, to tell siblings
  // Which file stripe each process stripe counts in (kNoStripe: none yet).
  uint8_t file_stripe_[kMaxExclusiveStripes];
  // Per file stripe: the odd sequence word a reader of this process stopped
  // waiting on (its fold took longer than any fold does), or 0.
  std::atomic<uint64_t> skipped_fold_[kFileStripes] = {};
};

}  // namespace lazybreaker::registry
