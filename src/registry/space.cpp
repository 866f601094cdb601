#include "registry/space.hpp"
#include "registry/grace.hpp"
#include "registry/setup_lock.hpp"

#include <algorithm>

#include "core/mix.hpp"
#include "platform/platform.hpp"

namespace lazybreaker::registry {

namespace {
// What every handle names before the space exists: a free slot.
core::Hot g_empty_line;
// Claims and releases only: registries opening and closing, never a call.
SetupLock g_claims;
// Set under g_claims; read by counters_writable() without it.
std::atomic<bool> g_writable[Space::kChunks];
}  // namespace

void Space::settle_orphaned_folds() {
  for (core::StripeSequence &s : sequences_) {
    const uint64_t n = s.n.load(std::memory_order_relaxed);
    if ((n & 1) != 0) s.n.store(n + 1, std::memory_order_relaxed);
  }
}

namespace {
// A forked child has one thread, the one that called fork, which was not
// folding: an odd sequence word there is a fold another thread of the
// parent was in the middle of, and would make every read in the child wait
// for a thread that does not exist. Its counts stay where the fold left
// them (docs/semantics.md, "Processes").
__attribute__((constructor)) void settle_folds_in_forked_children() {
  platform::on_fork_child([] { Space::settle_orphaned_folds(); });
}
}  // namespace

std::atomic<uint64_t> Space::index_mask_{0};
std::atomic<core::Hot *> Space::hot_{&g_empty_line};
core::Cell *Space::cells_ = nullptr;
core::Totals *Space::totals_ = nullptr;
core::StripeSequence Space::sequences_[kMaxExclusiveStripes];
uint32_t Space::exclusive_ = 0;
std::atomic<uint16_t> Space::owners_[Space::kChunks];
std::atomic<uint8_t> Space::lean_rejections_[Space::kChunks];
std::atomic<SharedCounters *> Space::shared_[Space::kChunks];
std::atomic<core::Hot *> Space::views_[Space::kChunks];

namespace {

constexpr size_t kHotBytes = size_t(Space::kSlots) * sizeof(core::Hot);
constexpr size_t kTotalsBytes = size_t(Space::kSlots) * sizeof(core::Totals);
constexpr size_t kStripeBytes = size_t(Space::kSlots) * sizeof(core::Cell);
constexpr size_t kHugePage = 2u << 20;
static_assert(kHotBytes % kHugePage == 0 && kTotalsBytes % kHugePage == 0 &&
              kStripeBytes % kHugePage == 0);
// A run of this many slots fills a huge page of hot lines.
constexpr uint32_t kHugeRunSlots = kHugePage / sizeof(core::Hot);

// A quiet call on a random breaker of a large registry touches its hot line
// and its counter cell: on 4 KiB pages each is a TLB miss of its own beyond
// a few thousand breakers, on huge pages the whole run fits the TLB
// (bench/growth.cpp). Only for runs that fill huge pages, so that a small
// registry's footprint stays its own; advice the kernel may ignore
// (transparent huge pages off) and that costs nothing then.
void advise_huge_pages(void *at, size_t bytes) { platform::advise_huge_pages(at, bytes); }

bool make_writable(void *at, size_t bytes) { return platform::commit(at, bytes); }

}  // namespace

bool Space::reserve() {
  if (index_mask_.load(std::memory_order_relaxed) != 0) return true;
  // As many stripes as the address space allows, up to kMaxExclusiveStripes,
  // so that the threads of a thread-per-request server each count in cells
  // of their own, on the fast path, however few CPUs run them. Address
  // space only: no page is committed until a registry's run is made writable
  // and then touched.
  for (uint32_t exclusive = kMaxExclusiveStripes; exclusive >= kMinExclusiveStripes;
       exclusive /= 2) {
    const size_t bytes = kHotBytes + kTotalsBytes + size_t(exclusive) * kStripeBytes;
    void *mapped = platform::reserve(bytes + kHugePage);
    if (mapped == nullptr) continue;
    // On a huge-page boundary, as every part is a whole number of huge
    // pages: a large registry's run can then be given huge pages (claim).
    void *base = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(mapped) + kHugePage - 1) &
                                          ~uintptr_t(kHugePage - 1));
    if (!platform::commit_read_only(base, kHotBytes)) {
      platform::release(mapped, bytes + kHugePage);
      return false;
    }
    exclusive_ = exclusive;
    totals_ = reinterpret_cast<core::Totals *>(static_cast<char *>(base) + kHotBytes);
    cells_ = reinterpret_cast<core::Cell *>(static_cast<char *>(base) + kHotBytes + kTotalsBytes);
    hot_.store(static_cast<core::Hot *>(base), std::memory_order_relaxed);
    index_mask_.store(kSlots - 1, std::memory_order_release);
    return true;
  }
  return false;
}

namespace {
// Per chunk, under g_claims: whose breakers its slots have held in this
// process. A handle names a slot and a life, not a registry: a shared
// file's lives are the file's, so a run of it laid where another
// registry's breakers were could give a handle of that registry a breaker
// of the file. So a shared run goes only where no breaker has been, or
// where the same file's run had the same chunk (place_tag). A process
// that opens many different files uses fresh chunks up: kChunks in all. A private
// registry goes anywhere: a shared run's lines are left past its file's
// lives (unmap_shared_run).
constexpr uint64_t kNeverUsed = 0, kPrivateUse = 1;
uint64_t g_used_by[Space::kChunks];

// Chunk `j` of a run of the shared file `file_tag`: never kNeverUsed or
// kPrivateUse.
uint64_t place_tag(uint64_t file_tag, uint32_t j) {
  const uint64_t t = core::mix64(file_tag ^ core::mix64(j));
  return t <= kPrivateUse ? t + 2 : t;
}

// Whether chunk `k` may be chunk `j` of a run for the registry of
// `file_tag` (0: a private one).
bool may_hold(uint32_t k, uint32_t j, uint64_t file_tag) {
  return file_tag == 0 || g_used_by[k] == kNeverUsed || g_used_by[k] == place_tag(file_tag, j);
}
}  // namespace

uint32_t Space::find_run(uint32_t chunks, uint64_t file_tag) {
  // First fit: registries are few and their runs long-lived.
  for (uint32_t first = 0; first + chunks <= kChunks;) {
    uint32_t j = 0;
    while (j < chunks && owners_[first + j].load(std::memory_order_relaxed) == 0 &&
           may_hold(first + j, j, file_tag))
      ++j;
    if (j == chunks) return first;
    // A chunk in use ends every run through it; another place's, only this one.
    first += owners_[first + j].load(std::memory_order_relaxed) != 0 ? j + 1 : 1;
  }
  return kChunks;
}

Space::Claim Space::claim(uint32_t slots, uint32_t owner, uint32_t *base, bool mapped_over,
                          uint64_t file_tag) {
  const uint32_t chunks = (slots + kChunkSlots - 1) / kChunkSlots;
  SetupLock::Held lock(g_claims);
  if (!reserve()) return Claim::NoMemory;
  const uint32_t first = find_run(chunks, file_tag);
  if (first == kChunks) return Claim::Full;
  const uint32_t last = first + chunks - 1;
  const uint32_t index = first * kChunkSlots;
  // Once writable, a chunk stays so (release below), so a process that
  // opens and closes registries all day makes each chunk writable once. A
  // shared run's too, though its file is then mapped over it: a stripe its
  // file gives no cells to (none attached) counts in private zeros rather
  // than fault, and its folds are allowed (counters_writable).
  bool ok = true;
  for (uint32_t k = first; ok && k <= last; ++k) {
    if (g_writable[k].load(std::memory_order_relaxed)) continue;
    const uint32_t at = k * kChunkSlots;
    ok = make_writable(hot(at), kChunkSlots * sizeof(core::Hot)) &&
         make_writable(&totals(at), kChunkSlots * sizeof(core::Totals));
    for (uint32_t s = 0; ok && s < exclusive_; ++s)
      ok = make_writable(&cell(s, at), kChunkSlots * sizeof(core::Cell));
    g_writable[k].store(ok, std::memory_order_release);
  }
  if (!ok) return Claim::NoMemory;
  if (slots >= kHugeRunSlots && !mapped_over) {
    const uint32_t run_slots = chunks * kChunkSlots;
    advise_huge_pages(hot(index), size_t(run_slots) * sizeof(core::Hot));
    advise_huge_pages(&totals(index), size_t(run_slots) * sizeof(core::Totals));
    for (uint32_t s = 0; s < exclusive_; ++s)
      advise_huge_pages(&cell(s, index), size_t(run_slots) * sizeof(core::Cell));
  }
  for (uint32_t k = first; k <= last; ++k) {
    g_used_by[k] = file_tag == 0 ? kPrivateUse : place_tag(file_tag, k - first);
    owners_[k].store(uint16_t(owner), std::memory_order_release);
  }
  *base = index;
  return Claim::Ok;
}

void Space::release(uint32_t base, uint32_t slots) {
  const uint32_t chunks = (slots + kChunkSlots - 1) / kChunkSlots;
  const size_t count = size_t(chunks) * kChunkSlots;
  SetupLock::Held lock(g_claims);
  // The counters' pages go back to the system and read as zero when the
  // next owner touches them. They stay writable: a thread still calling a
  // breaker of the closed registry (the caller's error) counts into a fresh
  // page rather than faulting. Only stripes ever owned have been written
  // (and the totals). A field's count below kFoldAt goes with its page, and
  // the stripe's sequence word stays even: the next registry's counts
  // start at zero.
  const uint32_t used = std::min(stripes_used(), exclusive_);
  for (uint32_t s = 0; s < used; ++s)
    platform::decommit(&cell(s, base), count * sizeof(core::Cell));
  platform::decommit(&totals(base), count * sizeof(core::Totals));
  for (uint32_t k = base / kChunkSlots; k < base / kChunkSlots + chunks; ++k)
    owners_[k].store(0, std::memory_order_release);
}

int Space::fold_own_last(core::Counter c, uintptr_t cells, uint64_t cell_offset, int status) {
  fold_own(c, cells, cell_offset);
  return status;
}

void Space::fold_own(core::Counter c, uintptr_t, uint64_t cell_offset) {
  // The cells are the calling thread's own stripe's (bump_own), the one
  // t_stripe_plus_one names.
  fold_in_stripe(detail::t_stripe_plus_one - 1, uint32_t(cell_offset / sizeof(core::Cell)), c);
}

void Space::fold_in_stripe(uint32_t s, uint32_t index, core::Counter c) {
  // A shared registry's fold reaches its file, which a close may give back.
  const Grace::Reading reading;
  core::Cell &counted = cell(s, index);
  if (SharedCounters *shared = shared_[index / kChunkSlots].load(std::memory_order_acquire))
    shared->fold(s, counted, totals_[index], index, c);
  else
    core::fold(counted, sequences_[s], totals_[index], c);
}

bool Space::ensure() {
  SetupLock::Held lock(g_claims);
  return reserve();
}

bool Space::counters_writable(uint32_t index) {
  return index < kSlots && g_writable[index / kChunkSlots].load(std::memory_order_acquire);
}

namespace {
bool map_fixed(void *at, size_t bytes, int fd, size_t offset) {
  return fd >= 0 ? platform::map_file_at(at, bytes, fd, offset) : platform::map_zero_at(at, bytes);
}
}  // namespace

bool Space::map_shared_run(uint32_t base, uint32_t slots, int fd, size_t hot_at, size_t totals_at,
                           SharedCounters *counters) {
  if constexpr (!platform::kMapsFilesInPlace) return true;
  if (!map_fixed(hot(base), size_t(slots) * sizeof(core::Hot), fd, hot_at) ||
      !map_fixed(&totals(base), size_t(slots) * sizeof(core::Totals), fd, totals_at))
    return false;
  for (uint32_t k = base / kChunkSlots; k < (base + slots) / kChunkSlots; ++k)
    shared_[k].store(counters, std::memory_order_release);
  return true;
}

void Space::show_file_lines(uint32_t base, uint32_t slots, core::Hot *file_lines) {
  // No fold reaches the file from the run's own cells, as nothing counts in
  // them: shared_ stays unset, so a fold there (a made-up handle's) stays
  // private.
  for (uint32_t at = base; at < base + slots; at += kChunkSlots)
    views_[at / kChunkSlots].store(file_lines + (at - base), std::memory_order_release);
}

bool Space::map_stripe(uint32_t s, uint32_t base, uint32_t slots, int fd, size_t cells_at) {
  return s < exclusive_ &&
         map_fixed(&cell(s, base), size_t(slots) * sizeof(core::Cell), fd, cells_at);
}

namespace {
// The word a slot's own line takes when a shared run leaves it: free, past
// the life `file` (the file's word) held, and past its own, `own`, from
// before (0: none kept), so that neither the shared registry's handles nor
// earlier ones name a breaker there again.
uint64_t stale_word(uint64_t file, uint64_t own) {
  const uint64_t after_file =
      core::StateWord::state(file) == core::State::Free ? file : core::StateWord::ended(file);
  return core::StateWord::incarnation(own) > core::StateWord::incarnation(after_file) ||
                 core::StateWord::retired(own)
             ? own
             : after_file;
}

// A line's word as the close leaves it: read with a sequentially consistent
// read-modify-write, so that a create that found the registry still open
// (Registry::still_open, after its life began) has its life seen here.
uint64_t last_word(core::Hot &line) { return line.word.fetch_add(0, std::memory_order_seq_cst); }
}  // namespace

void Space::unmap_shared_run(uint32_t base, uint32_t slots) {
  if constexpr (!platform::kMapsFilesInPlace) {
    // The run's own lines were never the file's: they are written before
    // line() stops looking in the view, so that a reader finds a stale word
    // on either side.
    for (uint32_t at = base; at < base + slots; at += kChunkSlots) {
      core::Hot *file = views_[at / kChunkSlots].load(std::memory_order_acquire);
      core::Hot *own = hot(at);
      for (uint32_t i = 0; file != nullptr && i < kChunkSlots; ++i)
        own[i].word.store(
            stale_word(last_word(file[i]), own[i].word.load(std::memory_order_relaxed)),
            std::memory_order_release);
      views_[at / kChunkSlots].store(nullptr, std::memory_order_release);
    }
    return;
  }
  // A chunk at a time, the words as they stand made stale: a free slot one
  // life on.
  for (uint32_t at = base; at < base + slots; at += kChunkSlots) {
    uint64_t words[kChunkSlots];
    core::Hot *lines = hot(at);
    // The lines are the file's: what the run's own held before is gone.
    for (uint32_t i = 0; i < kChunkSlots; ++i) words[i] = stale_word(last_word(lines[i]), 0);
    map_fixed(lines, kChunkSlots * sizeof(core::Hot), -1, 0);
    for (uint32_t i = 0; i < kChunkSlots; ++i)
      lines[i].word.store(words[i], std::memory_order_release);
  }
  map_fixed(&totals(base), size_t(slots) * sizeof(core::Totals), -1, 0);
  for (uint32_t s = 0; s < exclusive_; ++s) map_stripe(s, base, slots, -1, 0);
  for (uint32_t k = base / kChunkSlots; k < (base + slots) / kChunkSlots; ++k)
    shared_[k].store(nullptr, std::memory_order_release);
}

void Space::set_lean_rejections(uint32_t base, uint32_t slots, bool lean) {
  const uint32_t first = base / kChunkSlots, chunks = (slots + kChunkSlots - 1) / kChunkSlots;
  for (uint32_t k = first; k < first + chunks; ++k)
    lean_rejections_[k].store(lean ? 1 : 0, std::memory_order_relaxed);
}

}  // namespace lazybreaker::registry
