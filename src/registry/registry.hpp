// A registry: a fixed-capacity run of breaker slots in the process-wide
// space (registry/space.hpp), and an arena of what only it reads: their
// configurations, names, windows, a free list and a name index, all
// addressed by index so that the same layout can later live in a mapped
// file. Knows nothing of policies beyond storing each breaker's
// configuration. Its own indexes run from 0; handles carry base() + index.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "core/breaker.hpp"
#include "registry/config_table.hpp"
#include "registry/event_queue.hpp"
#include "registry/file_attachment.hpp"
#include "registry/free_list.hpp"
#include "registry/handle.hpp"
#include "registry/name_index.hpp"
#include "registry/repair.hpp"
#include "registry/space.hpp"
#include "registry/window_pool.hpp"
#include "registry/words.hpp"

namespace lazybreaker::registry {

enum class Status {
  Ok,
  Full,
  NoMemory,
  Exists,
  NotFound,
  BadHandle,
  TooManyRegistries,
  SpaceFull,
  ExistsOtherwise,  // the name is taken by a breaker of another configuration
  FileError,        // opening a shared registry's file failed: its FileError says why
  NoFileStripes,    // the file's counter stripes are all taken by live processes
  NameHeldUp,       // a shared registry's name index holds a name no breaker has
};

// What a registry's structures change besides their arrays, at the start of
// its arena (zero-filled: a fresh registry), so that a shared registry's
// lives in its file.
struct RegistryState {
  FreeList::State free_slots;
  ConfigTable::State configs;
  NameIndex::State longest_name_probe;
  WindowPool::State windows;
  alignas(64) NameStore::State names;
};

struct Counts {
  uint64_t n[unsigned(core::Counter::Count)];
  uint64_t trips;
};

enum EventMask : uint32_t { kTransitionEvents = 1, kRejectionEvents = 2 };

class Registry final {
 public:
  static constexpr uint32_t kDefaultCapacity = 65536;
  static constexpr uint32_t kDefaultEventCapacity = 1024;

  // `event_capacity` is rounded up to a power of two.
  static Status open(uint32_t capacity, core::ClockKind clock, uint32_t event_capacity,
                     Registry **out);
  // Opens the shared registry in the file `req` names (registry/shared_file.hpp).
  static Status open_shared(const FileRequest &req, uint32_t event_capacity, Registry **out,
                            FileError *err);
  // Takes `reg` out of reach of every call that has not found it yet;
  // false if a racing close took it first. The first step of a close.
  static bool unpublish(Registry *reg);
  // Makes every handle into the unpublished `reg` stale, and frees it once
  // no call is inside it any more (registry/grace.hpp). A shared registry's
  // breakers live on in its file.
  static void close(Registry *reg);
  bool shared() const { return file_.has_value(); }
  // The file's header, for a shared registry.
  const FileHeader *file_header() const { return file_ ? &file_->header() : nullptr; }
  // The open registry with this id, or nullptr.
  static Registry *by_id(uint32_t id) {
    return id < kMaxRegistryIds ? table_[id].load(std::memory_order_acquire) : nullptr;
  }
  // The open registry that holds the live breaker `h` names, and its index
  // there. Hot lines are never unmapped (a file's view, where one is read
  // through, only after the grace of the registry that read it), so a
  // handle whose breaker is not alive is refused before any registry is
  // looked at: a closed registry's handle never reaches the registry that
  // took its slots, however soon that one closes in turn. Under a
  // Grace::Reading.
  static Registry *holding(uint64_t h, uint32_t *index) {
    if (!Handle::well_formed(h) ||
        !core::StateWord::alive_in(Space::line(h)->word.load(std::memory_order_acquire),
                                   Handle::incarnation(h)))
      return nullptr;
    Registry *r = by_id(Space::owner(Handle::index(h)));
    if (r == nullptr || Handle::index(h) - r->base_ >= r->slots_) return nullptr;
    *index = Handle::index(h) - r->base_;
    return r;
  }
  // Ids of open registries; 0 is none. A closed registry's id is reused,
  // in the next generation.
  static constexpr uint32_t kMaxRegistryIds = 1u << 16;
  // How many times registry `id` has closed.
  static uint32_t generation(uint32_t id) {
    return id < kMaxRegistryIds ? generation_[id].load(std::memory_order_acquire) : 0;
  }

  uint32_t id() const { return id_; }
  uint32_t base() const { return base_; }
  core::Clock &clock() { return clock_; }
  uint32_t capacity() const { return capacity_; }
  uint64_t handle(uint32_t index, uint32_t incarnation) const {
    return Handle::make(incarnation, base_ + index);
  }

  // `events` receives its transitions (nullptr: none are reported).
  // The slot's configuration and window are those of its current life for a
  // caller that holds a handle from its create (the create's stores happen
  // before); a caller racing a destroy or a create may get another life's,
  // and then fails the incarnation check.
  core::Breaker breaker(uint32_t index, core::EventSink *events = nullptr) {
    return make_breaker(index, events, {});
  }
  // breaker() for what reads or records a window's outcomes (cb_done,
  // cb_stats_get): it also sees where the threads hold successes back.
  core::Breaker recorder(uint32_t index, core::EventSink *events = nullptr) {
    return make_breaker(index, events, held(index));
  }
  // Where the threads hold back successes of the breaker at `index`
  // (core::HeldSuccesses): one word per exclusive stripe.
  core::HeldCells held(uint32_t index) {
    const uint32_t exclusive = Space::exclusive_stripes();
    const uint32_t mine = detail::t_stripe_plus_one - 1;
    return {
        mine < exclusive && !counts_in_totals() ? &held_[size_t(mine) * slots_ + index] : nullptr,
        &held_all_[index], slots_, held_stripes()};
  }
  // The success of a call on the window breaker at `index` whose state word
  // is `w` (mode kClosedWindowMode; ticket and life checked against it), held
  // back in the calling thread's own word if it need not settle
  // (core::Breaker::holds_success); false says nothing. The caller counts it.
  [[gnu::always_inline]] bool holds_success(uint32_t index, uint64_t w) {
    const uint32_t mine = detail::t_stripe_plus_one - 1;
    if (mine >= Space::exclusive_stripes() || counts_in_totals()) return false;
    core::HeldCells own;
    own.own = &held_[size_t(mine) * slots_ + index];
    return make_breaker(index, nullptr, own).holds_success(w);
  }
  // The registry that owns the slot of space index `index`, or nullptr.
  static Registry *owning(uint64_t index) {
    Registry *r = by_id(Space::owner(uint32_t(index)));
    // A registry that closed meanwhile may have passed its id to one with
    // another run.
    return r != nullptr && index - r->base_ < r->slots_ ? r : nullptr;
  }
  // Where a call on the breaker at `index` counts: the calling thread's
  // stripe, or (counts_in_totals()) the breaker's totals in the file.
  core::Tally tally(uint32_t index) {
    return counts_in_totals() ? core::Tally{nullptr, nullptr, &totals_[index]}
                              : Space::tally(base_ + index);
  }

  // Admits and counts a call on the breaker in its `incarnation`-th life if
  // it is CLOSED or DISABLED (its ticket: core::Breaker::call_ticket, with
  // the precise clock's time only if it tracks slow calls), into `*issued`;
  // false says nothing. `own_cells` as for rejects_early().
  [[gnu::always_inline]] bool admits_call(uint32_t index, uint32_t incarnation, uintptr_t own_cells,
                                          uint64_t *issued) {
    const uint64_t w = hot_[index].word.load(std::memory_order_acquire);
    const core::State st = core::StateWord::state(w);
    if ((st != core::State::Closed && st != core::State::Disabled) ||
        !core::StateWord::alive_in(w, incarnation))
      return false;
    const uint64_t slow = config(index).slow_call_ns();
    *issued = core::Breaker::call_ticket(
        w, core::Breaker::call_start(slow, slow != 0 ? clock_.now() : 0));
    count(index, own_cells, core::Counter::Admitted);
    return true;
  }

  // Rejects and counts a call on the breaker in its `incarnation`-th life
  // if the core can tell from the hot line alone (core::Breaker::rejects_early)
  // and nobody asked for rejection events; false says nothing. `own_cells`
  // is Space::own_cells() as the caller read it (0: none).
  bool rejects_early(uint32_t index, uint32_t incarnation, uintptr_t own_cells) {
    const uint64_t w = hot_[index].word.load(std::memory_order_acquire);
    if (core::StateWord::state(w) == core::State::Closed ||
        (event_mask() & kRejectionEvents) != 0 || !core::StateWord::alive_in(w, incarnation) ||
        !breaker(index).rejects_early(w))
      return false;
    count(index, own_cells, core::Counter::Rejected);
    return true;
  }
  // Counts in the thread's own cells if it has them (`own_cells` != 0).
  void count(uint32_t index, uintptr_t own_cells, core::Counter c) {
    if (own_cells != 0 && !counts_in_totals())
      Space::bump_own(own_cells, uint64_t(base_ + index) * sizeof(core::Cell), c);
    else
      tally(index).add(c);
  }

  // `name` empty = anonymous.
  Status create(std::string_view name, const core::Config &cfg, uint64_t *handle);
  Status lookup(std::string_view name, uint64_t *handle) const;
  // The breaker named `name` (not empty) if its configuration is `cfg`
  // (ExistsOtherwise if not), else a new one: of racing calls with one name,
  // one creates and the others find it.
  Status get_or_create(std::string_view name, const core::Config &cfg, uint64_t *handle);
  Status destroy(uint32_t index, uint32_t incarnation);
  // Counters since the breaker was created; the caller validates the handle.
  // Not const: in a shared registry, a fold a dead or stuck process left
  // in flight is repaired on the way (settled_counts).
  Counts counts(uint32_t index);
  // The name of the breaker in its `incarnation`-th life (into buf, of
  // more than NameStore::kMaxBytes bytes, with a terminator); false if that
  // life is over (or ended while the name was read: its space may hold
  // another breaker's name by then).
  bool name(uint32_t index, uint32_t incarnation, char *buf, size_t *len) const;
  // The configuration of the breaker at `index`, if it is alive in life
  // `incarnation` (false if not).
  bool config_of(uint32_t index, uint32_t incarnation, core::Config *out) const;
  // Handles of the live breakers, up to `max`; returns how many there are.
  size_t list(uint64_t *out, size_t max) const;
  // How many configurations the live breakers share among them (each
  // distinct one is stored once).
  uint32_t configs_in_use() const { return configs_->in_use(); }

  EventQueue &events() { return *events_; }
  uint32_t event_mask() const { return event_mask_.load(std::memory_order_relaxed); }
  void set_event_mask(uint32_t mask);

 private:
  Registry() = default;
  // Gives back what it holds: the run, its private memory, its file.
  ~Registry();
  Registry(const Registry &) = delete;
  Registry &operator=(const Registry &) = delete;
  // A registry being opened, given back whole if the open fails.
  struct Discard {
    void operator()(Registry *r) const { delete r; }
  };
  using Owned = std::unique_ptr<Registry, Discard>;
  // Reserves `bytes` of private memory (the whole arena, or a shared
  // registry's own held words and event queue); false if it cannot.
  bool reserve_private(size_t bytes);
  // Makes the opened `reg` the open registry of its id, into `*out`.
  static Status publish(Owned reg, Registry **out);
  // The stripes whose held words and cells a reader sums: the process's
  // stripes ever owned, or the file's (at most its kFileStripes, whatever
  // the file's word says).
  uint32_t held_stripes() const {
    return shared() ? file_->stripes_used() : std::min(stripes_used(), Space::exclusive_stripes());
  }
  // The arena's layout for `capacity` breakers in `slots` slots (registry/arena.hpp;
  // these three are arena.cpp's).
  struct ArenaLayout;
  static ArenaLayout arena_layout(uint32_t capacity, uint32_t slots);
  static size_t arena_bytes(uint32_t capacity, uint32_t slots);
  // Sets up the structures over an arena of that layout at `arena`.
  void place(void *arena, const ArenaLayout &layout, unsigned log2_buckets);
  // Takes an id and a run of the space; NoMemory etc. if it cannot.
  // `file_tag`: a shared registry's file (place_tag_of), else 0.
  Status claim_run(bool mapped_over = false, uint64_t file_tag = 0);
  void give_up_run();

  // Crash repair (registry/repair.cpp). What of a registry file's arena
  // holds an index out of range (which a call would follow out of its
  // array), or nullptr if nothing does.
  const char *damaged_part() const;
  // Given back: the slots whose create or destroy a dead process left
  // (PendingRecords).
  void finish_left_work();

  // The breaker at `index`, with its configuration and window found through
  // the slot's references.
  [[gnu::always_inline]] core::Breaker make_breaker(uint32_t index, core::EventSink *events,
                                                    const core::HeldCells &held) {
    const uint64_t refs = slot_refs_[index].load(std::memory_order_relaxed);
    return core::Breaker(hot_[index], configs_->cell(SlotRefs::config(refs)),
                         windows_.cells(SlotRefs::window(refs)), clock_, jitter_seed_ + index,
                         events, held);
  }
  // A slot has had its last life (after 2^20 breakers) and is never handed
  // out again: a spare slot of the run (whole chunks of the space) stands in
  // for it, while the run has spares.
  void retire_slot();
  // Ends every life in the run (a private registry's close).
  void retire_lives();
  // What close() held back, once the grace has passed.
  static void give_back(Registry *reg);
  // Whether this registry is still the open one of its id, once the life
  // slot `index` began is published: sequentially consistent, so that
  // close() (which unpublishes, then ends every life) and a racing create
  // cannot both miss each other.
  bool still_open(uint32_t index) const {
    hot_[index].word.fetch_add(0, std::memory_order_seq_cst);
    return table_[id_].load(std::memory_order_seq_cst) == this;
  }
  // One read of the counts of the breaker at `index`, summed over `used`
  // stripes, if no fold moved counts between a cell and the totals meanwhile
  // (a seqlock's reader over every used stripe's sequence word, as first read
  // into `seen`); nullopt if one may have. `around`: reads around the folds
  // in flight. Reads only.
  std::optional<Counts> raw_counts(uint32_t index, uint32_t used, uint64_t *seen,
                                   bool around) const;
  // raw_counts once no fold is in flight: waits for it, and in a shared
  // registry repairs the folds that do not end (FileAttachment::
  // repair_stuck_folds).
  Counts settled_counts(uint32_t index);
  const core::ConfigCell &config(uint32_t index) const {
    return configs_->cell(SlotRefs::config(slot_refs_[index].load(std::memory_order_relaxed)));
  }
  // Gives back what slot `index` refers to (its life has ended).
  void release_refs(uint32_t index);
  // create()'s last step: the life of slot `i` (set up for `cfg`, its
  // create recorded as `creating` in a shared registry's file) begins, and
  // its handle goes to `*handle` unless close() ran meanwhile (BadHandle).
  Status begin_life(uint32_t i, const core::Config &cfg, uint64_t creating, uint64_t *handle);
  // counts_in_totals_, known false at compile time where files are mapped
  // in place: no branch for it on Linux's paths.
  bool counts_in_totals() const { return !platform::kMapsFilesInPlace && counts_in_totals_; }
  // Whether a rejection here needs nothing of the registry (Space::lean_rejections).
  bool lean_rejections() const {
    return clock_.kind == core::ClockKind::Monotonic && clock_.offset_ns == 0 &&
           (event_mask() & kRejectionEvents) == 0;
  }
  // Whether slot `index` still holds the life whose state word was `w`
  // (after name reads, whose acquire loads keep this load after them).
  bool same_life(uint32_t index, uint64_t w) const;

  static std::atomic<Registry *> table_[kMaxRegistryIds];
  static std::atomic<uint32_t> generation_[kMaxRegistryIds];

  uint32_t id_ = 0;
  uint32_t base_ = 0;
  uint32_t capacity_ = 0;  // breakers alive at once, at most
  uint32_t slots_ = 0;     // the run: whole chunks of the space
  core::Clock clock_;
  core::Hot *hot_ = nullptr;        // [slots_], in the space or in the file's view
  core::Totals *totals_ = nullptr;  // [slots_], likewise
  // A shared registry whose file is not mapped in place
  // (platform::kMapsFilesInPlace): its calls count in the file's totals, as
  // a thread without a stripe of its own does, and no success is held back
  // (the threads' stripes and held words are the process's own there).
  bool counts_in_totals_ = false;
  // Per slot: its configuration entry and window block (SlotRefs).
  std::atomic<uint64_t> *slot_refs_ = nullptr;
  std::optional<ConfigTable> configs_;
  // Different for each registry, and each run: the breakers' jitter seeds
  // are this + their index in the registry (core::Breaker).
  uint64_t jitter_seed_ = 0;
  std::atomic<uint64_t> (*counts_base_)[unsigned(core::Counter::Count)] = nullptr;
  WindowPool windows_;
  // [kMaxExclusiveStripes][slots_]: a thread's own, by its process stripe.
  std::atomic<uint64_t> *held_ = nullptr;
  // [stripes][slots_]: every thread's, by stripe: held_, or a shared
  // registry's file.
  std::atomic<uint64_t> *held_all_ = nullptr;
  // The private memory (the whole arena, or a shared registry's own held
  // words and event queue).
  void *private_ = nullptr;
  size_t private_size_ = 0;
  std::optional<PendingRecords> pending_;  // a shared registry's, in its file
  std::optional<EventQueue> events_;
  std::atomic<uint32_t> event_mask_{kTransitionEvents};
  std::optional<NameStore> names_;
  std::optional<FreeList> free_;
  std::optional<NameIndex> index_;
  // A shared registry's: its file, mapped over its run.
  std::optional<FileAttachment> file_;
};

}  // namespace lazybreaker::registry
