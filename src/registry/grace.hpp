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
// passed. What Windows cannot do the same way is a shared run's in-place
// swap of the file's hot lines for private ones at the close
// (Space::unmap_shared_run, one mmap(MAP_FIXED)): views there are 64
// KiB-aligned and a placeholder must be unmapped before another view goes
// in, and a call in the gap would fault. There the close keeps the file's
// view of the run until the grace has passed, and makes its handles stale
// with a per-chunk "closed" byte that the Windows build's quiet paths load
// beside the hot line (one load more than here, Windows only).
#pragma once

#include <atomic>
#include <cstdint>

namespace lazybreaker::registry {

class Grace {
 public:
  // Announces the calling thread's call for as long as it lives; nested
  // ones add nothing. Construct before the first load of a registry pointer.
  class Reading {
   public:
    Reading() noexcept {
      if (t_depth_++ == 0) enter();
    }
    ~Reading() {
      if (--t_depth_ == 0) leave();
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
  [[gnu::visibility("hidden")]] static void enter() noexcept;
  [[gnu::visibility("hidden")]] static void leave() noexcept;
  static thread_local constinit uint32_t t_depth_ __attribute__((tls_model("initial-exec")));
};

}  // namespace lazybreaker::registry
