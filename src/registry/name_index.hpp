// A lock-free map from breaker names to slot indices: open addressing with
// linear probing over a fixed table of 64-bit buckets, index based so that it
// can live in a mapped file.
//
// Buckets are NameBucket words (registry/words.hpp). A bucket goes EMPTY ->
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

#include <atomic>
#include <cstdint>
#include <string_view>

#include "registry/words.hpp"

namespace lazybreaker::registry {

// Names live in the registry's slots; the index reads them through this.
class NameStore {
 public:
  static constexpr size_t kWords = 32;  // 256 bytes: up to 255 name bytes and a length byte

  struct Name {
    std::atomic<uint64_t> words[kWords];
  };

  NameStore(Name *names) : names_(names) {}
  void write(uint32_t slot, std::string_view name);
  bool equals(uint32_t slot, std::string_view name) const;
  // Copies the name into buf (size >= 256); returns its length.
  size_t read(uint32_t slot, char *buf) const;

 private:
  Name *names_;
};

class NameIndex {
 public:
  // `buckets` has 2^log2_buckets zeroed entries and outlives the index.
  NameIndex(std::atomic<uint64_t> *buckets, unsigned log2_buckets, const NameStore &names)
      : buckets_(buckets), mask_((1ull << log2_buckets) - 1), names_(names) {}

  static uint64_t hash(std::string_view name);

  enum class Insert { Ok, Exists, Full };
  // The slot's name must already be in the NameStore.
  Insert insert(std::string_view name, uint32_t slot);
  // UINT32_MAX when absent.
  uint32_t find(std::string_view name) const;
  // Removes the entry naming `slot`; false when there is none.
  bool erase(std::string_view name, uint32_t slot);

 private:
  using Kind = NameBucket::Kind;
  static constexpr Kind kEmpty = NameBucket::kEmpty, kClaimed = NameBucket::kClaimed,
                        kNamed = NameBucket::kNamed, kGone = NameBucket::kGone;
  static constexpr uint64_t bucket(uint32_t tag, uint32_t slot, Kind kind) {
    return NameBucket::pack(tag, slot, kind);
  }
  static constexpr Kind kind(uint64_t b) { return NameBucket::kind(b); }
  static constexpr uint32_t tag(uint64_t b) { return NameBucket::tag(b); }
  static constexpr uint32_t slot(uint64_t b) { return NameBucket::slot(b); }

  std::atomic<uint64_t> &at(uint64_t home, uint64_t distance) const {
    return buckets_[(home + distance) & mask_];
  }
  bool names_match(uint64_t b, uint32_t tag, std::string_view name) const {
    return this->tag(b) == tag && names_.equals(slot(b), name);
  }

  std::atomic<uint64_t> *buckets_;
  uint64_t mask_;
  const NameStore &names_;
  std::atomic<uint64_t> longest_probe_{0};  // no entry sits farther from its home bucket
};

}  // namespace lazybreaker::registry
