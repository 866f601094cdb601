// The registry clock. A monotonic clock is read only where a state needs the
// time (OPEN, HALF_OPEN, a trip); a manual clock makes every test
// deterministic: it starts at 0 and moves only when told to.
#pragma once

#include <atomic>
#include <cstdint>

#include "platform/platform.hpp"

namespace lazybreaker::core {

enum class ClockKind : uint32_t { Monotonic = 0, Manual = 1 };

struct Clock {
  ClockKind kind = ClockKind::Monotonic;
  std::atomic<uint64_t> manual_ns{0};
  // The manual time: manual_ns, or a shared registry file's.
  std::atomic<uint64_t> *manual = &manual_ns;
  // Added to platform::monotonic_ns() (CLOCK_MONOTONIC): 0, except for a
  // shared registry file whose
  // times were recorded under an earlier boot, whose clock goes on from
  // beyond them (docs/shared-registries.md).
  uint64_t offset_ns = 0;
  // now() never runs ahead of earliest_now() by more than this.
  uint64_t coarse_slack_ns = 0;

  Clock() = default;
  Clock(const Clock &) = delete;
  Clock &operator=(const Clock &) = delete;

  uint64_t now() const {
    if (kind == ClockKind::Manual) return manual->load(std::memory_order_acquire);
    return platform::monotonic_ns() + offset_ns;  // vDSO: no system call
  }

  // A lower bound of now() that is much cheaper to read on some machines
  // (CLOCK_MONOTONIC_COARSE is the same clock as of the last tick, read
  // without touching the clock source): now() - coarse_slack_ns <=
  // earliest_now() <= now(). Lets OPEN reject without a precise read while
  // its deadline is far, and stay exact near it.
  uint64_t earliest_now() const {
    if (kind == ClockKind::Manual) return manual->load(std::memory_order_acquire);
    return platform::coarse_monotonic_ns() + offset_ns;
  }

  // Sets coarse_slack_ns for this machine; called once, when a registry opens.
  void measure_slack() {
    const uint64_t tick = platform::coarse_resolution_ns();
    // Ticks can come late; a wide margin only sends calls near the deadline
    // to the precise clock.
    coarse_slack_ns = 4 * tick + 1'000'000;
  }

  // False if the clock would wrap.
  bool advance(uint64_t ns) {
    uint64_t cur = manual->load(std::memory_order_relaxed);
    do {
      if (ns > UINT64_MAX - cur) return false;
    } while (!manual->compare_exchange_weak(cur, cur + ns, std::memory_order_acq_rel));
    return true;
  }
};

}  // namespace lazybreaker::core
