#include "registry/registry.hpp"
#include "platform/platform.hpp"
#include "registry/arena.hpp"
#include "registry/grace.hpp"
#include "registry/setup_lock.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
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
// A registry's jitter seed: random where the kernel has entropy at hand
// (never waiting for it), otherwise the clock and the registry's address,
// so that breakers of different registries and runs do not retry in step.
uint64_t jitter_seed(const void *reg) {
  uint64_t seed = 0;
  if (!platform::random_bytes(&seed, sizeof seed))
    seed = platform::monotonic_ns() ^ (reinterpret_cast<uintptr_t>(reg) << 16);
  return seed;
}
}  // namespace

// Made with new (std::nothrow): an over-aligned Registry would take the
// aligned operator new, which a program's replaced operator new does not
// cover (tests/capi/test_alloc_failure.cpp).
static_assert(alignof(Registry) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

Status Registry::claim_run(bool mapped_over, uint64_t file_tag) {
  const uint32_t id = take_id();
  if (id == 0) return Status::TooManyRegistries;
  if (const Space::Claim claimed = Space::claim(slots_, id, &base_, mapped_over, file_tag);
      claimed != Space::Claim::Ok) {
    give_back_id(id);
    return claimed == Space::Claim::Full ? Status::SpaceFull : Status::NoMemory;
  }
  id_ = id;
  hot_ = Space::hot(base_);
  totals_ = &Space::totals(base_);
  return Status::Ok;
}

void Registry::give_up_run() {
  Space::release(base_, slots_);
  give_back_id(id_);
}

Registry::~Registry() {
  // In the order they were taken, undone backwards: the run must be the
  // process's own again before it goes back to the space.
  if (file_) file_->unmap_run();
  if (id_ != 0) give_up_run();
  if (private_ != nullptr) platform::free_allocation(private_, private_size_);
}

Status Registry::publish(Owned reg, Registry **out) {
  table_[reg->id_].store(reg.get(), std::memory_order_release);
  Space::set_lean_rejections(reg->base_, reg->slots_, reg->lean_rejections());
  *out = reg.release();
  return Status::Ok;
}

Status Registry::open(uint32_t capacity, core::ClockKind clock, uint32_t event_capacity,
                      Registry **out) {
  Grace::collect();
  // The whole run: slots beyond the capacity stand in for retired ones, so a
  // registry holds its capacity however old the run it is given.
  const uint32_t slots = Space::run_slots(capacity);
  const ArenaLayout a = arena_layout(capacity, slots);
  const PrivateLayout p(a.layout, slots, event_capacity);
  Owned reg(new (std::nothrow) Registry());
  if (!reg || !reg->reserve_private(p.layout.size())) return Status::NoMemory;
  reg->capacity_ = capacity;
  reg->slots_ = slots;
  if (const Status st = reg->claim_run(); st != Status::Ok) return st;
  reg->clock_.kind = clock;
  if (clock == core::ClockKind::Monotonic) reg->clock_.measure_slack();
  void *arena = reg->private_;
  reg->place(arena, a, a.log2_buckets);
  reg->jitter_seed_ = jitter_seed(reg.get()) + reg->base_;
  reg->held_ = reg->held_all_ = at<std::atomic<uint64_t>>(arena, p.held_at);
  reg->events_.emplace(at<EventQueue::Cell>(arena, p.events_at), p.event_cells);
  return publish(std::move(reg), out);
}

Status Registry::open_shared(const FileRequest &req, uint32_t event_capacity, Registry **out,
                             FileError *err) {
  Grace::collect();
  FileRequest r = req;
  r.arena_bytes = &arena_bytes;
  MappedFile file;
  if (!open_file(r, &file, err)) return Status::FileError;
  // In the mapping, which the attachment keeps.
  FileHeader &h = *file.header();
  const ArenaLayout a = arena_layout(h.capacity, h.slots);
  const PrivateLayout p(Layout{}, h.slots, event_capacity);
  Owned reg(new (std::nothrow) Registry());
  if (!reg || !reg->reserve_private(p.layout.size())) return Status::NoMemory;
  reg->capacity_ = h.capacity;
  reg->slots_ = h.slots;
  // Mapped over where files are mapped in place; else the run's own lines
  // are written when it closes (Space::unmap_shared_run).
  if (const Status st = reg->claim_run(platform::kMapsFilesInPlace, place_tag_of(file));
      st != Status::Ok)
    return st;
  reg->held_ = at<std::atomic<uint64_t>>(reg->private_, p.held_at);
  reg->file_.emplace(std::move(file), FileLayout::of(h.slots, a.layout.size()), reg->base_,
                     reg->slots_, reg->held_);
  if (!reg->file_->map_run()) return Status::NoMemory;
  reg->hot_ = reg->file_->lines();
  reg->totals_ = reg->file_->totals();
  reg->counts_in_totals_ = !platform::kMapsFilesInPlace;
  reg->clock_.kind = core::ClockKind(h.clock);
  reg->clock_.manual = &h.manual_ns;
  reg->clock_.offset_ns = h.clock_offset_ns;
  if (reg->clock_.kind == core::ClockKind::Monotonic) reg->clock_.measure_slack();
  reg->place(reg->file_->arena(), a, a.log2_buckets);
  reg->jitter_seed_ = h.jitter_seed;
  reg->held_all_ = reg->file_->held_words();
  reg->events_.emplace(at<EventQueue::Cell>(reg->private_, p.events_at), p.event_cells);
  if (const char *damaged = reg->damaged_part()) {
    err->kind = FileError::Corrupt;
    snprintf(err->message, sizeof err->message,
             "%s: the file's %s are damaged (an index out of range)", req.path, damaged);
    return Status::FileError;
  }
  reg->finish_left_work();
  if (!reg->file_->join()) return Status::NoFileStripes;
  return publish(std::move(reg), out);
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

bool Registry::unpublish(Registry *reg) {
  Registry *expected = reg;
  return table_[reg->id_].compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst);
}

void Registry::close(Registry *reg) {
  // The next registry with this id has another generation, so a pointer to
  // this one stays refused (capi/resolve.cpp).
  generation_[reg->id_].fetch_add(1, std::memory_order_release);
  Space::set_lean_rejections(reg->base_, reg->slots_, false);
  if (reg->shared()) {
    // A shared registry's breakers live on in the file.
    reg->file_->leave();
  } else {
    // Lives end, so the quiet paths (which never announce themselves)
    // refuse every handle into it from here on. A create racing this close
    // ends its own breaker's life (create()).
    reg->retire_lives();
  }
  Grace::retire([](void *r) { give_back(static_cast<Registry *>(r)); }, reg);
}

void Registry::retire_lives() {
  for (uint32_t i = 0, end = free_->high_water(); i < end; ++i) breaker(i).retire();
}

void Registry::give_back(Registry *reg) {
  // No call is inside it any more: a life a create began while it closed
  // ends now, before its slots go on to the next registry with their
  // incarnations, so every handle into this one stays stale.
  if (!reg->shared()) reg->retire_lives();
  delete reg;
}

Status Registry::create(std::string_view name, const core::Config &cfg, uint64_t *handle) {
  // The home bucket is a cache miss of its own in a large registry: its
  // load runs while the slot is set up.
  const uint64_t hash = name.empty() ? 0 : NameIndex::hash(name);
  if (!name.empty()) index_->prefetch(hash);
  // Known before a slot is taken: the first call in a process reads /proc.
  const uint64_t creating = shared() ? ProcessId::self() | Pending::kCreating : 0;
  std::optional<uint32_t> index = free_->pop();
  // A retired slot (core::StateWord::ended) is never handed out again; one
  // from an earlier registry's run may still come up fresh here. (A damaged
  // file's free list may hand out retired slots for good: at most one try
  // per slot, then the registry is full.)
  for (uint32_t tries = 0;
       index && core::StateWord::retired(hot_[*index].word.load(std::memory_order_acquire));
       ++tries) {
    if (tries == slots_) return Status::Full;
    retire_slot();
    index = free_->pop();
  }
  if (!index) return Status::Full;
  const uint32_t i = *index;
  // Ours alone from here: recorded at once, so that what a death here
  // leaves is found (Pending).
  if (creating != 0) pending_->store(i, creating);
  auto give_back = [&] {
    if (creating != 0) pending_->store(i, 0);
    free_->push(i);
  };
  // The slot is ours alone until begin_life publishes it. Every breaker
  // holds one configuration entry and at most one window block, so neither
  // runs out below the capacity.
  const std::optional<uint32_t> config = configs_->acquire(cfg);
  if (!config) {
    give_back();
    return Status::Full;
  }
  std::optional<uint32_t> window = WindowPool::kNoWindow;
  if (cfg.recorded()) window = windows_.take(cfg.window_shape().buckets, cfg.slow_call_ns != 0);
  if (!window) {
    configs_->release(*config);
    give_back();
    return Status::Full;
  }
  slot_refs_[i].store(SlotRefs::pack(*config, *window), std::memory_order_relaxed);
  names_->write(i, name);
  // This life's counts start where the slot's last life left them. A slot
  // never counted in leaves its base zero and untouched, so a fresh
  // registry's bases cost no memory; a slot that never held a life (its
  // word still zero) has no counts to sum, which spares a large
  // registry's creates a pass over every stripe.
  if (hot_[i].word.load(std::memory_order_acquire) != 0) {
    const Counts now = settled_counts(i);
    if (std::any_of(std::begin(now.n), std::end(now.n), [](uint64_t n) { return n != 0; }))
      for (unsigned k = 0; k < unsigned(core::Counter::Count); ++k)
        counts_base_[i][k].store(now.n[k], std::memory_order_relaxed);
  }
  if (!name.empty()) {
    const NameIndex::Insert inserted = index_->insert(name, hash, i);
    if (inserted != NameIndex::Insert::Ok) {
      names_->release(i);
      release_refs(i);
      give_back();
      return inserted == NameIndex::Insert::Exists ? Status::Exists : Status::Full;
    }
  }
  return begin_life(i, cfg, creating, handle);
}

Status Registry::begin_life(uint32_t i, const core::Config &cfg, uint64_t creating,
                            uint64_t *handle) {
  const uint32_t incarnation =
      core::StateWord::incarnation(hot_[i].word.load(std::memory_order_acquire));
  breaker(i).begin_life(incarnation, cfg);
  const bool open = still_open(i);
  // close() ran meanwhile and may not have seen this life begin: no handle
  // of it leaves, as one could name the breaker a later registry makes in
  // this slot. A private registry's breaker ends; a shared one's lives on
  // in its file, as every breaker there does.
  if (!open && !shared()) {
    breaker(i).retire();
    return Status::BadHandle;
  }
  // A destroy may have taken the record over already (destroy()).
  if (creating != 0) pending_->clear_create(i, creating);
  if (!open) return Status::BadHandle;
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
  // In a shared registry the name may be held up by a damaged file, which
  // no other thread will ever set right: after a second of trying, it says
  // so rather than spin for good.
  const uint64_t give_up_at = shared() ? platform::monotonic_ns() + 1'000'000'000 : 0;
  for (uint32_t tries = 1;; ++tries) {
    if (give_up_at != 0 && tries % 1024 == 0 && platform::monotonic_ns() > give_up_at)
      return Status::NameHeldUp;
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

bool Registry::config_of(uint32_t index, uint32_t incarnation, core::Config *out) const {
  const uint64_t w = hot_[index].word.load(std::memory_order_acquire);
  if (!core::StateWord::alive_in(w, incarnation)) return false;
  *out = config(index).load();
  return same_life(index, w);
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
  const uint64_t destroying = shared() ? ProcessId::self() | Pending::kDestroying : 0;
  if (destroying != 0 && !pending_->take(i, incarnation, destroying)) return Status::BadHandle;
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
  // Before the push: the slot's next create records its own.
  if (destroying != 0) pending_->store(i, 0);
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

std::optional<Counts> Registry::raw_counts(uint32_t index, uint32_t used, uint64_t *seen,
                                           bool around) const {
  const uint32_t slot = base_ + index;
  const FileAttachment *file = file_ ? &*file_ : nullptr;
  auto sequence = [&](uint32_t s) -> const std::atomic<uint64_t> & {
    return file != nullptr ? file->header().sequence[s].n : Space::sequence(s).n;
  };
  // A fold anywhere between the two readings moves counts between a cell
  // and the totals, which this would see twice or not at all (core::fold).
  bool folding = false;
  for (uint32_t s = 0; s < used; ++s) {
    seen[s] = sequence(s).load(std::memory_order_acquire);
    folding |= (seen[s] & 1) != 0 && (file == nullptr || !file->skips_fold(s, seen[s]));
  }
  if (folding && !around) return std::nullopt;
  Counts c{};
  const core::Totals &totals = totals_[index];
  // Acquire loads (plain loads on x86-64): a count seen here that a fold
  // moved, or that was made after one, shows the fold's sequence change
  // below.
  for (unsigned k = 0; k < unsigned(core::Counter::Count); ++k)
    c.n[k] = totals.n[k].load(std::memory_order_acquire);
  for (uint32_t s = 0; s < used; ++s) {
    const core::Cell &own = file != nullptr ? file->cell(s, index) : Space::cell(s, slot);
    for (unsigned k = 0; k < core::kCellFields; ++k)
      c.n[k] += own.n[k].load(std::memory_order_acquire);
  }
  for (uint32_t s = 0; s < used && !around; ++s)
    if (sequence(s).load(std::memory_order_relaxed) != seen[s]) return std::nullopt;
  c.trips = hot_[index].trips.load(std::memory_order_relaxed);
  return c;
}

Counts Registry::settled_counts(uint32_t index) {
  // The stripes ever owned: a thread that claims one later counts only
  // calls made during this read, which it may or may not see.
  const uint32_t used = held_stripes();
  static_assert(kFileStripes <= kMaxExclusiveStripes);
  uint64_t seen[kMaxExclusiveStripes];
  std::optional<FileAttachment::OddWatch> watch;  // a shared file's, once a fold takes long
  bool give_up = false;
  for (uint32_t spins = 1;; ++spins) {
    if (const std::optional<Counts> c = raw_counts(index, used, seen, give_up)) return *c;
    // A fold is a few instructions; its thread may have been preempted,
    // and then this waits for it to run, without a system call. In a
    // shared registry it may be a process that died in the middle of one:
    // now and then, this finishes the folds of dead owners.
    platform::spin_pause();
    if (file_ && spins % 4096 == 0) give_up = file_->repair_stuck_folds(seen, used, watch);
  }
}

Counts Registry::counts(uint32_t index) {
  Counts c = settled_counts(index);
  for (unsigned k = 0; k < unsigned(core::Counter::Count); ++k)
    c.n[k] -= counts_base_[index][k].load(std::memory_order_relaxed);
  return c;
}

}  // namespace lazybreaker::registry
