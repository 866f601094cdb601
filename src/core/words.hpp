// The packed 64-bit words a breaker's lock-free state machine is made of.
// Every transition is one compare-and-swap on the state word, so what must
// change together lives in it: the incarnation (so a destroyed breaker's
// handle fails on the same load that reads the state), the epoch (so tickets
// from an earlier period are recognised), the state, and one auxiliary count
// whose meaning depends on the state.
#pragma once

#include <cstdint>

namespace lazybreaker::core {

// Free is 0 so that zero-filled memory is a slot that holds no breaker.
enum class State : uint32_t {
  Free = 0,
  Closed = 1,
  Open = 2,
  HalfOpen = 3,
  ForcedOpen = 4,
  Disabled = 5
};

// State word: [incarnation:24 | epoch:20 | aux:16 | recorded:1 | state:3]
//   aux in CLOSED: the current run of consecutive failures
//   aux in OPEN and HALF_OPEN: trips since the breaker last closed (for
//     backoff), and in OPEN the kExplicitOpen bit when cb_trip set the duration
//   recorded: outcomes of this breaker feed a window (a rate policy or
//     slow-call tracking), so CLOSED calls cannot take the write-free path
struct StateWord {
  static constexpr unsigned kStateBits = 3, kAuxBits = 16, kEpochBits = 20, kIncarnationBits = 24;
  static constexpr unsigned kRecordedShift = kStateBits;
  static constexpr unsigned kAuxShift = kRecordedShift + 1;
  static constexpr unsigned kEpochShift = kAuxShift + kAuxBits;
  static constexpr unsigned kIncarnationShift = kEpochShift + kEpochBits;
  static constexpr uint64_t kStateMask = (1ull << kStateBits) - 1;
  static constexpr uint64_t kRecorded = 1ull << kRecordedShift;
  static constexpr uint64_t kAuxMax = (1ull << kAuxBits) - 1;
  static constexpr uint64_t kEpochMask = (1ull << kEpochBits) - 1;
  static constexpr uint64_t kIncarnationMask = (1ull << kIncarnationBits) - 1;
  static constexpr uint32_t kExplicitOpen = 1u << (kAuxBits - 1);
  static constexpr uint32_t kTripsMax = kExplicitOpen - 1;
  // The bits a fast path compares in one go: incarnation, recorded, state.
  static constexpr uint64_t kIdentityMask =
      (kIncarnationMask << kIncarnationShift) | kRecorded | kStateMask;

  static constexpr uint64_t pack(uint32_t incarnation, uint32_t epoch, uint32_t aux, State s,
                                 bool recorded = false) {
    return (uint64_t(incarnation & kIncarnationMask) << kIncarnationShift) |
           (uint64_t(epoch & kEpochMask) << kEpochShift) | (uint64_t(aux & kAuxMax) << kAuxShift) |
           (recorded ? kRecorded : 0) | uint64_t(s);
  }
  static constexpr State state(uint64_t w) { return State(w & kStateMask); }
  static constexpr uint32_t aux(uint64_t w) { return uint32_t((w >> kAuxShift) & kAuxMax); }
  static constexpr uint32_t epoch(uint64_t w) { return uint32_t((w >> kEpochShift) & kEpochMask); }
  static constexpr bool recorded(uint64_t w) { return (w & kRecorded) != 0; }
  static constexpr uint32_t incarnation(uint64_t w) {
    return uint32_t((w >> kIncarnationShift) & kIncarnationMask);
  }
  // Trips since the last close, in OPEN and HALF_OPEN.
  static constexpr uint32_t trips(uint64_t w) { return aux(w) & kTripsMax; }
  static constexpr bool explicit_open(uint64_t w) {
    return state(w) == State::Open && (aux(w) & kExplicitOpen) != 0;
  }
  static constexpr uint64_t identity(uint32_t incarnation, State s) {
    return (uint64_t(incarnation & kIncarnationMask) << kIncarnationShift) | uint64_t(s);
  }
  // Whether w is a live breaker in its `incarnation`-th life.
  static constexpr bool alive_in(uint64_t w, uint32_t incarnation) {
    return StateWord::incarnation(w) == (incarnation & kIncarnationMask) && state(w) != State::Free;
  }
  // The same breaker life, the next epoch, a new aux and state.
  static constexpr uint64_t next(uint64_t w, uint32_t aux, State s) {
    return pack(incarnation(w), epoch(w) + 1, aux, s, recorded(w));
  }
  static constexpr uint64_t with_aux(uint64_t w, uint32_t aux) {
    return (w & ~(kAuxMax << kAuxShift)) | (uint64_t(aux & kAuxMax) << kAuxShift);
  }
};

// A ticket shares the state word's layout where it matters: its low three
// bits are the state it was issued in (which says its kind), and its epoch
// sits where the state word keeps it. So a CLOSED call's ticket can be the
// state word itself, and the write-free cb_done compares one word with one.
//   call, unguarded: [start high:24 | epoch:20 | start low:17 | kind:3]
//   probe:           [start high:24 | epoch:20 | start low:7 | sequence:9 | unused:1 | kind:3]
// `start` is the admission time in the breaker's slow-call unit, set only for
// breakers that track slow calls (whose tickets never come from the fast
// path, where those bits hold the state word's incarnation, aux and flag).
// It has 41 bits in a call's ticket and 31 in a probe's. The kind is never
// 0, so neither is a ticket.
enum class TicketKind : uint32_t {
  Invalid = 0,
  Call = uint32_t(State::Closed),
  Probe = uint32_t(State::HalfOpen),
  Unguarded = uint32_t(State::Disabled),
};

struct Ticket {
  static constexpr unsigned kSeqShift = 4, kSeqBits = 9, kEpochShift = StateWord::kEpochShift;
  static constexpr unsigned kStartHighShift = 40, kStartHighBits = 24;
  static constexpr uint64_t kSeqMask = (1ull << kSeqBits) - 1;

  // Where the low part of `start` goes, by kind.
  static constexpr unsigned start_low_shift(TicketKind k) {
    return k == TicketKind::Probe ? 13 : 3;
  }
  static constexpr unsigned start_low_bits(TicketKind k) { return k == TicketKind::Probe ? 7 : 17; }
  // The bits of `start` a ticket of this kind keeps.
  static constexpr uint64_t start_mask(TicketKind k) {
    return (1ull << (start_low_bits(k) + kStartHighBits)) - 1;
  }

  static constexpr uint64_t make(uint32_t epoch, TicketKind kind, uint32_t seq = 0,
                                 uint64_t start = 0) {
    const unsigned low = start_low_bits(kind);
    return ((start >> low) << kStartHighShift) |
           (uint64_t(epoch & StateWord::kEpochMask) << kEpochShift) |
           ((start & ((1ull << low) - 1)) << start_low_shift(kind)) |
           (kind == TicketKind::Probe ? uint64_t(seq & kSeqMask) << kSeqShift : 0) | uint64_t(kind);
  }
  static constexpr uint32_t epoch(uint64_t t) {
    return uint32_t((t >> kEpochShift) & StateWord::kEpochMask);
  }
  static constexpr TicketKind kind(uint64_t t) {
    switch (TicketKind(t & StateWord::kStateMask)) {
      case TicketKind::Call:
        return TicketKind::Call;
      case TicketKind::Probe:
        return TicketKind::Probe;
      case TicketKind::Unguarded:
        return TicketKind::Unguarded;
      case TicketKind::Invalid:
        break;
    }
    return TicketKind::Invalid;
  }
  static constexpr uint32_t seq(uint64_t t) { return uint32_t((t >> kSeqShift) & kSeqMask); }
  static constexpr uint64_t start(uint64_t t) {
    const TicketKind k = kind(t);
    const unsigned low = start_low_bits(k);
    return ((t >> kStartHighShift) << low) | ((t >> start_low_shift(k)) & ((1ull << low) - 1));
  }
  static constexpr bool well_formed(uint64_t t) { return kind(t) != TicketKind::Invalid; }
};

// Probe ledger, valid only for the HALF_OPEN epoch whose low bits are its tag:
// [tag:15 | successes:8 | issued:9 | outstanding:32]. Probe number `seq` of
// the epoch owns bit `seq % 32` of `outstanding` until it reports, so a probe
// reported twice finds its bit clear and counts once. Every HALF_OPEN period
// gets an empty ledger of its own before it is published; a reader holding
// an older view of the state finds the tag not its epoch's and reads the
// ledger as empty (its report is stale), and nobody claims a slot in it.
struct ProbeLedger {
  static constexpr unsigned kTagBits = 15, kSuccessBits = 8, kIssuedBits = 9, kSlots = 32;
  static constexpr unsigned kIssuedShift = kSlots, kSuccessShift = kIssuedShift + kIssuedBits;
  static constexpr unsigned kTagShift = kSuccessShift + kSuccessBits;
  static constexpr uint64_t kTagMask = (1ull << kTagBits) - 1;
  static constexpr uint64_t kIssuedMask = (1ull << kIssuedBits) - 1;
  static constexpr uint64_t kSuccessMask = (1ull << kSuccessBits) - 1;

  uint32_t tag, successes, issued, outstanding;

  static constexpr bool tagged(uint64_t v, uint32_t epoch) {
    return (v >> kTagShift) == (epoch & kTagMask);
  }
  static constexpr ProbeLedger empty(uint32_t epoch) {
    return {uint32_t(epoch & kTagMask), 0, 0, 0};
  }
  static constexpr ProbeLedger read(uint64_t v, uint32_t epoch) {
    ProbeLedger l{uint32_t(v >> kTagShift), uint32_t((v >> kSuccessShift) & kSuccessMask),
                  uint32_t((v >> kIssuedShift) & kIssuedMask), uint32_t(v)};
    return l.tag == (epoch & kTagMask) ? l : empty(epoch);
  }
  constexpr uint64_t pack() const {
    return (uint64_t(tag) << kTagShift) | (uint64_t(successes) << kSuccessShift) |
           (uint64_t(issued & kIssuedMask) << kIssuedShift) | outstanding;
  }
  constexpr uint32_t in_flight() const { return uint32_t(__builtin_popcount(outstanding)); }
  static constexpr uint32_t bit(uint32_t seq) { return 1u << (seq % kSlots); }
  // Whether `seq` is still the probe that owns its bit, rather than an older
  // probe whose bit a later probe has taken over.
  constexpr bool owns_bit(uint32_t seq) const {
    const uint32_t age = (issued - seq) & kIssuedMask;
    return age >= 1 && age <= kSlots && (outstanding & bit(seq)) != 0;
  }
};

}  // namespace lazybreaker::core
