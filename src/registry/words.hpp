// The registry's packed 64-bit words, each with its constants and worked
// examples in one place: no shift or mask for them is written elsewhere.
// (The core's words are core/words.hpp; handles are registry/handle.hpp.)
#pragma once

#include <cstdint>

namespace lazybreaker::registry {

// A name-index bucket: [hash tag:32 | slot:24 | unused:6 | kind:2]. The tag
// is the name's hash's top half, so most mismatches are told apart without
// reading the name (registry/name_index.hpp).
struct NameBucket {
  enum Kind : uint64_t { kEmpty = 0, kClaimed = 1, kNamed = 2, kGone = 3 };
  static constexpr unsigned kKindBits = 2, kSlotShift = 8, kSlotBits = 24, kTagShift = 32;
  static constexpr uint64_t kKindMask = (1ull << kKindBits) - 1;
  static constexpr uint64_t kSlotMask = (1ull << kSlotBits) - 1;
  static_assert(kSlotShift + kSlotBits <= kTagShift && kKindBits <= kSlotShift);

  static constexpr uint64_t pack(uint32_t tag, uint32_t slot, Kind kind) {
    return (uint64_t(tag) << kTagShift) | ((slot & kSlotMask) << kSlotShift) | kind;
  }
  static constexpr Kind kind(uint64_t b) { return Kind(b & kKindMask); }
  static constexpr uint32_t tag(uint64_t b) { return uint32_t(b >> kTagShift); }
  static constexpr uint32_t slot(uint64_t b) { return uint32_t((b >> kSlotShift) & kSlotMask); }
  // The tag a name's 64-bit hash gives its buckets.
  static constexpr uint32_t tag_of_hash(uint64_t hash) { return uint32_t(hash >> kTagShift); }
};
static_assert(NameBucket::pack(0xdeadbeef, 0xabcdef, NameBucket::kNamed) == 0xdeadbeefabcdef02ull);
static_assert(NameBucket::kind(NameBucket::pack(1, 2, NameBucket::kGone)) == NameBucket::kGone &&
              NameBucket::slot(NameBucket::pack(1, 0xffffff, NameBucket::kClaimed)) == 0xffffff &&
              NameBucket::tag(NameBucket::pack(7, 3, NameBucket::kEmpty)) == 7);
// Zero-filled memory is an empty bucket.
static_assert(NameBucket::kind(0) == NameBucket::kEmpty);

// A slot's reference to its name in the name store: [unused:24 | length:8 |
// word offset:32]; 0 is the empty name (registry/name_index.hpp). The
// length lives here, not beside the bytes, so that a name of another
// length is told apart without reading the bytes, and one load gives a
// reader the place and the length of one life's name together.
struct NameRef {
  static constexpr unsigned kLengthShift = 32, kLengthBits = 8;
  static constexpr uint64_t kOffsetMask = (1ull << kLengthShift) - 1;
  static constexpr uint64_t kLengthMask = (1ull << kLengthBits) - 1;

  static constexpr uint64_t pack(uint32_t offset, uint32_t length) {
    return (uint64_t(length & kLengthMask) << kLengthShift) | offset;
  }
  static constexpr uint32_t offset(uint64_t r) { return uint32_t(r & kOffsetMask); }
  static constexpr uint32_t length(uint64_t r) {
    return uint32_t((r >> kLengthShift) & kLengthMask);
  }
};
static_assert(NameRef::pack(0x12345678, 0xff) == 0xff'12345678ull);
static_assert(NameRef::offset(NameRef::pack(7, 32)) == 7 &&
              NameRef::length(NameRef::pack(7, 32)) == 32);
// Zero-filled memory is the empty name.
static_assert(NameRef::length(0) == 0);

// The free list's head: [ABA tag:32 | top slot + 1:32]; top 0 is an empty
// stack. Every change adds one to the tag, so a head that was popped and
// pushed back meanwhile never compares equal (registry/free_list.hpp).
struct FreeListHead {
  static constexpr unsigned kTagShift = 32;
  static constexpr uint64_t kTopMask = (1ull << kTagShift) - 1;

  // The head after `h` with `top_plus_one` on top.
  static constexpr uint64_t next(uint64_t h, uint32_t top_plus_one) {
    return (h & ~kTopMask) + (1ull << kTagShift) + top_plus_one;
  }
  static constexpr uint32_t top_plus_one(uint64_t h) { return uint32_t(h & kTopMask); }
  static constexpr uint32_t tag(uint64_t h) { return uint32_t(h >> kTagShift); }
};
static_assert(FreeListHead::top_plus_one(0) == 0);
static_assert(FreeListHead::next(0, 5) == 0x1'00000005ull &&
              FreeListHead::tag(FreeListHead::next(0x7'00000009ull, 0)) == 8 &&
              FreeListHead::top_plus_one(FreeListHead::next(0x7'00000009ull, 0)) == 0);
// The tag wraps without touching the top.
static_assert(FreeListHead::next(0xffffffff'00000001ull, 2) == 2);

// A config-table bucket: [hash tag:32 | entry:24 | unused:6 | kind:2], the
// tag the top half of the configuration's hash. A bucket goes EMPTY ->
// NAMED -> GONE -> NAMED ..., never back to EMPTY, so an EMPTY bucket ends
// every probe sequence that reaches it (registry/config_table.hpp).
struct ConfigBucket {
  enum Kind : uint64_t { kEmpty = 0, kNamed = 2, kGone = 3 };
  static constexpr unsigned kKindBits = 2, kEntryShift = 8, kEntryBits = 24, kTagShift = 32;
  static constexpr uint64_t kKindMask = (1ull << kKindBits) - 1;
  static constexpr uint64_t kEntryMask = (1ull << kEntryBits) - 1;
  static_assert(kEntryShift + kEntryBits <= kTagShift && kKindBits <= kEntryShift);

  static constexpr uint64_t pack(uint32_t tag, uint32_t entry, Kind kind) {
    return (uint64_t(tag) << kTagShift) | ((entry & kEntryMask) << kEntryShift) | kind;
  }
  static constexpr Kind kind(uint64_t b) { return Kind(b & kKindMask); }
  static constexpr uint32_t tag(uint64_t b) { return uint32_t(b >> kTagShift); }
  static constexpr uint32_t entry(uint64_t b) { return uint32_t((b >> kEntryShift) & kEntryMask); }
  static constexpr uint64_t gone(uint64_t b) { return (b & ~kKindMask) | kGone; }
};
static_assert(ConfigBucket::pack(0xdeadbeef, 0xabcdef, ConfigBucket::kNamed) ==
              0xdeadbeefabcdef02ull);
static_assert(ConfigBucket::gone(0xdeadbeefabcdef02ull) == 0xdeadbeefabcdef03ull &&
              ConfigBucket::entry(0xdeadbeefabcdef03ull) == 0xabcdef &&
              ConfigBucket::tag(0xdeadbeefabcdef03ull) == 0xdeadbeef);
static_assert(ConfigBucket::kind(0) == ConfigBucket::kEmpty);

// A config-table entry's references: [life:32 | breakers:32]. The life
// moves on when the last breaker lets go, so a reader that saw the entry
// in use can take a reference only if it has been in use ever since, with
// the same configuration (registry/config_table.hpp).
struct ConfigRefs {
  static constexpr unsigned kLifeShift = 32;
  static constexpr uint64_t kCountMask = (1ull << kLifeShift) - 1;

  static constexpr uint32_t count(uint64_t r) { return uint32_t(r & kCountMask); }
  static constexpr uint32_t life(uint64_t r) { return uint32_t(r >> kLifeShift); }
  // The first breaker of a free entry (count 0), in the same life.
  static constexpr uint64_t first(uint64_t r) { return (r & ~kCountMask) | 1; }
  // One breaker less; the last one ends the life.
  static constexpr uint64_t less(uint64_t r) {
    return count(r) > 1 ? r - 1 : (r & ~kCountMask) + (1ull << kLifeShift);
  }
};
static_assert(ConfigRefs::first(0x5'00000000ull) == 0x5'00000001ull &&
              ConfigRefs::less(0x5'00000003ull) == 0x5'00000002ull &&
              ConfigRefs::less(0x5'00000001ull) == 0x6'00000000ull &&
              ConfigRefs::count(ConfigRefs::less(0x5'00000001ull)) == 0);
// The life wraps without touching the count.
static_assert(ConfigRefs::less(0xffffffff'00000001ull) == 0);

// A window block's reference: [size class:4 | block:28]
// (registry/window_pool.hpp).
struct WindowRef {
  static constexpr unsigned kClassShift = 28;
  static constexpr uint32_t kBlockMask = (1u << kClassShift) - 1;

  static constexpr uint32_t make(unsigned cls, uint32_t block) {
    return (cls << kClassShift) | block;
  }
  static constexpr unsigned size_class(uint32_t ref) { return ref >> kClassShift; }
  static constexpr uint32_t block(uint32_t ref) { return ref & kBlockMask; }
};
static_assert(WindowRef::make(11, 0) == 0xb0000000u && WindowRef::size_class(0xb0000005u) == 11 &&
              WindowRef::block(WindowRef::make(3, 4194303)) == 4194303);

// What a slot refers to in its registry's arena, in one word so that one
// load reads a consistent pair: [window block:32 | config entry:32].
struct SlotRefs {
  static constexpr uint64_t pack(uint32_t config, uint32_t window) {
    return uint64_t(window) << 32 | config;
  }
  static constexpr uint32_t config(uint64_t s) { return uint32_t(s); }
  static constexpr uint32_t window(uint64_t s) { return uint32_t(s >> 32); }
};
static_assert(SlotRefs::config(SlotRefs::pack(7, 9)) == 7 &&
              SlotRefs::window(SlotRefs::pack(7, 9)) == 9);

}  // namespace lazybreaker::registry
