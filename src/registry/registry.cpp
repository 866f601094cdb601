#include "registry/registry.hpp"
#include "registry/setup_lock.hpp"

#include <sys/mman.h>
#include <sys/random.h>

#include <algorithm>
#include <bit>
#include <iterator>
#include <new>

namespace lazybreaker::registry {

std::atomic<Registry *> Registry::table_[Registry::kMaxRegistryIds];
std::atomic<uint32_t> Registry::generation_[Registry::kMaxRegistryIds];

namespace {
// Ids are taken and given back only as registries open and close, never on
// a call, so a lock is fine; the request path reads table_ alone.
SetupLock g_ids;
bool g_id_taken[Registry::kMaxRegistryIds];
uint32_t g_id_cursor = 0;

// A free id (never 0), or 0 when every id is in use.
uint32_t take_id() {
  SetupLock::Held lock(g_ids);
  for (uint32_t n = 1; n < Registry::kMaxRegistryIds; ++n) {
    const uint32_t id = (g_id_cursor + n) % Registry::kMaxRegistryIds;
    if (id == 0 || g_id_taken[id]) continue;
    g_id_taken[id] = true;
    g_id_cursor = id;
    return id;
  }
  return 0;
}

void give_back_id(uint32_t id) {
  SetupLock::Held lock(g_ids);
  g_id_taken[id] = false;
}
}  // namespace

namespace {

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Carves consecutive, cache-line aligned arrays out of one reservation.
class Layout {
 public:
  template <typename T>
  size_t add(size_t count) {
    const size_t at = align_up(size_, 64);
    size_ = at + count * sizeof(T);
    return at;
  }
  size_t size() const { return align_up(size_, 4096); }

 private:
  size_t size_ = 0;
};

template <typename T>
T *at(void *base, size_t offset) {
  return reinterpret_cast<T *>(static_cast<char *>(base) + offset);
}

// A registry's jitter seed: random where the kernel has entropy at hand
// (never waiting for it), otherwise the clock and the registry's address,
// so that breakers of different registries and runs do not retry in step.
uint64_t jitter_seed(const void *reg) {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != ssize_t(sizeof seed))
    seed = core::Clock::read(CLOCK_MONOTONIC) ^ (reinterpret_cast<uintptr_t>(reg) << 16);
  return seed;
}

// The name index is read at random, one bucket per create, lookup and
// destroy: on 4 KB pages nearly each of those missed the TLB, a page walk
// of a few hundred ns in a virtual machine, the largest part of creating a
// breaker in a large registry. Huge pages make that walk rare. Random
// hashing touches every 4 KB page of a table after a few thousand names
// anyway, so a table of several huge pages costs no more memory on them;
// smaller tables are left alone. Best effort: without transparent huge
// pages nothing changes.
void prefer_huge_pages(void *begin, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (bytes < 2 * kHuge) return;
  const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(kHuge - 1);
  if (from < to) madvise(reinterpret_cast<void *>(from), to - from, MADV_HUGEPAGE);
}

}  // namespace

// Made with new (std::nothrow): an over-aligned Registry would take the
// aligned operator new, which a program's replaced operator new does not
// cover (tests/capi/test_alloc_failure.cpp).
static_assert(alignof(Registry) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

Status Registry::open(uint32_t capacity, core::ClockKind clock, uint32_t event_capacity,
                      Registry **out) {
  const auto log2_buckets = unsigned(std::bit_width(std::bit_ceil(uint64_t(capacity) * 2) - 1));
  // The whole run: slots beyond the capacity stand in for retired ones, so a
  // registry holds its capacity however old the run it is given.
  const uint32_t slots = Space::run_slots(capacity);

  Layout layout;
  const size_t refs_at = layout.add<std::atomic<uint64_t>>(slots);
  const size_t base_at = layout.add<std::atomic<uint64_t>[unsigned(core::Counter::Count)]>(slots);
  const size_t name_refs_at = layout.add<std::atomic<uint64_t>>(slots);
  const size_t name_words_at =
      layout.add<std::atomic<uint64_t>>(NameStore::words_needed(capacity, slots));
  // Every breaker alive at once could have a configuration of its own, and
  // a window of any class.
  const size_t entries_at = layout.add<core::ConfigCell>(capacity);
  const size_t entry_refs_at = layout.add<std::atomic<uint64_t>>(capacity);
  const size_t entry_links_at = layout.add<std::atomic<uint32_t>>(capacity);
  const size_t config_buckets_at = layout.add<std::atomic<uint64_t>>(size_t(1) << log2_buckets);
  size_t blocks_at[WindowPool::kClasses], block_links_at[WindowPool::kClasses];
  for (unsigned k = 0; k < WindowPool::kClasses; ++k) {
    blocks_at[k] = layout.add<std::atomic<uint64_t>>(size_t(capacity) * WindowPool::block_words(k));
    block_links_at[k] = layout.add<std::atomic<uint32_t>>(capacity);
  }
  const size_t scratch_at = layout.add<std::atomic<uint64_t>>(WindowPool::kScratchWords);
  const size_t held_at = layout.add<std::atomic<uint64_t>>(size_t(kMaxExclusiveStripes) * slots);
  const uint32_t event_cells = std::bit_ceil(std::max<uint32_t>(event_capacity, 2));
  const size_t events_at = layout.add<EventQueue::Cell>(event_cells);
  const size_t links_at = layout.add<std::atomic<uint32_t>>(slots);
  const size_t buckets_at = layout.add<std::atomic<uint64_t>>(size_t(1) << log2_buckets);

  // Reserved, not committed: pages are touched only as slots are used, and
  // zero-filled memory is a valid empty state for every array.
  void *arena = mmap(nullptr, layout.size(), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) return Status::NoMemory;
  prefer_huge_pages(at<char>(arena, buckets_at), sizeof(uint64_t) << log2_buckets);
  auto *reg = new (std::nothrow) Registry();
  if (reg == nullptr) {
    munmap(arena, layout.size());
    return Status::NoMemory;
  }
  const uint32_t id = take_id();
  if (id == 0) {
    munmap(arena, layout.size());
    delete reg;
    return Status::TooManyRegistries;
  }
  if (const Space::Claim claimed = Space::claim(slots, id, &reg->base_);
      claimed != Space::Claim::Ok) {
    give_back_id(id);
    munmap(arena, layout.size());
    delete reg;
    return claimed == Space::Claim::Full ? Status::SpaceFull : Status::NoMemory;
  }
  reg->id_ = id;
  reg->capacity_ = capacity;
  reg->slots_ = slots;
  reg->clock_.kind = clock;
  if (clock == core::ClockKind::Monotonic) reg->clock_.measure_slack();
  reg->arena_ = arena;
  reg->arena_size_ = layout.size();
  reg->hot_ = Space::hot(reg->base_);
  reg->slot_refs_ = at<std::atomic<uint64_t>>(arena, refs_at);
  reg->configs_.emplace(
      at<core::ConfigCell>(arena, entries_at), at<std::atomic<uint64_t>>(arena, entry_refs_at),
      at<std::atomic<uint32_t>>(arena, entry_links_at),
      at<std::atomic<uint64_t>>(arena, config_buckets_at), log2_buckets, capacity);
  reg->jitter_seed_ = jitter_seed(reg) + reg->base_;
  reg->counts_base_ = at<std::atomic<uint64_t>[unsigned(core::Counter::Count)]>(arena, base_at);
  reg->names_.emplace(at<std::atomic<uint64_t>>(arena, name_refs_at),
                      at<std::atomic<uint64_t>>(arena, name_words_at), capacity, slots);
  for (unsigned k = 0; k < WindowPool::kClasses; ++k)
    reg->windows_.place(k, at<std::atomic<uint64_t>>(arena, blocks_at[k]),
                        at<std::atomic<uint32_t>>(arena, block_links_at[k]), capacity);
  reg->windows_.place_scratch(at<std::atomic<uint64_t>>(arena, scratch_at));
  reg->held_ = at<std::atomic<uint64_t>>(arena, held_at);
  reg->events_.emplace(at<EventQueue::Cell>(arena, events_at), event_cells);
  reg->free_.emplace(at<std::atomic<uint32_t>>(arena, links_at), capacity, slots);
  reg->index_.emplace(at<std::atomic<uint64_t>>(arena, buckets_at), log2_buckets, *reg->names_);
  table_[id].store(reg, std::memory_order_release);
  Space::set_lean_rejections(reg->base_, reg->slots_, reg->lean_rejections());
  *out = reg;
  return Status::Ok;
}

namespace {
// Keeps a registry's event mask and its chunks' lean-rejection flags in
// agreement when two threads change the mask at once.
SetupLock g_event_masks;
}  // namespace

void Registry::set_event_mask(uint32_t mask) {
  SetupLock::Held lock(g_event_masks);
  event_mask_.store(mask, std::memory_order_relaxed);
  Space::set_lean_rejections(base_, slots_, lean_rejections());
}

void Registry::close(Registry *reg) {
  // Lives end first, so the fast paths stop counting here before the
  // counters are given back. The slots go on to other registries with their
  // incarnations, so every handle into this one stays stale.
  for (uint32_t i = 0, end = reg->free_->high_water(); i < end; ++i) reg->breaker(i).retire();
  // The next registry with this id has another generation, so a pointer to
  // this one stays refused (capi/resolve.cpp).
  generation_[reg->id_].fetch_add(1, std::memory_order_release);
  table_[reg->id_].store(nullptr, std::memory_order_release);
  Space::set_lean_rejections(reg->base_, reg->slots_, false);
  Space::release(reg->base_, reg->slots_);
  munmap(reg->arena_, reg->arena_size_);
  give_back_id(reg->id_);
  delete reg;
}

Status Registry::create(std::string_view name, const core::Config &cfg, uint64_t *handle) {
  // The home bucket is a cache miss of its own in a large registry: its
  // load runs while the slot is set up.
  const uint64_t hash = name.empty() ? 0 : NameIndex::hash(name);
  if (!name.empty()) index_->prefetch(hash);
  std::optional<uint32_t> index = free_->pop();
  // A retired slot (core::StateWord::ended) is never handed out again; one
  // from an earlier registry's run may still come up fresh here.
  while (index && core::StateWord::retired(hot_[*index].word.load(std::memory_order_acquire))) {
    retire_slot();
    index = free_->pop();
  }
  if (!index) return Status::Full;
  const uint32_t i = *index;
  // The slot is ours alone until begin_life publishes it. Every breaker
  // holds one configuration entry and at most one window block, so neither
  // runs out below the capacity.
  const std::optional<uint32_t> config = configs_->acquire(cfg);
  if (!config) {
    free_->push(i);
    return Status::Full;
  }
  std::optional<uint32_t> window = WindowPool::kNoWindow;
  if (cfg.recorded()) window = windows_.take(cfg.window_shape().buckets, cfg.slow_call_ns != 0);
  if (!window) {
    configs_->release(*config);
    free_->push(i);
    return Status::Full;
  }
  slot_refs_[i].store(SlotRefs::pack(*config, *window), std::memory_order_relaxed);
  names_->write(i, name);
  // This life's counts start where the slot's last life left them. A slot
  // never counted in leaves its base zero and untouched, so a fresh
  // registry's bases cost no memory.
  const Counts now = raw_counts(i);
  if (std::any_of(std::begin(now.n), std::end(now.n), [](uint64_t n) { return n != 0; }))
    for (unsigned k = 0; k < unsigned(core::Counter::Count); ++k)
      counts_base_[i][k].store(now.n[k], std::memory_order_relaxed);
  if (!name.empty()) {
    const NameIndex::Insert inserted = index_->insert(name, hash, i);
    if (inserted != NameIndex::Insert::Ok) {
      names_->release(i);
      release_refs(i);
      free_->push(i);
      return inserted == NameIndex::Insert::Exists ? Status::Exists : Status::Full;
    }
  }
  const uint32_t incarnation =
      core::StateWord::incarnation(hot_[i].word.load(std::memory_order_acquire));
  breaker(i).begin_life(incarnation, cfg);
  *handle = this->handle(i, incarnation);
  return Status::Ok;
}

void Registry::release_refs(uint32_t i) {
  const uint64_t refs = slot_refs_[i].load(std::memory_order_relaxed);
  windows_.give_back(SlotRefs::window(refs));
  configs_->release(SlotRefs::config(refs));
}

void Registry::retire_slot() { free_->grow(); }

Status Registry::lookup(std::string_view name, uint64_t *handle) const {
  for (;;) {
    const uint32_t i = index_->find(name);
    if (i == UINT32_MAX) return Status::NotFound;
    // The slot may be destroyed and reused for another name between the
    // index and here: the handle is good only if one life held the name
    // from before the name was read until after.
    const uint64_t w = hot_[i].word.load(std::memory_order_acquire);
    if (core::StateWord::state(w) == core::State::Free) return Status::NotFound;
    const bool same_name = names_->equals(i, name);
    if (same_life(i, w) && same_name) {
      *handle = this->handle(i, core::StateWord::incarnation(w));
      return Status::Ok;
    }
  }
}

Status Registry::get_or_create(std::string_view name, const core::Config &cfg, uint64_t *handle) {
  const core::ConfigCell::Words wanted = core::ConfigCell::words(cfg);
  for (;;) {
    uint64_t found = 0;
    if (lookup(name, &found) == Status::Ok) {
      const uint32_t i = Handle::index(found) - base_;
      const uint64_t w = hot_[i].word.load(std::memory_order_acquire);
      const bool same = config(i).words() == wanted;
      // The configuration read may be a later life's if the breaker was
      // destroyed meanwhile: then look again.
      if (same_life(i, w) && core::StateWord::incarnation(w) == Handle::incarnation(found)) {
        if (!same) return Status::ExistsOtherwise;
        *handle = found;
        return Status::Ok;
      }
      continue;
    }
    const Status created = create(name, cfg, handle);
    // Exists: another thread or process created it first; NotFound cannot
    // come from create. Anything else is the answer.
    if (created != Status::Exists) return created;
  }
}

bool Registry::name(uint32_t index, uint32_t incarnation, char *buf, size_t *len) const {
  const uint64_t w = hot_[index].word.load(std::memory_order_acquire);
  if (!core::StateWord::alive_in(w, incarnation)) return false;
  *len = names_->read(index, buf);
  return same_life(index, w);
}

bool Registry::same_life(uint32_t index, uint64_t w) const {
  const uint64_t now = hot_[index].word.load(std::memory_order_relaxed);
  return core::StateWord::state(now) != core::State::Free &&
         core::StateWord::incarnation(now) == core::StateWord::incarnation(w);
}

Status Registry::destroy(uint32_t i, uint32_t incarnation) {
  if (!core::StateWord::alive_in(hot_[i].word.load(std::memory_order_acquire), incarnation))
    return Status::BadHandle;
  // The name is read, and its home bucket's load started, before the life
  // ends: if it ends by our hand, no other life came between, so the name
  // was this life's (and stays it: the slot is ours alone then).
  char name[NameStore::kMaxBytes + 1];
  const size_t len = names_->read(i, name);
  const uint64_t hash = len > 0 ? NameIndex::hash(std::string_view(name, len)) : 0;
  if (len > 0) index_->prefetch(hash);
  if (!breaker(i).end_life(incarnation)) return Status::BadHandle;
  if (len > 0) index_->erase(hash, i);
  // Out of the index first, so that no lookup finds the name's space in
  // its next use (one that raced the erase fails the life check). A call
  // racing this destroy may still read the configuration entry and the
  // window block: they stay valid memory, whoever takes them next.
  names_->release(i);
  release_refs(i);
  if (core::StateWord::retired(hot_[i].word.load(std::memory_order_acquire)))
    retire_slot();
  else
    free_->push(i);
  return Status::Ok;
}

size_t Registry::list(uint64_t *out, size_t max) const {
  size_t n = 0;
  const uint32_t end = free_->high_water();
  for (uint32_t i = 0; i < end; ++i) {
    const uint64_t w = hot_[i].word.load(std::memory_order_acquire);
    if (core::StateWord::state(w) == core::State::Free) continue;
    if (n < max) out[n] = handle(i, core::StateWord::incarnation(w));
    ++n;
  }
  return n;
}

Counts Registry::raw_counts(uint32_t index) const {
  const uint32_t slot = base_ + index;
  // The stripes ever owned: a thread that claims one later counts only
  // calls made during this read, which it may or may not see.
  const uint32_t used = std::min(stripes_used(), Space::exclusive_stripes());
  uint64_t seen[kMaxExclusiveStripes];
  for (;;) {
    // A seqlock's reader over every used stripe's sequence word: a fold
    // anywhere between the two readings moves counts between a cell and
    // the totals, which this would see twice or not at all, so it reads
    // again (core::fold).
    bool folding = false;
    for (uint32_t s = 0; s < used; ++s) {
      seen[s] = Space::sequence(s).n.load(std::memory_order_acquire);
      folding |= (seen[s] & 1) != 0;
    }
    if (!folding) {
      Counts c{};
      const core::Totals &totals = Space::totals(slot);
      // Acquire loads (plain loads on x86-64): a count seen here that a
      // fold moved, or that was made after one, shows the fold's sequence
      // change below.
      for (unsigned k = 0; k < unsigned(core::Counter::Count); ++k)
        c.n[k] = totals.n[k].load(std::memory_order_acquire);
      for (uint32_t s = 0; s < used; ++s) {
        const core::Cell &cell = Space::cell(s, slot);
        for (unsigned k = 0; k < core::kCellFields; ++k)
          c.n[k] += cell.n[k].load(std::memory_order_acquire);
      }
      bool moved = false;
      for (uint32_t s = 0; s < used && !moved; ++s)
        moved = Space::sequence(s).n.load(std::memory_order_relaxed) != seen[s];
      if (!moved) {
        c.trips = hot_[index].trips.load(std::memory_order_relaxed);
        return c;
      }
    }
    // A fold is a few instructions; its thread may have been preempted,
    // and then this waits for it to run, without a system call.
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
}

Counts Registry::counts(uint32_t index) const {
  Counts c = raw_counts(index);
  for (unsigned k = 0; k < unsigned(core::Counter::Count); ++k)
    c.n[k] -= counts_base_[index][k].load(std::memory_order_relaxed);
  return c;
}

}  // namespace lazybreaker::registry
