// The registry clock. A monotonic clock is read only where a state needs the
// time (OPEN, HALF_OPEN, a trip); a manual clock makes every test
// deterministic: it starts at 0 and moves only when told to.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace lazybreaker::core {

enum class ClockKind : uint32_t { Monotonic = 0, Manual = 1 };

struct Clock {
  ClockKind kind = ClockKind::Monotonic;
  std::atomic<uint64_t> manual_ns{0};

  uint64_t now() const {
    if (kind == ClockKind::Manual) return manual_ns.load(std::memory_order_acquire);
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no system call
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
  }

  // False if the clock would wrap.
  bool advance(uint64_t ns) {
    uint64_t cur = manual_ns.load(std::memory_order_relaxed);
    do {
      if (ns > UINT64_MAX - cur) return false;
    } while (!manual_ns.compare_exchange_weak(cur, cur + ns, std::memory_order_acq_rel));
    return true;
  }
};

}  // namespace lazybreaker::core
