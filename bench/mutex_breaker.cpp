// The baseline: a plain consecutive-failures circuit breaker as most
// libraries write it (gobreaker's design): one std::mutex around the state,
// a generation and the counts. cb_allow's semantics: allow checks (and may
// move) the state under the lock and counts the request; done updates the
// counts and may trip, under the same lock. Written to be fast, not to be
// beaten: the clock is read only when OPEN (gobreaker reads it on every
// call), and nothing is allocated.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <new>

#include "bench/peers.h"

namespace {

enum class St { Closed, Open, HalfOpen };

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

}  // namespace

struct lb_mutex_breaker {
  // Configuration.
  uint32_t failure_threshold;
  uint64_t open_duration_ns;
  uint32_t half_open_max_calls;

  std::mutex mu;
  St state = St::Closed;
  uint64_t generation = 1;  // a ticket is its generation: never 0
  uint64_t opened_at = 0;
  uint32_t consecutive_failures = 0;
  uint32_t half_open_in_flight = 0;
  // Statistics, like cb_stats.
  uint64_t admitted = 0, rejected = 0, successes = 0, failures = 0, ignored = 0, trips = 0;

  void to(St s, uint64_t now) {
    state = s;
    ++generation;
    consecutive_failures = 0;
    half_open_in_flight = 0;
    if (s == St::Open) {
      opened_at = now;
      ++trips;
    }
  }

  int allow(cb_ticket *ticket) {
    std::lock_guard<std::mutex> lock(mu);
    if (state == St::Open) {
      const uint64_t now = now_ns();
      if (now - opened_at < open_duration_ns) {
        ++rejected;
        return CB_REJECTED;
      }
      to(St::HalfOpen, now);
    }
    if (state == St::HalfOpen) {
      if (half_open_in_flight >= half_open_max_calls) {
        ++rejected;
        return CB_REJECTED;
      }
      ++half_open_in_flight;
    }
    ++admitted;
    *ticket = generation;
    return CB_OK;
  }

  int done(cb_ticket ticket, int outcome) {
    std::lock_guard<std::mutex> lock(mu);
    switch (outcome) {
      case CB_SUCCESS:
        ++successes;
        break;
      case CB_FAILURE:
        ++failures;
        break;
      case CB_IGNORED:
        ++ignored;
        break;
      default:
        return CB_EINVAL;
    }
    if (ticket != generation || outcome == CB_IGNORED) return CB_OK;  // an older period
    if (state == St::Closed) {
      if (outcome == CB_SUCCESS)
        consecutive_failures = 0;
      else if (++consecutive_failures >= failure_threshold)
        to(St::Open, now_ns());
    } else if (state == St::HalfOpen) {
      if (outcome == CB_SUCCESS)
        to(St::Closed, 0);
      else
        to(St::Open, now_ns());
    }
    return CB_OK;
  }
};

extern "C" {

LB_BENCH_API lb_mutex_breaker *lb_mutex_create(uint32_t failure_threshold,
                                               uint64_t open_duration_ns,
                                               uint32_t half_open_max_calls) {
  auto *b = new (std::nothrow) lb_mutex_breaker;
  if (b == nullptr) return nullptr;
  b->failure_threshold = failure_threshold;
  b->open_duration_ns = open_duration_ns;
  b->half_open_max_calls = half_open_max_calls;
  return b;
}

LB_BENCH_API void lb_mutex_destroy(lb_mutex_breaker *b) { delete b; }

LB_BENCH_API int lb_mutex_allow(lb_mutex_breaker *b, cb_ticket *ticket) { return b->allow(ticket); }

LB_BENCH_API int lb_mutex_done(lb_mutex_breaker *b, cb_ticket ticket, int outcome) {
  return b->done(ticket, outcome);
}

LB_BENCH_API int lb_mutex_state(lb_mutex_breaker *b) {
  std::lock_guard<std::mutex> lock(b->mu);
  return b->state == St::Closed ? CB_STATE_CLOSED
         : b->state == St::Open ? CB_STATE_OPEN
                                : CB_STATE_HALF_OPEN;
}

}  // extern "C"
