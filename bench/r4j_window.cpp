// The window baseline: a failure-rate breaker in the shape of resilience4j's
// count-based one (FixedSizeSlidingWindowMetrics under a CircuitBreaker
// state machine): CLOSED admits on one atomic load of the state, and every
// outcome takes one lock around a ring of the last N outcomes and running
// totals (the outcome leaving the ring is subtracted, the new one added),
// then compares the failure rate with the threshold once minimum_calls are
// in. Written to be fast, not to be beaten: no clock is read in CLOSED
// (resilience4j's decorators read System.nanoTime twice per call to time
// it), and nothing is allocated per call.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "bench/peers.h"

namespace {

enum class St : int { Closed, Open };

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

enum : uint8_t { kEmpty, kSuccess, kFailure };

}  // namespace

struct lb_r4j_breaker {
  uint32_t minimum_calls;
  double failure_rate_threshold;  // percent, as resilience4j takes it
  uint64_t open_duration_ns;

  std::atomic<int> state{int(St::Closed)};
  std::atomic<uint64_t> opened_at{0};
  std::mutex mu;
  std::vector<uint8_t> ring;  // the last N outcomes
  size_t head = 0;
  uint64_t total_calls = 0, total_failures = 0;  // of the outcomes in the ring

  int allow(cb_ticket *ticket) {
    if (state.load(std::memory_order_acquire) == int(St::Open)) {
      if (now_ns() - opened_at.load(std::memory_order_relaxed) < open_duration_ns)
        return CB_REJECTED;
      std::lock_guard<std::mutex> lock(mu);
      reset();
      state.store(int(St::Closed), std::memory_order_release);
    }
    *ticket = 1;
    return CB_OK;
  }

  int done(cb_ticket, int outcome) {
    if (outcome != CB_SUCCESS && outcome != CB_FAILURE)
      return outcome == CB_IGNORED ? CB_OK : CB_EINVAL;
    std::lock_guard<std::mutex> lock(mu);
    head = head + 1 == ring.size() ? 0 : head + 1;
    const uint8_t leaving = ring[head];
    if (leaving != kEmpty) {
      --total_calls;
      if (leaving == kFailure) --total_failures;
    }
    ring[head] = outcome == CB_FAILURE ? kFailure : kSuccess;
    ++total_calls;
    if (outcome == CB_FAILURE) ++total_failures;
    if (total_calls >= minimum_calls &&
        double(total_failures) * 100.0 / double(total_calls) >= failure_rate_threshold &&
        state.load(std::memory_order_relaxed) == int(St::Closed)) {
      opened_at.store(now_ns(), std::memory_order_relaxed);
      state.store(int(St::Open), std::memory_order_release);
    }
    return CB_OK;
  }

  void reset() {
    std::fill(ring.begin(), ring.end(), kEmpty);
    total_calls = total_failures = 0;
  }
};

extern "C" {

LB_BENCH_API lb_r4j_breaker *lb_r4j_create(uint32_t window_size, uint32_t minimum_calls,
                                           double failure_rate_percent, uint64_t open_duration_ns) {
  auto *b = new (std::nothrow) lb_r4j_breaker;
  if (b == nullptr) return nullptr;
  b->minimum_calls = minimum_calls;
  b->failure_rate_threshold = failure_rate_percent;
  b->open_duration_ns = open_duration_ns;
  b->ring.assign(window_size, kEmpty);
  return b;
}

LB_BENCH_API void lb_r4j_destroy(lb_r4j_breaker *b) { delete b; }

LB_BENCH_API int lb_r4j_allow(lb_r4j_breaker *b, cb_ticket *ticket) { return b->allow(ticket); }

LB_BENCH_API int lb_r4j_done(lb_r4j_breaker *b, cb_ticket ticket, int outcome) {
  return b->done(ticket, outcome);
}

}  // extern "C"
