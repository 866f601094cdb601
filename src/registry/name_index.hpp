// A lock-free map from breaker names to slot indices: open addressing with
// linear probing over a fixed table of 64-bit buckets, index based so that it
// can live in a mapped file.
//
// Buckets are TaggedBucket words (registry/words.hpp). A bucket goes EMPTY ->
// CLAIMED -> NAMED -> GONE -> CLAIMED ..., never back to EMPTY, so an EMPTY
// bucket ends every probe sequence that reaches it.
//
// Names are unique without a lock: an inserter claims the first EMPTY or GONE
// bucket of its probe sequence, then scans the sequence for the same name.
// It gives up if it finds the name NAMED anywhere, or CLAIMED nearer the home
// bucket than its own claim; a CLAIMED twin farther from home it marks GONE,
// so that twin's final CLAIMED -> NAMED exchange fails. Since every inserter
// claims before it scans (sequentially consistent), of two inserters of the
// same name at least one sees the other, and both rules let at most one win.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include "registry/words.hpp"

namespace lazybreaker::registry {

// The registry's breaker names, each in about its own length: a slot holds
// a NameRef (registry/words.hpp) to ceil(length / 8) words of a pool, so a
// 32-byte name costs 40 bytes, not the 256 of a fixed place for the longest.
// Index based (word offsets, never pointers), so that it can live in a
// mapped file, and lock-free: cb_create and cb_destroy run at once from
// many threads, and a process killed at any instruction holds nothing.
//
// Space comes, in this order, from a free list per size class (1..32 words:
// a destroyed breaker's name is reused by the next name of its class), from
// a bump pointer over a pool of capacity x 32 words (as if every live name
// were 255 bytes), and last from the slot's own 32 words, reserved for each
// slot beside the pool. A class's free space serves no other class, so
// create/destroy cycles with shifting lengths can use the whole pool up;
// the slot's own words then take the name, so a name always fits: writing
// one never fails. Only touched pages cost memory (the reservation is
// address space), and the slots' own words are touched only in that case.
//
// Readers (lookup, cb_name, metrics, events) race a destroy: every word is
// atomic, so a reader of a destroyed breaker's name reads valid memory,
// perhaps a name the space was reused for, and then fails its caller's
// check that the breaker's life did not change. Stores release and loads
// acquire: a reader that sees a word of a later name also sees that the
// life whose name it meant to read has ended (a name's space is released
// after its breaker's life ends, and the free lists hand it on with
// release/acquire).
class NameStore {
 public:
  static constexpr uint32_t kMaxBytes = 255;
  static constexpr uint32_t kMaxWords = (kMaxBytes + 7) / 8;

  // Words a store needs for `slots` slots of which at most `capacity` have
  // a name at once.
  static constexpr size_t words_needed(uint32_t capacity, uint32_t slots) {
    return (size_t(capacity) + slots) * kMaxWords;
  }

  // One Treiber stack of free pool space per size class (FreeListHead words,
  // registry/words.hpp: a free record's first word links to the next), 64
  // bytes apart so that creates of different classes do not contend.
  struct alignas(64) Head {
    std::atomic<uint64_t> word{0};
  };
  // What the store changes besides its words (zero-filled: empty), apart
  // from what every read reads.
  struct State {
    std::atomic<uint64_t> carved{0};
    std::atomic<uint64_t> in_own_words{0};
    Head free[kMaxWords + 1];
  };

  // `state`, `refs` (`slots` zeroed entries) and `words` (words_needed()
  // zeroed words) outlive the store.
  NameStore(State &state, std::atomic<uint64_t> *refs, std::atomic<uint64_t> *words,
            uint32_t capacity, uint32_t slots)
      : refs_(refs),
        words_(words),
        pool_words_(size_t(capacity) * kMaxWords),
        end_(words_needed(capacity, slots)),
        slots_(slots),
        carved_(state.carved),
        in_own_words_(state.in_own_words),
        free_(state.free) {}
  NameStore(const NameStore &) = delete;
  NameStore &operator=(const NameStore &) = delete;

  // Gives slot `slot` (the caller's alone, without a name) the name `name`
  // (at most kMaxBytes bytes; empty = anonymous).
  void write(uint32_t slot, std::string_view name);
  // Takes slot `slot`'s name away (the caller's alone) for reuse.
  void release(uint32_t slot);
  bool equals(uint32_t slot, std::string_view name) const;
  // Copies the name into buf (size > kMaxBytes) with a terminator; returns
  // its length.
  size_t read(uint32_t slot, char *buf) const;
  // Whether the store's heads are in range (a registry file's, checked
  // when it is opened; the free records' links are checked as they are used).
  bool consistent(uint32_t slots) const;

  // For tests: pool words handed out from the bump pointer so far, pool
  // words now on the free lists (walks them: only when nobody writes), and
  // names now kept in their slot's own words.
  uint64_t pool_words_carved() const { return carved_.load(std::memory_order_relaxed); }
  uint64_t pool_words_free() const;
  uint64_t names_in_own_words() const { return in_own_words_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t words_for(size_t length) { return uint32_t((length + 7) / 8); }
  // Word offset of `words` words for slot `slot`'s next name.
  uint32_t allocate(uint32_t slot, uint32_t words);
  std::optional<uint32_t> pop(uint32_t words);
  void push(uint32_t words, uint32_t offset);

  std::atomic<uint64_t> *refs_;
  std::atomic<uint64_t> *words_;
  size_t pool_words_;  // the pool is words_[0, pool_words_); slot s owns 32 words after it
  size_t end_;
  uint32_t slots_;  // a damaged registry file's index of another slot names no name
  std::atomic<uint64_t> &carved_;
  std::atomic<uint64_t> &in_own_words_;
  Head *free_;
};

// Says whether the slot a bucket names was left in the middle of a create
// or destroy by a process that died (a shared registry's): its bucket may
// then be taken out of the way (PendingRecords, registry/repair.hpp).
class StaleSlots {
 public:
  // `claimed`: the bucket is claimed (an insert in progress), else named.
  virtual bool stale(uint32_t slot, bool claimed) const = 0;

 protected:
  ~StaleSlots() = default;
};

class NameIndex {
 public:
  // No entry sits farther from its home bucket than this (zero: empty).
  using State = std::atomic<uint64_t>;

  // `state` and `buckets` (2^log2_buckets zeroed entries) outlive the index.
  // `stale`, if given, is asked about a twin of a name being inserted.
  NameIndex(State &longest_probe, std::atomic<uint64_t> *buckets, unsigned log2_buckets,
            const NameStore &names, const StaleSlots *stale = nullptr)
      : buckets_(buckets),
        mask_((1ull << log2_buckets) - 1),
        names_(names),
        longest_probe_(longest_probe),
        stale_(stale) {}

  static uint64_t hash(std::string_view name);
  // Starts loading the home bucket of a name of hash `h`, so that a create
  // that does other work first finds it in cache.
  void prefetch(uint64_t h) const { __builtin_prefetch(&at(h, 0), 1); }

  enum class Insert { Ok, Exists, Full };
  // The slot's name must already be in the NameStore; `h` is hash(name).
  Insert insert(std::string_view name, uint64_t h, uint32_t slot);
  // UINT32_MAX when absent.
  uint32_t find(std::string_view name) const;
  // Removes the entry of `slot` under a name of hash `h`; false when there
  // is none.
  bool erase(uint64_t h, uint32_t slot);
  // Whether every bucket names a slot below `slots` (a registry file's).
  bool consistent(uint32_t slots) const;
  // Removes the entries, claimed or named, of `slot` under a name of hash
  // `h`: those a process that died inside a create or destroy left.
  void erase_left(uint64_t h, uint32_t slot);

 private:
  using Kind = TaggedBucket::Kind;
  static constexpr Kind kEmpty = TaggedBucket::kEmpty, kClaimed = TaggedBucket::kClaimed,
                        kNamed = TaggedBucket::kNamed, kGone = TaggedBucket::kGone;
  static constexpr uint64_t bucket(uint32_t tag, uint32_t slot, Kind kind) {
    return TaggedBucket::pack(tag, slot, kind);
  }
  static constexpr Kind kind(uint64_t b) { return TaggedBucket::kind(b); }
  static constexpr uint32_t tag(uint64_t b) { return TaggedBucket::tag(b); }
  static constexpr uint32_t slot(uint64_t b) { return TaggedBucket::index(b); }

  std::atomic<uint64_t> &at(uint64_t home, uint64_t distance) const {
    return buckets_[(home + distance) & mask_];
  }
  // How far from home a probe looks: no farther than the table, whatever
  // a damaged registry file's longest probe says.
  uint64_t probe_limit() const {
    return std::min(longest_probe_.load(std::memory_order_seq_cst), mask_);
  }
  bool names_match(uint64_t b, uint32_t tag, std::string_view name) const {
    return this->tag(b) == tag && names_.equals(slot(b), name);
  }
  // insert()'s steps. Claims the first EMPTY or GONE bucket of the probe
  // sequence of hash `h` with `claimed`: its distance from home, or
  // mask_ + 1 when none is left.
  uint64_t claim(uint64_t h, uint64_t claimed);
  // Whether the bucket `cell` (loaded as `b`) holds a twin of `name` that
  // wins over the claim of `slot` (NAMED, or CLAIMED `nearer` home than
  // ours); a twin that loses, or that a dead process left, is made GONE.
  bool twin_wins(std::atomic<uint64_t> &cell, uint64_t b, uint32_t tag, std::string_view name,
                 uint32_t slot, bool nearer) const;

  std::atomic<uint64_t> *buckets_;
  uint64_t mask_;
  const NameStore &names_;
  std::atomic<uint64_t> &longest_probe_;
  const StaleSlots *stale_;
};

}  // namespace lazybreaker::registry
