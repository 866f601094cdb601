// The registry's packed words, each with its layout, constants and worked
// examples in one place: no shift or mask for them is written elsewhere.
// (The core's words are core/words.hpp; handles are registry/handle.hpp.)
#pragma once

#include <cstdint>

namespace lazybreaker::registry {

// Bits [Shift, Shift + Width) of a word of type W: the one place a field's
// shift and mask are spelled.
template <unsigned Shift, unsigned Width, typename W = uint64_t>
struct Field {
  static_assert(Width > 0 && Shift + Width <= sizeof(W) * 8);
  static constexpr unsigned kShift = Shift, kWidth = Width;
  // The field's values, unshifted, and its bits in place.
  static constexpr W kMax = Width == sizeof(W) * 8 ? W(~W(0)) : W((W(1) << Width) - 1);
  static constexpr W kBits = W(kMax << Shift);

  static constexpr W get(W w) { return W(w >> Shift) & kMax; }
  // `v` (cut to the field's width) in place, every other bit 0.
  static constexpr W put(W v) { return W((v & kMax) << Shift); }
  static constexpr W set(W w, W v) { return W(w & ~kBits) | put(v); }
  static constexpr W clear(W w) { return W(w & ~kBits); }
};
static_assert(Field<8, 24>::put(0x1abcdef) == 0xabcdef00 &&
              Field<8, 24>::get(0xabcdef02) == 0xabcdef && Field<0, 2>::set(0xff, 1) == 0xfd &&
              Field<32, 32>::kBits == 0xffffffff'00000000ull && Field<0, 64>::kMax == ~0ull &&
              Field<28, 4, uint32_t>::get(0xb0000005u) == 11);

// A hash-table bucket of the name index and of the configuration table:
// [hash tag:32 | index:24 | unused:6 | kind:2]. The tag is the top half of
// the key's hash, so most mismatches are told apart without reading the key
// (registry/name_index.hpp, registry/config_table.hpp); the index is the
// slot a name names, or the configuration entry. A configuration bucket is
// never Claimed: it goes EMPTY -> NAMED -> GONE -> NAMED ..., never back to
// EMPTY, so an EMPTY bucket ends every probe sequence that reaches it (and
// so does a name bucket's).
struct TaggedBucket {
  enum Kind : uint64_t { kEmpty = 0, kClaimed = 1, kNamed = 2, kGone = 3 };
  using KindBits = Field<0, 2>;
  using Index = Field<8, 24>;
  using Tag = Field<32, 32>;
  static_assert(KindBits::kShift + KindBits::kWidth <= Index::kShift &&
                Index::kShift + Index::kWidth <= Tag::kShift);

  static constexpr uint64_t pack(uint32_t tag, uint32_t index, Kind kind) {
    return Tag::put(tag) | Index::put(index) | KindBits::put(kind);
  }
  static constexpr Kind kind(uint64_t b) { return Kind(KindBits::get(b)); }
  static constexpr uint32_t tag(uint64_t b) { return uint32_t(Tag::get(b)); }
  static constexpr uint32_t index(uint64_t b) { return uint32_t(Index::get(b)); }
  // The same bucket, GONE.
  static constexpr uint64_t gone(uint64_t b) { return KindBits::set(b, kGone); }
  // The tag a key's 64-bit hash gives its buckets.
  static constexpr uint32_t tag_of_hash(uint64_t hash) { return uint32_t(Tag::get(hash)); }
};
static_assert(TaggedBucket::pack(0xdeadbeef, 0xabcdef, TaggedBucket::kNamed) ==
              0xdeadbeefabcdef02ull);
static_assert(TaggedBucket::kind(TaggedBucket::pack(1, 2, TaggedBucket::kGone)) ==
                  TaggedBucket::kGone &&
              TaggedBucket::index(TaggedBucket::pack(1, 0xffffff, TaggedBucket::kClaimed)) ==
                  0xffffff &&
              TaggedBucket::tag(TaggedBucket::pack(7, 3, TaggedBucket::kEmpty)) == 7);
static_assert(TaggedBucket::gone(0xdeadbeefabcdef02ull) == 0xdeadbeefabcdef03ull &&
              TaggedBucket::index(0xdeadbeefabcdef03ull) == 0xabcdef &&
              TaggedBucket::tag(0xdeadbeefabcdef03ull) == 0xdeadbeef &&
              TaggedBucket::tag_of_hash(0x12345678'9abcdef0ull) == 0x12345678);
// Zero-filled memory is an empty bucket.
static_assert(TaggedBucket::kind(0) == TaggedBucket::kEmpty);

// A slot's reference to its name in the name store: [unused:24 | length:8 |
// word offset:32]; 0 is the empty name (registry/name_index.hpp). The
// length lives here, not beside the bytes, so that a name of another
// length is told apart without reading the bytes, and one load gives a
// reader the place and the length of one life's name together.
struct NameRef {
  using Offset = Field<0, 32>;
  using Length = Field<32, 8>;

  static constexpr uint64_t pack(uint32_t offset, uint32_t length) {
    return Length::put(length) | Offset::put(offset);
  }
  static constexpr uint32_t offset(uint64_t r) { return uint32_t(Offset::get(r)); }
  static constexpr uint32_t length(uint64_t r) { return uint32_t(Length::get(r)); }
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
  using Top = Field<0, 32>;
  using Tag = Field<32, 32>;

  // The head after `h` with `top_plus_one` on top.
  static constexpr uint64_t next(uint64_t h, uint32_t top_plus_one) {
    return Top::clear(h) + Tag::put(1) + top_plus_one;
  }
  static constexpr uint32_t top_plus_one(uint64_t h) { return uint32_t(Top::get(h)); }
  static constexpr uint32_t tag(uint64_t h) { return uint32_t(Tag::get(h)); }
};
static_assert(FreeListHead::top_plus_one(0) == 0);
static_assert(FreeListHead::next(0, 5) == 0x1'00000005ull &&
              FreeListHead::tag(FreeListHead::next(0x7'00000009ull, 0)) == 8 &&
              FreeListHead::top_plus_one(FreeListHead::next(0x7'00000009ull, 0)) == 0);
// The tag wraps without touching the top.
static_assert(FreeListHead::next(0xffffffff'00000001ull, 2) == 2);

// A config-table entry's references: [life:32 | breakers:32]. The life
// moves on when the last breaker lets go, so a reader that saw the entry
// in use can take a reference only if it has been in use ever since, with
// the same configuration (registry/config_table.hpp).
struct ConfigRefs {
  using Count = Field<0, 32>;
  using Life = Field<32, 32>;

  static constexpr uint32_t count(uint64_t r) { return uint32_t(Count::get(r)); }
  static constexpr uint32_t life(uint64_t r) { return uint32_t(Life::get(r)); }
  // The first breaker of a free entry (count 0), in the same life.
  static constexpr uint64_t first(uint64_t r) { return Count::set(r, 1); }
  // One breaker less; the last one ends the life.
  static constexpr uint64_t less(uint64_t r) {
    return count(r) > 1 ? r - 1 : Count::clear(r) + Life::put(1);
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
  using Block = Field<0, 28, uint32_t>;
  using SizeClass = Field<28, 4, uint32_t>;
  static constexpr unsigned kClassShift = SizeClass::kShift;

  static constexpr uint32_t make(unsigned cls, uint32_t block) {
    return SizeClass::put(cls) | Block::put(block);
  }
  static constexpr unsigned size_class(uint32_t ref) { return SizeClass::get(ref); }
  static constexpr uint32_t block(uint32_t ref) { return Block::get(ref); }
};
static_assert(WindowRef::make(11, 0) == 0xb0000000u && WindowRef::size_class(0xb0000005u) == 11 &&
              WindowRef::block(WindowRef::make(3, 4194303)) == 4194303);

// What a slot refers to in its registry's arena, in one word so that one
// load reads a consistent pair: [window block:32 | config entry:32].
struct SlotRefs {
  using Config = Field<0, 32>;
  using Window = Field<32, 32>;

  static constexpr uint64_t pack(uint32_t config, uint32_t window) {
    return Window::put(window) | Config::put(config);
  }
  static constexpr uint32_t config(uint64_t s) { return uint32_t(Config::get(s)); }
  static constexpr uint32_t window(uint64_t s) { return uint32_t(Window::get(s)); }
};
static_assert(SlotRefs::config(SlotRefs::pack(7, 9)) == 7 &&
              SlotRefs::window(SlotRefs::pack(7, 9)) == 9);
static_assert(SlotRefs::pack(7, 9) == 0x9'00000007ull);

// A process in a shared registry's file (registry/shared_file.hpp
// ProcessId): a stripe's owner, or the owner of a Pending record:
// [reclaiming:1 | pid:31 | start time:32], never 0. The start time (the
// low half of /proc/PID/stat's, in clock ticks since boot) tells a reused
// pid from the dead process. A stripe's owner word with the top bit set is
// a live process finishing the fold of the dead one that held it
// (registry/repair.hpp).
struct OwnerWord {
  using Started = Field<0, 32>;
  using Pid = Field<32, 31>;
  using Reclaiming = Field<63, 1>;

  static constexpr uint64_t pack(uint32_t pid, uint64_t started) {
    return Pid::put(pid) | Started::put(started);
  }
  static constexpr uint32_t pid(uint64_t o) { return uint32_t(Pid::get(o)); }
  static constexpr uint32_t started(uint64_t o) { return uint32_t(Started::get(o)); }
  static constexpr uint64_t reclaiming(uint64_t o) { return Reclaiming::set(o, 1); }
};
static_assert(OwnerWord::pack(1234, 0x1'00000005ull) == 0x4d2'00000005ull &&
              OwnerWord::pid(0x4d2'00000005ull) == 1234 &&
              OwnerWord::started(0x4d2'00000005ull) == 5);
static_assert(OwnerWord::reclaiming(0x4d2'00000005ull) == 0x800004d2'00000005ull &&
              OwnerWord::pid(OwnerWord::reclaiming(0x4d2'00000005ull)) == 1234);

// A shared registry's record, per slot, of a create or destroy in
// progress: [0:1 | creating:1 | destroying:1 | finishing:1 | owner:60], the
// owner an OwnerWord (whose pid is far below 2^28); 0 when none is. A
// process that dies inside one leaves it, and what it left half done is
// found by it (registry/repair.hpp).
struct Pending {
  using Finishing = Field<60, 1>;
  using Destroying = Field<61, 1>;
  using Creating = Field<62, 1>;
  static constexpr uint64_t kCreating = Creating::kBits, kDestroying = Destroying::kBits,
                            kFinishing = Finishing::kBits;
  static constexpr uint64_t kFlags = kCreating | kDestroying | kFinishing;

  static constexpr uint64_t owner(uint64_t p) { return p & ~kFlags; }
};
static_assert(Pending::kCreating == uint64_t(1) << 62 &&
              Pending::kDestroying == uint64_t(1) << 61 &&
              Pending::kFinishing == uint64_t(1) << 60);
static_assert(Pending::owner(0x4d2'00000005ull | Pending::kDestroying) == 0x4d2'00000005ull);

// Where a stripe's owner stood in a fold (core::fold), kept so that the
// fold of a process killed in the middle of one can be finished:
// [slot + 1:32 | unused:16 | counter:8 | phase:8], phase 1 once the totals
// have the fold's counts; 0 names no fold.
struct FoldLog {
  using Phase = Field<0, 8>;
  using Counter = Field<8, 8>;
  using SlotPlusOne = Field<32, 32>;

  static constexpr uint64_t pack(uint32_t slot, unsigned counter, unsigned phase) {
    return SlotPlusOne::put(uint64_t(slot) + 1) | Counter::put(counter) | Phase::put(phase);
  }
  static constexpr bool any(uint64_t l) { return SlotPlusOne::get(l) != 0; }
  static constexpr uint32_t slot(uint64_t l) { return uint32_t(SlotPlusOne::get(l)) - 1; }
  static constexpr unsigned counter(uint64_t l) { return unsigned(Counter::get(l)); }
  static constexpr unsigned phase(uint64_t l) { return unsigned(Phase::get(l)); }
};
static_assert(FoldLog::pack(0, 3, 1) == 0x1'00000301ull && !FoldLog::any(0) &&
              FoldLog::slot(0x1'00000301ull) == 0 && FoldLog::counter(0x1'00000301ull) == 3 &&
              FoldLog::phase(0x1'00000301ull) == 1);
static_assert(FoldLog::slot(FoldLog::pack(0xfffffffe, 0, 0)) == 0xfffffffe);

}  // namespace lazybreaker::registry
