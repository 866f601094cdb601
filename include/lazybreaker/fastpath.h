/*
 * lazybreaker: the published quiet path. @since 1.3
 *
 * What a binding needs to admit a CLOSED call, report its success, and
 * reject an OPEN call far from its deadline without calling the library:
 * where a handle's breaker keeps its state word, how to read that word, and
 * where the calling thread counts. Every transition is still made by the
 * library; a binding that finds anything not quiet calls cb_allow or
 * cb_done as it would have anyway, and nothing it did here needs undoing.
 * The counts a binding makes here are the library's own counters, so
 * cb_stats, the Prometheus text, other processes of a shared registry file
 * and other languages see them at once and exactly.
 *
 * cb_fastpath_describe() fills a cb_fastpath with the addresses and the
 * layout. A binding implements one layout (CB_FASTPATH_LAYOUT when it was
 * written) and takes the quiet path only if the library publishes that one;
 * under any other it calls the library for everything, which is always
 * correct.
 *
 * Layout 1 fixes every number below, and cb_fastpath_describe() reports the
 * same ones in its fields, so a binding that checked layout == 1 may use
 * either: index_bits 24 (CB_FASTPATH_INDEX_BITS), line_words 8
 * (CB_FASTPATH_LINE_WORDS), open_period_word 7 (CB_FASTPATH_OPEN_PERIOD_WORD),
 * chunk_bits 10 (CB_FASTPATH_CHUNK_BITS), fold_at 0x8000
 * (CB_FASTPATH_FOLD_AT), 16-bit counters (CB_FASTPATH_COUNTER_BITS), the life
 * tag 0xb0000 (CB_FASTPATH_LIFE_TAG) above a 20-bit incarnation
 * (CB_FASTPATH_LIFE_MASK), the 24-bit period (CB_FASTPATH_PERIOD_MASK), the
 * mode in bits 60..63 (CB_FASTPATH_MODE_SHIFT) and the deadline in bits
 * 24..63 of the period word, in units of 2^20 ns (CB_FASTPATH_DEADLINE_SHIFT,
 * CB_FASTPATH_DEADLINE_UNIT_SHIFT). The addresses (lines, lean_rejections)
 * are the only things a binding must take from cb_fastpath_describe().
 *
 * The rules of layout 1, with h the handle, i = h & 0xffffff its slot,
 * L = lines + i * 8 its hot line, w = L[0] its state word (an acquire load,
 * a plain load on x86-64), p = L[7] its OPEN period word (a relaxed load),
 * lean = lean_rejections[i >> 10] (a relaxed load), all arithmetic unsigned
 * 64-bit and wrapping. Each rule is also written once, after this comment,
 * as a static inline function of these values (cb_fastpath_*), which a
 * binding in C calls and a binding in another language ports and checks
 * against the vectors of docs/fastpath.md:
 *
 *   quiet:     ((h ^ w) >> 24) == 0 && (w >> 63) == 1.
 *              The breaker is the handle's, CLOSED, and a call changes
 *              nothing shared: the consecutive policy with no failure run,
 *              or a count window full of successes (the library makes its
 *              word quiet, and loud again at the first failure).
 *   life:      (h >> 24) == (0xb0000 << 20 | ((w >> 24) & 0xfffff)): the
 *              word is of the breaker life the handle names, in any state.
 *   admit:     if quiet, the call is admitted with ticket h + w and counted
 *              CB_FASTPATH_ADMITTED. Else if the word is of the handle's
 *              life and its mode (w >> 60) is CB_FASTPATH_MODE_WINDOW or
 *              CB_FASTPATH_MODE_RUN, the call is admitted with ticket
 *              h + (0xc << 60 | (w & 0xffffff)) (0xc is
 *              CB_FASTPATH_CALL_TICKET) and counted CB_FASTPATH_ADMITTED;
 *              its outcome goes to cb_done.
 *   reject:    else if the word is of the handle's life, lean is not 0, and
 *              either the mode is CB_FASTPATH_MODE_FORCED_OPEN, or the mode
 *              is CB_FASTPATH_MODE_OPEN and, with
 *              d = (p >> 24) << 20 when (p & 0xffffff) == (w & 0xffffff),
 *              else 0: d != 0 and now < d, now being CLOCK_MONOTONIC read
 *              after w (any clock that never runs ahead of it). The call is
 *              rejected: count CB_FASTPATH_REJECTED and return the
 *              rejection; its state is CB_OPEN or CB_FORCED_OPEN as the
 *              mode says. cb_retry_after gives the wait, when asked.
 *   success:   a ticket t reported CB_SUCCESS with w quiet (read again) and
 *              t == h + w changes nothing: count CB_FASTPATH_SUCCESSES.
 *              Any other outcome or ticket: cb_done.
 *   otherwise: cb_allow (cb_done), which decides, counts and transitions.
 *
 * The clock of the reject rule: CLOCK_MONOTONIC in nanoseconds on Linux.
 * On Windows (lazybreaker.dll) the library's monotonic clock is
 * QueryPerformanceCounter in nanoseconds, computed exactly as
 * (c / f) * 1000000000 + (c % f) * 1000000000 / f in unsigned 64-bit
 * arithmetic, with c = QueryPerformanceCounter and
 * f = QueryPerformanceFrequency; a binding compares d with that (any other
 * Windows clock, GetTickCount64 or the interrupt time, is another time base
 * and may run ahead of it), or with cb_clock_now(reg) of the handle's
 * registry, which reads the same clock. (lean_rejections is 0 for a
 * registry on the manual clock, so its breakers never reject here.)
 *
 * Counting: a cb_fastpath_cells is a stripe of counter cells that one
 * writer at a time owns. Slot i's cell is the 64-bit word cells[i]: four
 * 16-bit counters, counter f in bits 16f..16f+15. The owner counts with
 * v = cells[i] + (1 << 16f) stored whole (a release store, or an atomic add
 * of 1 << 16f); when the counter's bits reach fold_at, that is when
 * ((v >> 16f) & 0x8000) != 0, it calls cb_fastpath_fold(stripe, h, f) before
 * it counts in that counter again. Touch a cell only after its state word
 * has passed a test above: the cells of slots no breaker has used are not
 * mapped.
 *
 * Stripes: cb_fastpath_thread_cells() gives the calling OS thread's own
 * stripe, the one the library counts that thread's calls in; only that
 * thread may write it, and it lasts until the thread exits. A runtime whose
 * code moves between threads (goroutines, coroutines) takes stripes of its
 * own with cb_fastpath_claim_cells() and keeps to one writer at a time per
 * stripe itself, until cb_fastpath_release_cells(). A process has at most
 * 64 stripes; when none is free these return CB_EFULL and the caller takes
 * the library's path, which is always correct.
 */
#ifndef LAZYBREAKER_FASTPATH_H
#define LAZYBREAKER_FASTPATH_H

#include "lazybreaker/lazybreaker.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The layout these rules describe. */
#define CB_FASTPATH_LAYOUT 1u

/** @name State-word modes (w >> 60) the rules name
 *  @{ */
#define CB_FASTPATH_MODE_OPEN 1u
#define CB_FASTPATH_MODE_RUN 3u /**< CLOSED, consecutive, a failure run under way */
#define CB_FASTPATH_MODE_FORCED_OPEN 4u
#define CB_FASTPATH_MODE_WINDOW 7u /**< CLOSED, a count or time window, calls not timed */
#define CB_FASTPATH_MODE_QUIET 0xbu
/** The top nibble of a CLOSED call's ticket (before the handle is added). */
#define CB_FASTPATH_CALL_TICKET 0xcu
/** @} */

/** @name Counters of a cell (the f of 1 << 16f)
 *  @{ */
#define CB_FASTPATH_ADMITTED 0
#define CB_FASTPATH_REJECTED 1
#define CB_FASTPATH_SUCCESSES 2
/** @} */

/** @name The numbers layout 1 fixes (the rules above)
 *  @{ */
#define CB_FASTPATH_INDEX_BITS 24u /**< h's slot is its low 24 bits */
#define CB_FASTPATH_INDEX_MASK 0xffffffu
#define CB_FASTPATH_LINE_WORDS 8u       /**< 64-bit words per hot line */
#define CB_FASTPATH_OPEN_PERIOD_WORD 7u /**< the OPEN period word's place in a line */
#define CB_FASTPATH_CHUNK_BITS 10u      /**< a lean_rejections byte per 2^10 slots */
#define CB_FASTPATH_MODE_SHIFT 60u      /**< the mode is w >> 60 */
/** h >> CB_FASTPATH_LIFE_SHIFT is the life a handle names: the life tag,
 *  then the breaker's incarnation, which is (w >> 24) & CB_FASTPATH_LIFE_MASK. */
#define CB_FASTPATH_LIFE_SHIFT 24u
#define CB_FASTPATH_LIFE_TAG 0xb0000u
#define CB_FASTPATH_LIFE_BITS 20u
#define CB_FASTPATH_LIFE_MASK 0xfffffu
/** The period (epoch) in the low 24 bits of a state word and of an OPEN period word. */
#define CB_FASTPATH_PERIOD_MASK 0xffffffu
/** The OPEN period word's deadline: (p >> 24) << 20, in nanoseconds. */
#define CB_FASTPATH_DEADLINE_SHIFT 24u
#define CB_FASTPATH_DEADLINE_UNIT_SHIFT 20u
#define CB_FASTPATH_COUNTER_BITS 16u /**< counter f of a cell is bits 16f..16f+15 */
#define CB_FASTPATH_FOLD_AT 0x8000u
/** @} */

/** @name What the rules decide (cb_fastpath_decide_allow, cb_fastpath_decide_done)
 *  @{ */
#define CB_FASTPATH_LIBRARY 0 /**< call cb_allow (cb_done): the library decides */
#define CB_FASTPATH_ADMIT 1   /**< admitted with the ticket given; count CB_FASTPATH_ADMITTED */
#define CB_FASTPATH_REJECT 2  /**< rejected; count CB_FASTPATH_REJECTED */
#define CB_FASTPATH_SUCCESS 3 /**< the success changes nothing; count CB_FASTPATH_SUCCESSES */
/** @} */

/** Where the quiet path's words are, and its layout. Set struct_size to
 *  sizeof(cb_fastpath); the library fills the rest. The addresses stay
 *  valid, and their contents readable, for the life of the process. */
typedef struct cb_fastpath {
  size_t struct_size;
  uint32_t layout;                /**< CB_FASTPATH_LAYOUT of the library */
  uint32_t index_bits;            /**< 24: h's slot is its low index_bits bits */
  const uint64_t *lines;          /**< the hot lines, line_words words each */
  uint32_t line_words;            /**< 8 */
  uint32_t open_period_word;      /**< 7: the OPEN period's cached deadline in a line */
  const uint8_t *lean_rejections; /**< a byte per 2^chunk_bits slots */
  uint32_t chunk_bits;            /**< 10 */
  uint32_t fold_at;               /**< 0x8000 */
} cb_fastpath;

/** A stripe of counter cells, for one writer at a time. */
typedef struct cb_fastpath_cells {
  size_t struct_size;
  uint64_t *cells;  /**< slot i's cell is cells[i] */
  uint32_t stripe;  /**< for cb_fastpath_fold and cb_fastpath_release_cells */
  uint32_t claimed; /**< 1: from cb_fastpath_claim_cells; 0: the thread's own */
} cb_fastpath_cells;

/** Fills `out` (struct_size set by the caller; a smaller, older struct is
 *  filled as far as it goes). Reserves the process's breaker space if no
 *  registry has yet, so the addresses are final.
 *  @return CB_OK; CB_EINVAL for NULL or a struct_size below the 1.3 one;
 *          CB_ENOMEM if the space cannot be reserved. @since 1.3
 *  Thread safety: any thread. */
CB_API int cb_fastpath_describe(cb_fastpath *out) CB_NOEXCEPT;

/** The calling OS thread's own stripe, taking one for it if it has none.
 *  @return CB_OK; CB_EINVAL for NULL or a short struct; CB_EFULL if the
 *          thread counts in the shared totals (every stripe taken).
 *  @since 1.3
 *  Thread safety: any thread. */
CB_API int cb_fastpath_thread_cells(cb_fastpath_cells *out) CB_NOEXCEPT;

/** A stripe owned by no thread, for the caller to keep to one writer at a
 *  time until it releases it.
 *  @return CB_OK; CB_EINVAL for NULL or a short struct; CB_EFULL if every
 *          stripe is taken. @since 1.3
 *  Thread safety: any thread. */
CB_API int cb_fastpath_claim_cells(cb_fastpath_cells *out) CB_NOEXCEPT;

/** Gives back a stripe from cb_fastpath_claim_cells; its counts stay
 *  counted. Nobody may write it after this.
 *  @return CB_OK; CB_EINVAL if `stripe` is not a claimed stripe. @since 1.3
 *  Thread safety: any thread. */
CB_API int cb_fastpath_release_cells(uint32_t stripe) CB_NOEXCEPT;

/** Moves fold_at counts of counter `counter` of the cell of `h`'s slot in
 *  `stripe` into the breaker's totals, where every reader sees them. Call
 *  it as the stripe's writer (the thread itself for a thread's stripe), when
 *  the counter has reached fold_at; `h` may have been destroyed since.
 *  @return CB_OK; CB_EINVAL (field named) for a stripe the caller cannot
 *          own, a counter out of range, or a counter below fold_at;
 *          CB_EHANDLE for a value that is no handle. @since 1.3
 *  Thread safety: not with other calls on the same object. The object is
 *  the stripe: its one writer calls this. */
CB_API int cb_fastpath_fold(uint32_t stripe, cb_handle h, int counter) CB_NOEXCEPT;

/* The rules, each over values only: a binding loads the words (below, or
 * in its own language), then decides with these. None reads memory, so each
 * gives the same answer in every port, checked by the vectors of
 * docs/fastpath.md. In C++14 and later they are constexpr, so the library
 * proves them equal to its own at compile time (src/capi/fastpath.cpp). */
/* A conversion that C and C++ both write without a warning. */
#ifdef __cplusplus
#define CB_FASTPATH_AS(type, value) static_cast<type>(value)
#else
#define CB_FASTPATH_AS(type, value) ((type)(value))
#endif
#if defined(__cplusplus) && __cplusplus >= 201402L
#define CB_FASTPATH_INLINE static constexpr
#else
#define CB_FASTPATH_INLINE static inline
#endif

/** Slot i of the handle: its hot line is lines + i * CB_FASTPATH_LINE_WORDS. */
CB_FASTPATH_INLINE uint32_t cb_fastpath_slot(cb_handle h) {
  return CB_FASTPATH_AS(uint32_t, h & CB_FASTPATH_INDEX_MASK);
}

/** The lean_rejections byte of slot i. */
CB_FASTPATH_INLINE uint32_t cb_fastpath_chunk(uint32_t slot) {
  return slot >> CB_FASTPATH_CHUNK_BITS;
}

/** The mode of the state word w, 0..15. */
CB_FASTPATH_INLINE unsigned cb_fastpath_mode(uint64_t w) {
  return CB_FASTPATH_AS(unsigned, w >> CB_FASTPATH_MODE_SHIFT);
}

/** 1 if w is quiet and the handle's: its calls change nothing shared. */
CB_FASTPATH_INLINE int cb_fastpath_is_quiet(cb_handle h, uint64_t w) {
  return ((h ^ w) >> CB_FASTPATH_INDEX_BITS) == 0 && (w >> 63) == 1;
}

/** 1 if w is of the breaker life h names, in any state. A made-up h whose
 *  top bits are not the life tag names no life. */
CB_FASTPATH_INLINE int cb_fastpath_of_life(cb_handle h, uint64_t w) {
  const uint64_t incarnation = (w >> CB_FASTPATH_LIFE_SHIFT) & CB_FASTPATH_LIFE_MASK;
  return (h >> CB_FASTPATH_LIFE_SHIFT) ==
         (CB_FASTPATH_AS(uint64_t, CB_FASTPATH_LIFE_TAG) << CB_FASTPATH_LIFE_BITS | incarnation);
}

/** The quiet ticket of h under the quiet word w: h + w, wrapping. */
CB_FASTPATH_INLINE cb_ticket cb_fastpath_quiet_ticket(cb_handle h, uint64_t w) { return h + w; }

/** The ticket of a CLOSED call admitted in a window or a failure run. */
CB_FASTPATH_INLINE cb_ticket cb_fastpath_call_ticket(cb_handle h, uint64_t w) {
  return h + (CB_FASTPATH_AS(uint64_t, CB_FASTPATH_CALL_TICKET) << CB_FASTPATH_MODE_SHIFT |
              (w & CB_FASTPATH_PERIOD_MASK));
}

/** The OPEN period's deadline in ns that p caches for the period of w; 0
 *  when p is another period's or holds none. */
CB_FASTPATH_INLINE uint64_t cb_fastpath_deadline(uint64_t w, uint64_t p) {
  if (((p ^ w) & CB_FASTPATH_PERIOD_MASK) != 0) return 0;
  return (p >> CB_FASTPATH_DEADLINE_SHIFT) << CB_FASTPATH_DEADLINE_UNIT_SHIFT;
}

/** 1 if the call is admitted on w alone (quiet, or CLOSED in a window or a
 *  failure run), with its ticket in *ticket; 0 otherwise, *ticket untouched. */
CB_FASTPATH_INLINE int cb_fastpath_admits(cb_handle h, uint64_t w, cb_ticket *ticket) {
  if (cb_fastpath_is_quiet(h, w)) {
    *ticket = cb_fastpath_quiet_ticket(h, w);
    return 1;
  }
  const unsigned mode = cb_fastpath_mode(w);
  if ((mode == CB_FASTPATH_MODE_WINDOW || mode == CB_FASTPATH_MODE_RUN) &&
      cb_fastpath_of_life(h, w)) {
    *ticket = cb_fastpath_call_ticket(h, w);
    return 1;
  }
  return 0;
}

/** 1 if a call that cb_fastpath_admits did not admit is rejected only when
 *  p and now say so (the OPEN rule): a binding reads the clock only then. */
CB_FASTPATH_INLINE int cb_fastpath_needs_clock(cb_handle h, uint64_t w, unsigned lean) {
  return lean != 0 && cb_fastpath_mode(w) == CB_FASTPATH_MODE_OPEN && cb_fastpath_of_life(h, w);
}

/** 1 if a call that cb_fastpath_admits did not admit is rejected: lean is
 *  the chunk's lean_rejections byte, now the monotonic clock read after w. */
CB_FASTPATH_INLINE int cb_fastpath_rejects(cb_handle h, uint64_t w, uint64_t p, unsigned lean,
                                           uint64_t now) {
  if (lean == 0 || !cb_fastpath_of_life(h, w)) return 0;
  if (cb_fastpath_mode(w) == CB_FASTPATH_MODE_FORCED_OPEN) return 1;
  if (cb_fastpath_mode(w) != CB_FASTPATH_MODE_OPEN) return 0;
  const uint64_t deadline = cb_fastpath_deadline(w, p);
  return deadline != 0 && now < deadline;
}

/** The allow rule whole: CB_FASTPATH_ADMIT (*ticket set), CB_FASTPATH_REJECT
 *  or CB_FASTPATH_LIBRARY (*ticket 0 for both). */
CB_FASTPATH_INLINE int cb_fastpath_decide_allow(cb_handle h, uint64_t w, uint64_t p, unsigned lean,
                                                uint64_t now, cb_ticket *ticket) {
  *ticket = 0;
  if (cb_fastpath_admits(h, w, ticket)) return CB_FASTPATH_ADMIT;
  return cb_fastpath_rejects(h, w, p, lean, now) ? CB_FASTPATH_REJECT : CB_FASTPATH_LIBRARY;
}

/** The done rule: CB_FASTPATH_SUCCESS when a success of ticket t on the
 *  word w (read again at the report) changes nothing, else CB_FASTPATH_LIBRARY. */
CB_FASTPATH_INLINE int cb_fastpath_decide_done(cb_handle h, uint64_t w, cb_ticket ticket,
                                               int outcome) {
  return outcome == CB_SUCCESS && cb_fastpath_is_quiet(h, w) &&
                 ticket == cb_fastpath_quiet_ticket(h, w)
             ? CB_FASTPATH_SUCCESS
             : CB_FASTPATH_LIBRARY;
}

/** The cell after counting one in counter f (CB_FASTPATH_ADMITTED,
 *  CB_FASTPATH_REJECTED or CB_FASTPATH_SUCCESSES); *fold is 1 when the
 *  writer must call cb_fastpath_fold(stripe, h, f) before it counts in that
 *  counter again. fold_at is cb_fastpath.fold_at (CB_FASTPATH_FOLD_AT). */
CB_FASTPATH_INLINE uint64_t cb_fastpath_count_cell(uint64_t cell, int f, uint32_t fold_at,
                                                   int *fold) {
  const unsigned shift = CB_FASTPATH_COUNTER_BITS * CB_FASTPATH_AS(unsigned, f);
  const uint64_t v = cell + (CB_FASTPATH_AS(uint64_t, 1) << shift);
  *fold = ((v >> shift) & fold_at) != 0;
  return v;
}

#if defined(__GNUC__) || defined(__clang__)
/* The loads the rules read, for C with GCC's atomic builtins; fp is the
 * library's description (layout 1). */

/** The hot line of h. */
static inline const uint64_t *cb_fastpath_line(const cb_fastpath *fp, cb_handle h) {
  return fp->lines + CB_FASTPATH_AS(size_t, cb_fastpath_slot(h)) * CB_FASTPATH_LINE_WORDS;
}

/** The state word of h's slot (acquire). */
static inline uint64_t cb_fastpath_load_word(const cb_fastpath *fp, cb_handle h) {
  return __atomic_load_n(cb_fastpath_line(fp, h), __ATOMIC_ACQUIRE);
}

/** The OPEN period word of h's slot (relaxed). */
static inline uint64_t cb_fastpath_load_period(const cb_fastpath *fp, cb_handle h) {
  return __atomic_load_n(cb_fastpath_line(fp, h) + CB_FASTPATH_OPEN_PERIOD_WORD, __ATOMIC_RELAXED);
}

/** The lean_rejections byte of h's slot's chunk (relaxed). */
static inline unsigned cb_fastpath_load_lean(const cb_fastpath *fp, cb_handle h) {
  return __atomic_load_n(fp->lean_rejections + cb_fastpath_chunk(cb_fastpath_slot(h)),
                         __ATOMIC_RELAXED);
}

/** Counts one in counter f of h's cell in the stripe the caller writes,
 *  folding when the rule says to. Only after h's word passed a rule. */
static inline void cb_fastpath_count(const cb_fastpath *fp, const cb_fastpath_cells *cells,
                                     cb_handle h, int f) {
  uint64_t *cell = cells->cells + cb_fastpath_slot(h);
  int fold = 0;
  const uint64_t v =
      cb_fastpath_count_cell(__atomic_load_n(cell, __ATOMIC_RELAXED), f, fp->fold_at, &fold);
  __atomic_store_n(cell, v, __ATOMIC_RELEASE);
  if (fold) (void)cb_fastpath_fold(cells->stripe, h, f);
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* LAZYBREAKER_FASTPATH_H */
