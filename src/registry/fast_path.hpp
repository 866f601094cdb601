// The quiet call, whole: cb_allow and cb_done on a breaker that is CLOSED,
// unrecorded and without a failure run, counted in the calling thread's own
// cells, found from the handle alone (registry/space.hpp). Anything else goes
// to `slow`, which nothing here has touched yet.
//
// A quiet call is taken only if three things hold, each for a reason:
//   * the handle's top 40 bits equal the state word's (Handle::quiet_in):
//     the breaker is in the handle's life;
//   * the word's high bit is set: it is quiet (core/words.hpp). Without this
//     a made-up value copying the top bits of any other word (a slot never
//     used, a free slot, an OPEN breaker) would pass the first test. With it,
//     handle + word carries, so the test costs one branch on the flag that
//     sealing the ticket (Handle::seal) sets anyway;
//   * the thread has counter cells of its own.
// The status returned on success is the first test's zero, already in the
// return register: these two functions are counted to the instruction
// (bench/callgrind-count.sh), 43 for the pair: 41, and for each call the
// branch that folds its counter's 16-bit field when it fills
// (core::bump_exclusive).
#pragma once

#include <cstdint>

#include "core/breaker.hpp"
#include "registry/handle.hpp"
#include "registry/registry.hpp"
#include "registry/space.hpp"

namespace lazybreaker::registry {

// The quiet tests, after the other checks: whether the handle `h` and the
// word `w` agree in their top 40 bits and both have the high bit set (so
// h + w carries). On success `w` becomes 0 and `*sealed` (allow) is h + w;
// `ticket` (done) must equal h + w. Written out for x86-64 so that the
// carry is one branch and the zero stays in the return register (GCC
// computes the carry into a register and clears another for the status).
// -DLB_PORTABLE_FAST_PATH builds the portable form on x86-64 too.
#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 11) && !defined(LB_PORTABLE_FAST_PATH)
#define LB_FAST_PATH_ASM 1
#endif

struct FastPath {
  // `slow(h, ticket, own_cells)` answers whatever this does not; it is
  // given the thread's own cells as read here (0 if none), so a rejection
  // counts in them without reading them again.
  template <auto slow>
  [[gnu::always_inline]] static int allow(uint64_t h, uint64_t *ticket) {
    const Space::Slot s = Space::slot(h);
    uint64_t w = s.hot->word.load(std::memory_order_acquire);
    const uintptr_t cells = Space::own_cells();
    if (__builtin_expect(ticket == nullptr || cells == 0, 0)) return slow(h, ticket, cells);
#ifdef LB_FAST_PATH_ASM
    uint64_t sealed = h;
    asm goto(
        "add %[w], %[sealed]\n\t"
        "jnc %l[not_quiet]\n\t"
        "xor %[h], %[w]\n\t"
        "shr %[index_bits], %[w]\n\t"
        "jne %l[not_quiet]"
        : [sealed] "+&r"(sealed), [w] "+a"(w)
        : [h] "r"(h), [index_bits] "i"(Handle::kIndexBits)
        : "cc"
        : not_quiet);
#else
    uint64_t sealed;
    if (!__builtin_add_overflow(h, w, &sealed) || (w ^= h, w >>= Handle::kIndexBits) != 0)
      goto not_quiet;
#endif
    *ticket = sealed;
    Space::bump_own(cells, s.cell_offset, core::Counter::Admitted);
    return int(w);  // 0: CB_OK
  not_quiet:
    return slow(h, ticket, cells);
  }

  // Whether a call on the breaker whose state word is `w` may be rejected
  // on its hot line alone (rejected() below): OPEN or FORCED_OPEN.
  static constexpr bool may_reject(uint64_t w) {
    return core::StateWord::mode(w) == core::StateWord::kOpenMode ||
           core::StateWord::mode(w) == core::StateWord::kForcedOpenMode;
  }
  // Whether a call on the breaker whose state word is `w` is admitted
  // on its hot line alone (admitted() below): CLOSED but neither quiet nor
  // timing its calls. Not DISABLED: its word does not say whether its
  // calls are timed (only a CLOSED mode says so), and they are under
  // slow-call tracking (docs/policies.md, "Manual control").
  static constexpr bool may_admit_untimed(uint64_t w) {
    using core::StateWord;
    constexpr unsigned kModes =
        1u << StateWord::kClosedWindowMode | 1u << StateWord::kClosedRunMode;
    return (kModes >> StateWord::mode(w)) & 1;
  }
  // Whether a call on the breaker whose state word is `w`, that
  // admits_untimed() did not admit, may be admitted without the core's
  // general path (Registry::admits_call, which checks the life and the
  // state and reads the one field of the configuration that says whether
  // to time the call): CLOSED and timing its calls (slow-call tracking),
  // DISABLED, or CLOSED in another mode on a thread without its own cells.
  // The modes from DISABLED up are DISABLED's and CLOSED's, so this is one
  // comparison, as the test for the first alone was.
  static bool may_admit(uint64_t w) {
    static_assert(core::StateWord::kClosedRecordedMode > core::StateWord::kDisabledMode &&
                  core::StateWord::kClosedWindowMode > core::StateWord::kDisabledMode &&
                  core::StateWord::kQuietMode > core::StateWord::kDisabledMode);
    return core::StateWord::mode(w) >= core::StateWord::kDisabledMode;
  }
  // A call the breaker `h` names, whose slot holds `w`, is admitted on its
  // hot line alone: it is alive, CLOSED and not timing its calls
  // (may_admit_untimed), so its ticket (core::Breaker::call_ticket) needs no
  // clock.
  // The caller counts it.
  [[gnu::always_inline]] static bool admits_untimed(uint64_t h, uint64_t w, uint64_t *ticket) {
    if (!may_admit_untimed(w) || !Handle::names_life(h, w)) return false;
    *ticket = Handle::seal(h, core::Breaker::call_ticket(w, 0));
    return true;
  }
  // Whether `ticket` is of a call the breaker `h` names admitted in the
  // CLOSED period of state word `w`, as it stands.
  static bool window_call(uint64_t h, uint64_t ticket, uint64_t w) {
    return Handle::names_life(h, w) &&
           Handle::unseal(h, ticket) == core::Breaker::call_ticket(w, 0);
  }
  // The success of such a call on a window breaker (its slot `s` holds
  // `w`, mode kClosedWindowMode), held back in the thread's own word
  // (Registry::holds_success) and counted in its own `cells`; false says
  // nothing.
  [[gnu::always_inline]] static bool held(uintptr_t cells, Space::Slot s, uint64_t w) {
    if (cells == 0) return false;
    Registry *reg = Registry::owning(s.index());
    if (reg == nullptr || !reg->holds_success(uint32_t(s.index() - reg->base()), w)) return false;
    Space::bump_own(cells, s.cell_offset, core::Counter::Successes);
    return true;
  }
  // A call the breaker `h` names, whose slot `s` held `w`, rejects on its
  // hot line alone: it is alive, its registry needs to see nothing of it
  // (Space::lean_rejections), and the core says so
  // (core::Breaker::rejects_early_on_monotonic). The rejection is counted in
  // the thread's own `cells` (0: none, then this says nothing). The most
  // frequent call of an outage.
  [[gnu::always_inline]] static bool rejected(uint64_t h, uintptr_t cells, Space::Slot s,
                                              uint64_t w) {
    if (cells == 0 || !Handle::names_life(h, w) || !Space::lean_rejections(s.index()) ||
        !core::Breaker::rejects_early_on_monotonic(*s.hot, w))
      return false;
    Space::bump_own(cells, s.cell_offset, core::Counter::Rejected);
    return true;
  }

  // A ticket that is the state word as it stands, of a breaker that the
  // handle names and that is quiet, was issued in this life and this epoch,
  // and nothing has moved since: its success changes nothing
  // (lazybreaker::core::Ticket). `slow(h, ticket, outcome)` answers the rest.
  template <auto slow>
  [[gnu::always_inline]] static int done(uint64_t h, uint64_t ticket, int outcome) {
    const Space::Slot s = Space::slot(h);
    uint64_t w = s.hot->word.load(std::memory_order_acquire);
    const uintptr_t cells = Space::own_cells();
    if (__builtin_expect(outcome != 0 || cells == 0, 0)) return slow(h, ticket, outcome);
#ifdef LB_FAST_PATH_ASM
    uint64_t sealed = w;
    asm goto(
        "add %[h], %[sealed]\n\t"
        "jnc %l[not_quiet]\n\t"
        "cmp %[sealed], %[ticket]\n\t"
        "jne %l[not_quiet]\n\t"
        "xor %[h], %[w]\n\t"
        "shr %[index_bits], %[w]\n\t"
        "jne %l[not_quiet]"
        : [sealed] "+&r"(sealed), [w] "+a"(w)
        : [h] "r"(h), [ticket] "r"(ticket), [index_bits] "i"(Handle::kIndexBits)
        : "cc"
        : not_quiet);
#else
    uint64_t sealed;
    if (!__builtin_add_overflow(h, w, &sealed) || sealed != ticket ||
        (w ^= h, w >>= Handle::kIndexBits) != 0)
      goto not_quiet;
#endif
    Space::bump_own(cells, s.cell_offset, core::Counter::Successes);
    return int(w);  // 0: CB_OK
  not_quiet:
    return slow(h, ticket, outcome);
  }
};

}  // namespace lazybreaker::registry
