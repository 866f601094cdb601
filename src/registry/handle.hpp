// A handle is [kFastTop:20 | incarnation:20 | index:24]: the top 40 bits are
// what its breaker's state word holds while a call on it changes nothing
// shared (core/words.hpp), and the index is the slot's place in the
// process-wide space (registry/space.hpp), so the fast paths find the slot
// with one mask and check life and state with one shift of (handle ^ word).
// The top bits are never zero, so neither is a handle.
#pragma once

#include <cstdint>

#include "core/words.hpp"

namespace lazybreaker::registry {

struct Handle {
  using StateWord = core::StateWord;
  static constexpr unsigned kIndexBits = StateWord::kEpochBits;
  static constexpr uint64_t kIndexMask = (1ull << kIndexBits) - 1;
  static constexpr uint64_t kTop = StateWord::kFastTop << StateWord::kTopShift;
  static_assert(StateWord::kEpochShift == 0 && StateWord::kIncarnationShift == kIndexBits);

  static constexpr uint64_t make(uint32_t incarnation, uint32_t index) {
    return kTop | (uint64_t(incarnation & StateWord::kIncarnationMask) << kIndexBits) |
           (index & kIndexMask);
  }
  // Whether the bits above the index are a handle's (the incarnation aside).
  static constexpr bool well_formed(uint64_t h) {
    return (h >> StateWord::kTopShift) == StateWord::kFastTop;
  }
  static constexpr uint32_t incarnation(uint64_t h) { return StateWord::incarnation(h); }
  // Whether `h` is well formed and names the life whose state word is `w`
  // (one comparison for both).
  static constexpr bool names_life(uint64_t h, uint64_t w) {
    return (h >> StateWord::kIncarnationShift) ==
           ((StateWord::kFastTop << StateWord::kIncarnationBits) | StateWord::incarnation(w));
  }
  static constexpr uint32_t index(uint64_t h) { return uint32_t(h & kIndexMask); }

  // Whether the breaker `h` names, whose state word is `w`, is in this life
  // and quiet (CLOSED, unrecorded, no failure run). The second test is what
  // refuses a made-up `h` that copies another word's top bits; the fast
  // paths make it from the carry of seal() (registry/fast_path.hpp).
  static constexpr bool quiet_in(uint64_t h, uint64_t w) {
    return ((h ^ w) >> kIndexBits) == 0 && (w >> 63) != 0;
  }

  // A ticket goes out with its handle added to it and comes back with the
  // handle taken off. So cb_done compares a quiet call's ticket with the
  // state word in one instruction after one subtraction, and zero or a small
  // integer passed as a ticket comes back with a top nibble no ticket kind
  // has (0x4 or 0x5: the handle's 0xb, negated), and is refused. A quiet
  // ticket is a handle plus a word that both have the high bit set, so it
  // always wraps, and taking the handle back off always borrows.
  static constexpr uint64_t seal(uint64_t h, uint64_t ticket) { return ticket + h; }
  static constexpr uint64_t unseal(uint64_t h, uint64_t sealed) { return sealed - h; }
};

static_assert(Handle::well_formed(Handle::make(0, 0)) && Handle::make(0, 0) != 0);
// names_life: the handle's life, in any state; not another life, not a
// made-up value whose top bits are not kFastTop.
static_assert(Handle::names_life(Handle::make(7, 9),
                                 core::StateWord::pack(7, 3, 2, core::State::Open)) &&
              !Handle::names_life(Handle::make(8, 9),
                                  core::StateWord::pack(7, 3, 2, core::State::Open)) &&
              !Handle::names_life(Handle::make(7, 9) & ~(1ull << 63),
                                  core::StateWord::pack(7, 3, 2, core::State::Open)));
static_assert(Handle::quiet_in(Handle::make(7, 9),
                               core::StateWord::pack(7, 9, 0, core::State::Closed)));
static_assert(!Handle::quiet_in(Handle::make(7, 9),
                                core::StateWord::pack(7, 9, 1, core::State::Closed)));
static_assert(!Handle::quiet_in(Handle::make(7, 9),
                                core::StateWord::pack(7, 9, 0, core::State::Closed,
                                                      core::Recording::Timed)));
static_assert(!Handle::quiet_in(Handle::make(6, 9),
                                core::StateWord::pack(7, 9, 0, core::State::Closed)));
// Made up to copy a non-quiet word's top bits: refused on the high bit alone.
static_assert(!Handle::quiet_in(7, 0) &&
              !Handle::quiet_in(core::StateWord::pack(7, 9, 0, core::State::Open),
                                core::StateWord::pack(7, 9, 0, core::State::Open)));
static_assert(core::Ticket::kind(Handle::unseal(Handle::make(0, 0), 0)) ==
              core::TicketKind::Invalid);
static_assert(core::Ticket::kind(Handle::unseal(Handle::make(0xfffff, 0xffffff), 0x12342)) ==
              core::TicketKind::Invalid);

}  // namespace lazybreaker::registry
