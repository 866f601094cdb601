#include "registry/space.hpp"
#include "registry/setup_lock.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <algorithm>

namespace lazybreaker::registry {

namespace {
// What every handle names before the space exists: a free slot.
core::Hot g_empty_line;
// Claims and releases only: registries opening and closing, never a call.
SetupLock g_claims;
bool g_writable[Space::kChunks];  // under g_claims
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
  pthread_atfork(nullptr, nullptr, [] { Space::settle_orphaned_folds(); });
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

namespace {

constexpr size_t kHotBytes = size_t(Space::kSlots) * sizeof(core::Hot);
constexpr size_t kTotalsBytes = size_t(Space::kSlots) * sizeof(core::Totals);
constexpr size_t kStripeBytes = size_t(Space::kSlots) * sizeof(core::Cell);

bool make_writable(void *at, size_t bytes) {
  return mprotect(at, bytes, PROT_READ | PROT_WRITE) == 0;
}

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
    void *base =
        mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) continue;
    if (mprotect(base, kHotBytes, PROT_READ) != 0) {
      munmap(base, bytes);
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

Space::Claim Space::claim(uint32_t slots, uint32_t owner, uint32_t *base) {
  const uint32_t chunks = (slots + kChunkSlots - 1) / kChunkSlots;
  SetupLock::Held lock(g_claims);
  if (!reserve()) return Claim::NoMemory;
  // First fit: registries are few and their runs long-lived.
  uint32_t run = 0;
  for (uint32_t c = 0; c < kChunks; ++c) {
    run = owners_[c].load(std::memory_order_relaxed) == 0 ? run + 1 : 0;
    if (run < chunks) continue;
    const uint32_t first = c + 1 - chunks;
    const uint32_t index = first * kChunkSlots;
    // Once writable, a chunk stays so (release below), so a process that
    // opens and closes registries all day makes each chunk writable once.
    bool ok = true;
    for (uint32_t k = first; ok && k <= c; ++k) {
      if (g_writable[k]) continue;
      const uint32_t at = k * kChunkSlots;
      ok = make_writable(hot(at), kChunkSlots * sizeof(core::Hot)) &&
           make_writable(&totals(at), kChunkSlots * sizeof(core::Totals));
      for (uint32_t s = 0; ok && s < exclusive_; ++s)
        ok = make_writable(&cell(s, at), kChunkSlots * sizeof(core::Cell));
      g_writable[k] = ok;
    }
    if (!ok) return Claim::NoMemory;
    for (uint32_t k = first; k <= c; ++k)
      owners_[k].store(uint16_t(owner), std::memory_order_release);
    *base = index;
    return Claim::Ok;
  }
  return Claim::Full;
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
    madvise(&cell(s, base), count * sizeof(core::Cell), MADV_DONTNEED);
  madvise(&totals(base), count * sizeof(core::Totals), MADV_DONTNEED);
  for (uint32_t k = base / kChunkSlots; k < base / kChunkSlots + chunks; ++k)
    owners_[k].store(0, std::memory_order_release);
}

int Space::fold_own_last(core::Counter c, uintptr_t cells, uint64_t cell_offset, int status) {
  fold_own(c, cells, cell_offset);
  return status;
}

void Space::fold_own(core::Counter c, uintptr_t cells, uint64_t cell_offset) {
  // The cells are the calling thread's own stripe's (bump_own), the one
  // t_stripe_plus_one names.
  const uint32_t s = detail::t_stripe_plus_one - 1;
  core::fold(*reinterpret_cast<core::Cell *>(cells + cell_offset), sequences_[s],
             totals_[cell_offset / sizeof(core::Cell)], c);
}

void Space::set_lean_rejections(uint32_t base, uint32_t slots, bool lean) {
  const uint32_t first = base / kChunkSlots, chunks = (slots + kChunkSlots - 1) / kChunkSlots;
  for (uint32_t k = first; k < first + chunks; ++k)
    lean_rejections_[k].store(lean ? 1 : 0, std::memory_order_relaxed);
}

}  // namespace lazybreaker::registry
