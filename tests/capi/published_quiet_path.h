/* The published quiet path (lazybreaker/fastpath.h) as a binding in C
 * writes it: the header's loads and rules, wired to the calling thread's
 * stripe, with the library called for anything the rules leave to it. The
 * tests run it against the library's own answers. One writer per stripe
 * (the calling thread's, or a claimed one). */
#ifndef LB_TESTS_PUBLISHED_QUIET_PATH_H
#define LB_TESTS_PUBLISHED_QUIET_PATH_H

#include <lazybreaker/fastpath.h>
#include <stdint.h>
#include <time.h>

typedef struct lb_quiet {
  cb_fastpath fp;
  cb_fastpath_cells cells;
} lb_quiet;

/* 0 when the library publishes the layout the header's rules are written for. */
static inline int lb_quiet_init(lb_quiet *q, int claimed) {
  q->fp.struct_size = sizeof q->fp;
  q->cells.struct_size = sizeof q->cells;
  if (cb_fastpath_describe(&q->fp) != CB_OK || q->fp.layout != CB_FASTPATH_LAYOUT) return -1;
  return claimed ? cb_fastpath_claim_cells(&q->cells) : cb_fastpath_thread_cells(&q->cells);
}

static inline const uint64_t *lb_quiet_line(const lb_quiet *q, cb_handle h) {
  return cb_fastpath_line(&q->fp, h);
}

static inline uint64_t lb_quiet_word(const lb_quiet *q, cb_handle h) {
  return cb_fastpath_load_word(&q->fp, h);
}

static inline int lb_quiet_is_quiet(cb_handle h, uint64_t w) { return cb_fastpath_is_quiet(h, w); }

static inline int lb_quiet_of_life(cb_handle h, uint64_t w) { return cb_fastpath_of_life(h, w); }

static inline void lb_quiet_count(const lb_quiet *q, cb_handle h, int f) {
  cb_fastpath_count(&q->fp, &q->cells, h, f);
}

static inline uint64_t lb_quiet_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the rules reject the call on the breaker whose word is w; the
 * period word and the clock are read only when the OPEN rule needs them. */
static inline int lb_quiet_rejects(const lb_quiet *q, cb_handle h, uint64_t w) {
  const unsigned lean = cb_fastpath_load_lean(&q->fp, h);
  if (!cb_fastpath_needs_clock(h, w, lean)) return cb_fastpath_rejects(h, w, 0, lean, 0);
  return cb_fastpath_rejects(h, w, cb_fastpath_load_period(&q->fp, h), lean,
                             lb_quiet_monotonic_ns());
}

/* cb_allow by the rules: *native says whether the library was left out. */
static inline int lb_quiet_allow(const lb_quiet *q, cb_handle h, cb_ticket *t, int *native) {
  const uint64_t w = lb_quiet_word(q, h);
  *native = 1;
  if (cb_fastpath_admits(h, w, t)) {
    lb_quiet_count(q, h, CB_FASTPATH_ADMITTED);
    return CB_OK;
  }
  if (lb_quiet_rejects(q, h, w)) {
    lb_quiet_count(q, h, CB_FASTPATH_REJECTED);
    return CB_REJECTED;
  }
  *native = 0;
  return cb_allow(h, t);
}

static inline int lb_quiet_done(const lb_quiet *q, cb_handle h, cb_ticket t, int outcome,
                                int *native) {
  const uint64_t w = lb_quiet_word(q, h);
  *native = cb_fastpath_decide_done(h, w, t, outcome) == CB_FASTPATH_SUCCESS;
  if (*native) {
    lb_quiet_count(q, h, CB_FASTPATH_SUCCESSES);
    return CB_OK;
  }
  return cb_done(h, t, outcome);
}

#endif
