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
// Closed is 3 so that a ticket's kind codes (below) avoid every value a
// small or zero integer takes once the handle is taken off it.
enum class State : uint32_t {
  Free = 0,
  Open = 1,
  HalfOpen = 2,
  Closed = 3,
  ForcedOpen = 4,
  Disabled = 5
};

// How a CLOSED breaker's outcomes are recorded: not at all (the
// consecutive policy: a failure run in the state word), in a window whose
// calls are timed (slow-call tracking: every call reads the clock), or in a
// window alone (a count or time window without slow-call tracking, whose
// successes a thread may hold back and settle later: HeldSuccesses in
// core/window.hpp).
enum class Recording : uint8_t { None, Timed, Window };

// State word: [mode:4 | aux:16 | incarnation:20 | epoch:24]
//   mode: the state, and for CLOSED whether calls may take the write-free
//     path (Mode below)
//   aux in CLOSED: the current run of consecutive failures
//   aux in OPEN and HALF_OPEN: trips since the breaker last closed (for
//     backoff), and in OPEN the kExplicitOpen bit when cb_trip set the duration
//   aux in FREE: kRetired once the slot has had its last life
// The order serves the fast paths: a breaker on which a call changes
// nothing shared (CLOSED, unrecorded, no failure run) has the top 20 bits
// kFastTop, and a handle is those 20 bits, the incarnation, then the slot
// index where the epoch sits, so one shift of (handle ^ word) checks the
// life and the state together (registry/handle.hpp). kFastTop is the only
// top nibble of a state word whose high bit is set, so a value made up to
// match some other word in those 40 bits is told apart by that one bit.
struct StateWord {
  static constexpr unsigned kModeBits = 4, kAuxBits = 16, kEpochBits = 24, kIncarnationBits = 20;
  static constexpr unsigned kEpochShift = 0;
  static constexpr unsigned kIncarnationShift = kEpochShift + kEpochBits;
  static constexpr unsigned kAuxShift = kIncarnationShift + kIncarnationBits;
  static constexpr unsigned kModeShift = kAuxShift + kAuxBits;
  static constexpr unsigned kTopShift = kIncarnationShift + kIncarnationBits;
  static_assert(kModeShift + kModeBits == 64);
  static constexpr uint64_t kAuxMax = (1ull << kAuxBits) - 1;
  static constexpr uint64_t kEpochMask = (1ull << kEpochBits) - 1;
  static constexpr uint64_t kIncarnationMask = (1ull << kIncarnationBits) - 1;
  static constexpr uint32_t kExplicitOpen = 1u << (kAuxBits - 1);
  static constexpr uint32_t kTripsMax = kExplicitOpen - 1;
  static constexpr uint32_t kRetired = 1;

  // The top nibble. The states keep their numbers; CLOSED has four modes,
  // and only the write-free one has the high bit. Tickets' kind codes
  // (Ticket below) are nibbles no mode uses.
  enum Mode : uint64_t {
    kFreeMode = uint64_t(State::Free),
    kOpenMode = uint64_t(State::Open),
    kHalfOpenMode = uint64_t(State::HalfOpen),
    kClosedRunMode = uint64_t(State::Closed),  // unrecorded, a failure run under way
    kForcedOpenMode = uint64_t(State::ForcedOpen),
    kDisabledMode = uint64_t(State::Disabled),
    kClosedRecordedMode = 6,  // outcomes feed a window, calls are timed (slow-call tracking)
    kClosedWindowMode = 7,    // outcomes feed a window, calls are not timed: successes may wait
    kQuietMode = 0xb,         // unrecorded, no failure run: a call changes nothing shared
  };
  // The top 20 bits of a quiet word.
  static constexpr uint64_t kFastTop = uint64_t(kQuietMode) << (kModeShift - kTopShift);

  // `recording` matters only in CLOSED, the one state that keeps it.
  static constexpr uint64_t pack(uint32_t incarnation, uint32_t epoch, uint32_t aux, State s,
                                 Recording recording = Recording::None) {
    const uint64_t m = s != State::Closed               ? uint64_t(s)
                       : recording == Recording::Timed  ? kClosedRecordedMode
                       : recording == Recording::Window ? kClosedWindowMode
                       : (aux & kAuxMax) == 0           ? kQuietMode
                                                        : kClosedRunMode;
    return (m << kModeShift) | (uint64_t(aux & kAuxMax) << kAuxShift) |
           (uint64_t(incarnation & kIncarnationMask) << kIncarnationShift) |
           (uint64_t(epoch & kEpochMask) << kEpochShift);
  }
  static constexpr uint64_t mode(uint64_t w) { return w >> kModeShift; }
  static constexpr State state(uint64_t w) {
    return mode(w) <= kDisabledMode ? State(mode(w)) : State::Closed;
  }
  static constexpr uint32_t aux(uint64_t w) { return uint32_t((w >> kAuxShift) & kAuxMax); }
  static constexpr uint32_t epoch(uint64_t w) { return uint32_t((w >> kEpochShift) & kEpochMask); }
  // Whether a CLOSED word's outcomes feed a window (other states do not say),
  // and how.
  static constexpr bool recorded(uint64_t w) { return recording(w) != Recording::None; }
  static constexpr Recording recording(uint64_t w) {
    return mode(w) == kClosedRecordedMode ? Recording::Timed
           : mode(w) == kClosedWindowMode ? Recording::Window
                                          : Recording::None;
  }
  static constexpr uint32_t incarnation(uint64_t w) {
    return uint32_t((w >> kIncarnationShift) & kIncarnationMask);
  }
  // Trips since the last close, in OPEN and HALF_OPEN.
  static constexpr uint32_t trips(uint64_t w) { return aux(w) & kTripsMax; }
  static constexpr bool explicit_open(uint64_t w) {
    return state(w) == State::Open && (aux(w) & kExplicitOpen) != 0;
  }
  // Whether a free slot has had its last life (its incarnation would wrap).
  static constexpr bool retired(uint64_t w) {
    return state(w) == State::Free && aux(w) == kRetired;
  }
  // Whether w is a live breaker in its `incarnation`-th life.
  static constexpr bool alive_in(uint64_t w, uint32_t incarnation) {
    return StateWord::incarnation(w) == (incarnation & kIncarnationMask) && state(w) != State::Free;
  }
  // A live word's slot once its life has ended: free in the next
  // incarnation, or retired if the next would wrap and a long-destroyed
  // breaker's handle would name a new one.
  static constexpr uint64_t ended(uint64_t w) {
    const uint32_t life = incarnation(w);
    return life == kIncarnationMask ? pack(life, epoch(w) + 1, kRetired, State::Free)
                                    : pack(life + 1, epoch(w) + 1, 0, State::Free);
  }
  // Whether a call on this breaker changes nothing shared: CLOSED, no
  // window to feed, no failure run to end.
  static constexpr bool quiet(uint64_t w) { return (w >> kTopShift) == kFastTop; }
  // The same breaker life, the next epoch, a new aux and state; `recording`
  // says for a CLOSED target whether its outcomes feed a window.
  static constexpr uint64_t next(uint64_t w, uint32_t aux, State s,
                                 Recording recording = Recording::None) {
    return pack(incarnation(w), epoch(w) + 1, aux, s, recording);
  }
  // A window breaker's CLOSED word (mode kClosedWindowMode) made quiet, and
  // back: the same life and period (Breaker::quiet_if_clean).
  static constexpr uint64_t quieted(uint64_t w) {
    return pack(incarnation(w), epoch(w), 0, State::Closed, Recording::None);
  }
  static constexpr uint64_t loud(uint64_t w) {
    return pack(incarnation(w), epoch(w), 0, State::Closed, Recording::Window);
  }
  // The same CLOSED period with another failure run.
  static constexpr uint64_t with_aux(uint64_t w, uint32_t aux) {
    return pack(incarnation(w), epoch(w), aux, state(w), recording(w));
  }
};

// The modes' worked examples: a fresh CLOSED breaker is quiet unless it is
// recorded, a failure run makes it loud, and ending the run makes it quiet again.
static_assert(StateWord::quiet(StateWord::pack(5, 7, 0, State::Closed)));
static_assert(!StateWord::quiet(StateWord::pack(5, 7, 0, State::Closed, Recording::Timed)));
static_assert(!StateWord::quiet(StateWord::pack(5, 7, 1, State::Closed)));
static_assert(StateWord::quiet(StateWord::with_aux(StateWord::pack(5, 7, 3, State::Closed), 0)));
static_assert(StateWord::state(StateWord::pack(5, 7, 3, State::Closed)) == State::Closed &&
              StateWord::state(StateWord::pack(5, 7, 0, State::Closed, Recording::Timed)) ==
                  State::Closed &&
              StateWord::recorded(StateWord::pack(5, 7, 3, State::Closed, Recording::Timed)));
// Zero-filled memory is a free slot; only the quiet mode has the high bit.
static_assert(StateWord::state(0) == State::Free && !StateWord::retired(0));
static_assert(StateWord::incarnation(StateWord::ended(StateWord::pack(4, 9, 0, State::Open))) ==
                  5 &&
              StateWord::retired(StateWord::ended(StateWord::pack(StateWord::kIncarnationMask, 9, 0,
                                                                  State::Closed))));
static_assert((StateWord::pack(1, 2, 3, State::Disabled) >> 63) == 0 &&
              (StateWord::pack(1, 2, 0, State::Closed, Recording::Timed) >> 63) == 0 &&
              (StateWord::pack(1, 2, 0, State::Closed, Recording::Window) >> 63) == 0 &&
              (StateWord::pack(1, 2, 0, State::Closed) >> 63) == 1);

// What cb_done is given back. Its top four bits say its kind, and its low
// 24 bits are the epoch it was issued in, where the state word keeps it:
//   quiet call:  the state word it was admitted under (top bits kFastTop),
//                so the write-free cb_done compares one word with one
//   call, unguarded: [kind:4 | start:36 | epoch:24]
//   probe:           [kind:4 | start:27 | sequence:9 | epoch:24]
// The other kinds' codes are top nibbles no state word has (no mode), so
// their tickets never equal a state word. `start` is the admission time
// in the breaker's slow-call unit, set only for breakers that track slow
// calls: 36 bits in a call's ticket, 27 in a probe's.
enum class TicketKind : uint32_t { Invalid = 0, Call, Probe, Unguarded };

struct Ticket {
  static constexpr unsigned kKindShift = 60, kSeqBits = 9, kSeqShift = StateWord::kEpochBits;
  static constexpr uint64_t kSeqMask = (1ull << kSeqBits) - 1;
  static constexpr uint64_t kCallCode = 0xc, kProbeCode = 0xd, kUnguardedCode = 0xe;
  static constexpr uint64_t kQuietCode = StateWord::kQuietMode;
  static_assert(kKindShift == StateWord::kModeShift && kQuietCode == 0xb &&
                kCallCode > StateWord::kClosedRecordedMode &&
                kCallCode > StateWord::kClosedWindowMode && kCallCode != kQuietCode);

  static constexpr unsigned start_shift(TicketKind k) {
    return k == TicketKind::Probe ? kSeqShift + kSeqBits : kSeqShift;
  }
  static constexpr unsigned start_bits(TicketKind k) { return kKindShift - start_shift(k); }
  // The bits of `start` a ticket of this kind keeps.
  static constexpr uint64_t start_mask(TicketKind k) { return (1ull << start_bits(k)) - 1; }

  static constexpr uint64_t make(uint32_t epoch, TicketKind kind, uint32_t seq = 0,
                                 uint64_t start = 0) {
    const uint64_t code = kind == TicketKind::Probe       ? kProbeCode
                          : kind == TicketKind::Unguarded ? kUnguardedCode
                                                          : kCallCode;
    return (code << kKindShift) | ((start & start_mask(kind)) << start_shift(kind)) |
           (kind == TicketKind::Probe ? uint64_t(seq & kSeqMask) << kSeqShift : 0) |
           (uint64_t(epoch) & StateWord::kEpochMask);
  }
  static constexpr uint32_t epoch(uint64_t t) { return uint32_t(t & StateWord::kEpochMask); }
  static constexpr TicketKind kind(uint64_t t) {
    switch (t >> kKindShift) {
      case kQuietCode:
      case kCallCode:
        return TicketKind::Call;
      case kProbeCode:
        return TicketKind::Probe;
      case kUnguardedCode:
        return TicketKind::Unguarded;
      default:
        break;
    }
    return TicketKind::Invalid;
  }
  static constexpr uint32_t seq(uint64_t t) { return uint32_t((t >> kSeqShift) & kSeqMask); }
  // Zero for a quiet call's ticket, which never comes from a breaker that
  // tracks slow calls.
  static constexpr uint64_t start(uint64_t t) {
    const TicketKind k = kind(t);
    return (t >> kKindShift) == kQuietCode ? 0 : (t >> start_shift(k)) & start_mask(k);
  }
  static constexpr bool well_formed(uint64_t t) { return kind(t) != TicketKind::Invalid; }
};

// The OPEN period's deadline as the hot line caches it for the rejection
// path: [units:40 | epoch:24]. `units` is the cheap clock's reading
// (Clock::earliest_now) before which the period has surely not ended, that
// is opened_at + open duration - coarse slack, in units of 2^kUnitShift ns
// rounded down; 0 when there is no such reading or it does not fit. Written
// by the caller that made the trip once it has won it (and by any caller
// that finds it missing), so the tag is the epoch of the OPEN period it
// describes and a reader whose state word has another epoch ignores it.
// Rounding down only sends calls within a unit (1 ms) of the deadline to
// the general path, which decides them on the exact rule. A zero word
// rejects nothing.
struct OpenPeriod {
  static constexpr unsigned kUnitShift = 20;
  static constexpr unsigned kUnitsShift = StateWord::kEpochBits, kUnitsBits = 64 - kUnitsShift;
  static constexpr uint64_t kUnitsMax = (1ull << kUnitsBits) - 1;
  // Deadlines up to 2^60 ns (36 years of a monotonic clock) fit.
  static_assert(kUnitsBits + kUnitShift == 60);

  static constexpr uint64_t pack(uint32_t epoch, uint64_t cheap_deadline_ns) {
    const uint64_t units = cheap_deadline_ns >> kUnitShift;
    return (units <= kUnitsMax ? units << kUnitsShift : 0) |
           (uint64_t(epoch) & StateWord::kEpochMask);
  }
  static constexpr bool tagged(uint64_t v, uint32_t epoch) {
    return ((v ^ epoch) & StateWord::kEpochMask) == 0;
  }
  // The cheap clock's reading before which the OPEN period of `epoch` has
  // surely not ended; 0 if `v` is not that period's or says nothing.
  static constexpr uint64_t cheap_deadline(uint64_t v, uint32_t epoch) {
    return tagged(v, epoch) ? (v >> kUnitsShift) << kUnitShift : 0;
  }
};
// Worked examples: a deadline at 30 s is kept as 28,610 units of 1,048,576
// ns (29.99988 s), tagged with its epoch, read as nothing under another
// epoch (including one that differs only above the 24 bits), and a deadline
// past 2^60 ns is kept as none.
static_assert(OpenPeriod::pack(7, 30'000'000'000ull) == ((28'610ull << 24) | 7) &&
              OpenPeriod::cheap_deadline(OpenPeriod::pack(7, 30'000'000'000ull), 7) ==
                  29'999'759'360ull &&
              OpenPeriod::cheap_deadline(OpenPeriod::pack(7, 30'000'000'000ull), 8) == 0);
static_assert(OpenPeriod::cheap_deadline(OpenPeriod::pack(3, 1'048'575), 3) == 0 &&
              OpenPeriod::cheap_deadline(OpenPeriod::pack(3, 2'000'000), 3 + (1u << 24)) ==
                  1'048'576 &&
              OpenPeriod::cheap_deadline(OpenPeriod::pack(3, 1ull << 61), 3) == 0 &&
              OpenPeriod::cheap_deadline(0, 0) == 0);

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
