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

}  // namespace lazybreaker::registry
