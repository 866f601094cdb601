/* The published quiet path (lazybreaker/fastpath.h) written from the
 * header's rules alone, as a binding writes it in its own language: the
 * tests run it against the library's own answers. Plain C, one writer per
 * stripe (the calling thread's). */
#ifndef LB_TESTS_PUBLISHED_QUIET_PATH_H
#define LB_TESTS_PUBLISHED_QUIET_PATH_H

#include <lazybreaker/fastpath.h>
#include <stdint.h>
#include <time.h>

typedef struct lb_quiet {
  cb_fastpath fp;
  cb_fastpath_cells cells;
} lb_quiet;

/* 0 when the library publishes the layout these rules are written for. */
static inline int lb_quiet_init(lb_quiet *q, int claimed) {
  q->fp.struct_size = sizeof q->fp;
  q->cells.struct_size = sizeof q->cells;
  if (cb_fastpath_describe(&q->fp) != CB_OK || q->fp.layout != 1) return -1;
  return claimed ? cb_fastpath_claim_cells(&q->cells) : cb_fastpath_thread_cells(&q->cells);
}

static inline const uint64_t *lb_quiet_line(const lb_quiet *q, cb_handle h) {
  return q->fp.lines + (h & ((1ull << q->fp.index_bits) - 1)) * q->fp.line_words;
}

static inline uint64_t lb_quiet_word(const lb_quiet *q, cb_handle h) {
  return __atomic_load_n(lb_quiet_line(q, h), __ATOMIC_ACQUIRE);
}

static inline int lb_quiet_is_quiet(cb_handle h, uint64_t w) {
  return ((h ^ w) >> 24) == 0 && (w >> 63) == 1;
}

static inline int lb_quiet_of_life(cb_handle h, uint64_t w) {
  return (h >> 24) == (0xb0000ull << 20 | ((w >> 24) & 0xfffff));
}

static inline void lb_quiet_count(const lb_quiet *q, cb_handle h, int f) {
  uint64_t *cell = q->cells.cells + (h & ((1ull << q->fp.index_bits) - 1));
  const uint64_t v = __atomic_load_n(cell, __ATOMIC_RELAXED) + (1ull << (16 * f));
  __atomic_store_n(cell, v, __ATOMIC_RELEASE);
  if ((v >> (16 * f)) & q->fp.fold_at) cb_fastpath_fold(q->cells.stripe, h, f);
}

static inline uint64_t lb_quiet_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the rules reject the call on the breaker whose word is w. */
static inline int lb_quiet_rejects(const lb_quiet *q, cb_handle h, uint64_t w) {
  const uint64_t i = h & ((1ull << q->fp.index_bits) - 1);
  if (!lb_quiet_of_life(h, w) ||
      __atomic_load_n(&q->fp.lean_rejections[i >> q->fp.chunk_bits], __ATOMIC_RELAXED) == 0)
    return 0;
  if ((w >> 60) == CB_FASTPATH_MODE_FORCED_OPEN) return 1;
  if ((w >> 60) != CB_FASTPATH_MODE_OPEN) return 0;
  const uint64_t p =
      __atomic_load_n(lb_quiet_line(q, h) + q->fp.open_period_word, __ATOMIC_RELAXED);
  const uint64_t d = ((p ^ w) & 0xffffff) == 0 ? (p >> 24) << 20 : 0;
  return d != 0 && lb_quiet_monotonic_ns() < d;
}

/* cb_allow by the rules: *native says whether the library was left out. */
static inline int lb_quiet_allow(const lb_quiet *q, cb_handle h, cb_ticket *t, int *native) {
  const uint64_t w = lb_quiet_word(q, h);
  *native = 1;
  if (lb_quiet_is_quiet(h, w)) {
    *t = h + w;
    lb_quiet_count(q, h, CB_FASTPATH_ADMITTED);
    return CB_OK;
  }
  const unsigned mode = (unsigned)(w >> 60);
  if (lb_quiet_of_life(h, w) && (mode == CB_FASTPATH_MODE_WINDOW || mode == CB_FASTPATH_MODE_RUN)) {
    *t = h + ((uint64_t)CB_FASTPATH_CALL_TICKET << 60 | (w & 0xffffff));
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
  *native = outcome == CB_SUCCESS && lb_quiet_is_quiet(h, w) && t == h + w;
  if (*native) {
    lb_quiet_count(q, h, CB_FASTPATH_SUCCESSES);
    return CB_OK;
  }
  return cb_done(h, t, outcome);
}

#endif
