// When what a closed registry held may be given back: after a grace that
// every call which could still be reading it has left. Calls announce
// themselves in a word of their thread's own (one plain store in, one out,
// no shared cache line written), and a close unpublishes the registry, then
// makes every running thread's announcement visible with one process-wide
// barrier (membarrier(2); FlushProcessWriteBuffers on Windows). A call that
// was not seen announced then cannot see the registry; one that was holds
// the reclamation back until it has left. Nothing waits: what cannot be
// given back yet is given back by a later open or close of a registry.
//
// The quiet paths read only the process-wide space (registry/space.hpp),
// which is never unmapped, and need no announcement; every path that
// reaches a registry, its arena or its file announces itself first.
//
// On Windows the same holds with FlushProcessWriteBuffers for the barrier
// and VirtualFree/UnmapViewOfFile after the grace: a private registry's
// memory is never swapped in place, only given back once the grace has
// passed. A shared run's hot lines there are not the file's (Windows cannot
// swap a mapping in place, platform::kMapsFilesInPlace): the checked paths
// find them in the file's view (Space::line), which the close stops
// publishing and unmaps only when the registry is given back, after its
// grace.
#pragma once

#include <atomic>
#include <cstdint>
#include "platform/platform.hpp"

namespace lazybreaker::registry {

namespace detail {
// A word per thread that calls (up to kReaderSlots threads at once; the
// rest announce themselves in one shared count): the epoch its call began
// in, 0 outside a call. Each on a line of its own, written only by its
// thread. Hidden, so the library addresses them directly.
inline constexpr uint32_t kReaderSlots = 256;
struct alignas(64) Announcement {
  std::atomic<uint64_t> epoch{0};
};
LB_HIDDEN extern Announcement g_readers[kReaderSlots];
LB_HIDDEN extern std::atomic<uint64_t> g_epoch;
// The calling thread's slot + 1: 0 before its first call, kReaderSlots + 1
// if it has none.
extern thread_local constinit uint32_t t_reader_slot_plus_one
    __attribute__((tls_model("initial-exec")));
extern thread_local constinit uint32_t t_reading_depth __attribute__((tls_model("initial-exec")));
}  // namespace detail

class Grace {
 public:
  // Announces the calling thread's call for as long as it lives; nested
  // ones add nothing. Construct before the first load of a registry pointer.
  class Reading {
   public:
    [[gnu::always_inline]] Reading() noexcept {
      if (detail::t_reading_depth++ != 0) return;
      const uint32_t s = detail::t_reader_slot_plus_one - 1;
      if (__builtin_expect(s < detail::kReaderSlots, 1))
        announce(s);
      else
        enter_slow();
    }
    [[gnu::always_inline]] ~Reading() {
      if (--detail::t_reading_depth != 0) return;
      const uint32_t s = detail::t_reader_slot_plus_one - 1;
      if (__builtin_expect(s < detail::kReaderSlots, 1))
        detail::g_readers[s].epoch.store(0, std::memory_order_release);
      else
        leave_slow();
    }
    Reading(const Reading &) = delete;
    Reading &operator=(const Reading &) = delete;
  };

  // Runs `give_back(arg)` once no call that could have reached what the
  // caller has just unpublished is still in flight: at once when none is,
  // else at a later collect(). Closes only (takes a setup lock).
  static void retire(void (*give_back)(void *), void *arg);
  // Gives back what retire() held whose grace has passed.
  static void collect();
  // What is still held back (tests).
  static uint32_t pending();

 private:
  [[gnu::always_inline]] static void announce(uint32_t s) {
    // The store must be seen before this call's loads of registry pointers:
    // the closer's process-wide barrier orders it, so here the compiler
    // only must keep the order. TSan knows no membarrier (nor fences): it
    // gets a sequentially consistent exchange.
#if defined(__SANITIZE_THREAD__)
    detail::g_readers[s].epoch.exchange(detail::g_epoch.load(std::memory_order_relaxed),
                                        std::memory_order_seq_cst);
#else
    detail::g_readers[s].epoch.store(detail::g_epoch.load(std::memory_order_relaxed),
                                     std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
  }
  // A thread's first call (it takes a slot), or one without a slot.
  LB_HIDDEN [[gnu::noinline]] static void enter_slow() noexcept;
  LB_HIDDEN [[gnu::noinline]] static void leave_slow() noexcept;
};

}  // namespace lazybreaker::registry
