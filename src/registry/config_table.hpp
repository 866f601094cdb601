// A registry's configurations, interned by value: breakers with equal
// configurations share one entry, which each breaker's slot names by its
// index (registry/words.hpp, SlotRefs). An entry is freed when its last
// breaker is destroyed. Lock-free and index based, so that it can live in
// a mapped file: no pointer in it, no lock a killed process could hold.
//
// Entries come from a free list of `capacity` (every breaker could have a
// configuration of its own; a registry holds at most `capacity` breakers,
// and each holds one reference). A hash index of at least twice as many
// buckets finds them: open addressing with linear probing, buckets
// TaggedBucket words, the tag the top of the configuration's hash.
//
// Taking a reference: find a NAMED bucket with the tag, load the entry's
// ConfigRefs, compare the configuration, and add one to the references if
// they are still what was loaded. An entry's configuration changes only
// while no breaker holds it, and the entry's life moves on when the last
// one lets go, so a reference taken this way is to an entry that held the
// configuration all along. Two threads that create the first breakers of
// one configuration at the same instant may each make an entry of it: both
// are correct, and each is freed with its last breaker.
//
// A reader racing a destroy may read an entry that is being reused for
// another configuration (ConfigCell: relaxed words); it then fails the
// incarnation check, as with any recycled slot.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "core/breaker.hpp"
#include "registry/free_list.hpp"

namespace lazybreaker::registry {

class ConfigTable {
 public:
  // `configs`, `refs` (ConfigRefs words) and `links` have room for
  // `capacity` entries, `buckets` for 2^log2_buckets >= 2 x capacity; all
  // zero-filled, outliving the table.
  // What the table changes besides its arrays (zero-filled: empty).
  struct State {
    FreeList::State free;
    std::atomic<uint64_t> longest_probe{0};  // no NAMED bucket sits farther from its home
  };

  ConfigTable(State &state, core::ConfigCell *configs, std::atomic<uint64_t> *refs,
              std::atomic<uint32_t> *links, std::atomic<uint64_t> *buckets, unsigned log2_buckets,
              uint32_t capacity)
      : configs_(configs),
        refs_(refs),
        buckets_(buckets),
        mask_((uint64_t(1) << log2_buckets) - 1),
        free_(state.free, links, capacity, capacity),
        longest_probe_(state.longest_probe),
        capacity_(capacity) {}

  // The entry holding `cfg`, with one more reference (made if none holds
  // it); nullopt if every entry is taken.
  std::optional<uint32_t> acquire(const core::Config &cfg);
  // Gives back a reference acquire() returned; the last one frees the entry.
  void release(uint32_t entry);
  // The configuration in `entry` (any index acquire() ever returned, or 0;
  // a damaged registry file's other index reads entry 0).
  const core::ConfigCell &cell(uint32_t entry) const {
    return configs_[entry < capacity_ ? entry : 0];
  }
  // Whether every bucket, link and head is in range (a registry file's,
  // checked when it is opened).
  bool consistent(uint32_t capacity) const;
  // How many entries some breaker holds (for tests and introspection; O(entries)).
  uint32_t in_use() const;

  static uint64_t hash(const core::ConfigCell::Words &w);

 private:
  std::optional<uint32_t> find(const core::ConfigCell::Words &w, uint64_t hash);
  void publish(uint32_t entry, uint64_t hash);
  std::atomic<uint64_t> &at(uint64_t hash, uint64_t distance) const {
    return buckets_[(hash + distance) & mask_];
  }

  core::ConfigCell *configs_;  // two cache lines each, found by a shift
  std::atomic<uint64_t> *refs_;
  std::atomic<uint64_t> *buckets_;
  uint64_t mask_;
  FreeList free_;
  std::atomic<uint64_t> &longest_probe_;
  uint32_t capacity_;
};

}  // namespace lazybreaker::registry
