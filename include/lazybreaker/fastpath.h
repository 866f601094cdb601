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
 * The rules of layout 1, with h the handle, i = h & ((1 << index_bits) - 1)
 * its slot, L = lines + i * line_words its hot line, and w = L[0] its state
 * word, read with an acquire load (a plain load on x86-64):
 *
 *   quiet:     ((h ^ w) >> index_bits) == 0 && (w >> 63) == 1.
 *              The breaker is the handle's, CLOSED, and a call changes
 *              nothing shared: the consecutive policy with no failure run,
 *              or a count window full of successes (the library makes its
 *              word quiet, and loud again at the first failure).
 *   admit:     if quiet, the call is admitted with ticket h + w (64-bit,
 *              wrapping) and counted CB_FASTPATH_ADMITTED. If the word is
 *              of the handle's life (life test below) and its mode
 *              (w >> 60) is CB_FASTPATH_MODE_WINDOW or
 *              CB_FASTPATH_MODE_RUN, the call is admitted with ticket
 *              h + ((uint64_t)CB_FASTPATH_CALL_TICKET << 60 | (w & 0xffffff))
 *              and counted CB_FASTPATH_ADMITTED; its outcome goes to cb_done.
 *   success:   a ticket t reported CB_SUCCESS with w quiet (read again) and
 *              t == h + w changes nothing: count CB_FASTPATH_SUCCESSES.
 *              Any other outcome or ticket: cb_done.
 *   life:      (h >> 24) == (0xb0000ull << 20 | ((w >> 24) & 0xfffff)): the
 *              word is of the breaker life the handle names, in any state.
 *   reject:    the word is of the handle's life, lean_rejections[i >>
 *              chunk_bits] is not 0, and either the mode is
 *              CB_FASTPATH_MODE_FORCED_OPEN, or the mode is
 *              CB_FASTPATH_MODE_OPEN and, with p = L[open_period_word]
 *              (relaxed) and d = (p >> 24) << 20 when (p & 0xffffff) ==
 *              (w & 0xffffff), else 0: d != 0 and CLOCK_MONOTONIC read now
 *              (any clock that never runs ahead of it) is below d. The call
 *              is rejected: count CB_FASTPATH_REJECTED and return the
 *              rejection; its state is CB_OPEN or CB_FORCED_OPEN as the
 *              mode says. cb_retry_after gives the wait, when asked.
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
 * of 1 << 16f); when the counter's bits reach fold_at ((v >> 16f) & fold_at)
 * it calls cb_fastpath_fold(stripe, h, f) before it counts in that counter
 * again. Touch a cell only after its state word has passed a test above:
 * the cells of slots no breaker has used are not mapped.
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

#ifdef __cplusplus
}
#endif

#endif /* LAZYBREAKER_FASTPATH_H */
