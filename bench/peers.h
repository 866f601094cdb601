// What the benchmark compares lazybreaker against, each behind a C call
// into a shared library of its own so every contender pays the same call
// cost: a do-nothing pair (the floor), a plain mutex-based breaker, and a
// resilience4j-shaped window breaker.
#pragma once

#include <stdint.h>

#include "lazybreaker/lazybreaker.h"

#define LB_BENCH_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* liblb_bench_noop.so: return 0, touch nothing. */
LB_BENCH_API int lb_noop_allow(cb_handle h, cb_ticket *ticket);
LB_BENCH_API int lb_noop_done(cb_handle h, cb_ticket ticket, int outcome);

/* liblb_bench_mutex.so: a consecutive-failures breaker, one std::mutex
 * around state and counts (gobreaker's design). Same statuses as cb_*. */
typedef struct lb_mutex_breaker lb_mutex_breaker;
LB_BENCH_API lb_mutex_breaker *lb_mutex_create(uint32_t failure_threshold,
                                               uint64_t open_duration_ns,
                                               uint32_t half_open_max_calls);
LB_BENCH_API void lb_mutex_destroy(lb_mutex_breaker *b);
LB_BENCH_API int lb_mutex_allow(lb_mutex_breaker *b, cb_ticket *ticket);
LB_BENCH_API int lb_mutex_done(lb_mutex_breaker *b, cb_ticket ticket, int outcome);
LB_BENCH_API int lb_mutex_state(lb_mutex_breaker *b);

/* liblb_bench_r4j.so: a failure-rate breaker shaped like resilience4j's
 * count-based one: CLOSED admits on an atomic load; each outcome takes one
 * lock around a ring of the last window_size outcomes and running totals. */
typedef struct lb_r4j_breaker lb_r4j_breaker;
LB_BENCH_API lb_r4j_breaker *lb_r4j_create(uint32_t window_size, uint32_t minimum_calls,
                                           double failure_rate_percent, uint64_t open_duration_ns);
LB_BENCH_API void lb_r4j_destroy(lb_r4j_breaker *b);
LB_BENCH_API int lb_r4j_allow(lb_r4j_breaker *b, cb_ticket *ticket);
LB_BENCH_API int lb_r4j_done(lb_r4j_breaker *b, cb_ticket ticket, int outcome);

#ifdef __cplusplus
}
#endif
