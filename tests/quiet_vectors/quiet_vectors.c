/* Writes the quiet-path test vectors (docs/fastpath.md, "The vectors"): the
 * decisions of include/lazybreaker/fastpath.h's own functions over hand-picked
 * edges and words from a fixed-seed generator, so every port checks its copy
 * of the rules against the header's.
 *   quiet_vectors <output file> */
#include <errno.h>
#include <inttypes.h>
#include <lazybreaker/fastpath.h>
#include <stdio.h>
#include <string.h>

/* splitmix64: the same words on every machine and every run. */
static uint64_t lb_random_state = 0x9e3779b97f4a7c15ull;
static uint64_t lb_random(void) {
  uint64_t z = (lb_random_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The words (and fold_at, 0x8000) are built from layout 1's numbers
 * written out, not from the header's macros, so that a macro that drifts
 * changes the decisions the file records and every port's test fails. */
static uint64_t lb_handle(uint64_t incarnation, uint64_t slot) {
  return 0xb0000ull << 44 | (incarnation & 0xfffff) << 24 | (slot & 0xffffff);
}

/* [mode:4 | aux:16 | incarnation:20 | period:24] */
static uint64_t lb_word(uint64_t mode, uint64_t aux, uint64_t incarnation, uint64_t period) {
  return mode << 60 | (aux & 0xffff) << 44 | (incarnation & 0xfffff) << 24 | (period & 0xffffff);
}

/* [deadline in units of 2^20 ns:40 | period:24] */
static uint64_t lb_period_word(uint64_t period, uint64_t deadline_ns) {
  return (deadline_ns >> 20) << 24 | (period & 0xffffff);
}

typedef struct lb_counts {
  unsigned allow, done, count;
} lb_counts;

static void lb_allow(FILE *out, lb_counts *n, uint64_t h, uint64_t w, uint64_t p, unsigned lean,
                     uint64_t now) {
  static const char *const names[] = {"library", "admit", "reject"};
  cb_ticket ticket = 0;
  const int decision = cb_fastpath_decide_allow(h, w, p, lean, now, &ticket);
  fprintf(out, "allow %" PRIx64 " %" PRIx64 " %" PRIx64 " %x %" PRIx64 " %s %" PRIx64 "\n", h, w, p,
          lean, now, names[decision], ticket);
  n->allow++;
}

static void lb_done(FILE *out, lb_counts *n, uint64_t h, uint64_t w, uint64_t ticket, int outcome) {
  const int decision = cb_fastpath_decide_done(h, w, ticket, outcome);
  fprintf(out, "done %" PRIx64 " %" PRIx64 " %" PRIx64 " %x %s\n", h, w, ticket, (unsigned)outcome,
          decision == CB_FASTPATH_SUCCESS ? "success" : "library");
  n->done++;
}

static void lb_count(FILE *out, lb_counts *n, uint64_t cell, int f) {
  int fold = 0;
  const uint64_t v = cb_fastpath_count_cell(cell, f, 0x8000u, &fold);
  fprintf(out, "count %" PRIx64 " %x %x %" PRIx64 " %d\n", cell, (unsigned)f, 0x8000u, v, fold);
  n->count++;
}

/* Every mode against handles of the word's life, of the next and the
 * previous life, and made up from its top bits; with lean 0 and 1, and for
 * OPEN every way the period word and the clock can stand. */
static void lb_allow_edges(FILE *out, lb_counts *n) {
  static const uint64_t lives[] = {0, 1, 0x7ffff, 0xfffff};
  static const uint64_t slots[] = {0, 0x400, 0xffffff};
  static const uint64_t periods[] = {0, 1, 0xffffff};
  for (unsigned mode = 0; mode < 16; mode++)
    for (size_t l = 0; l < sizeof lives / sizeof *lives; l++)
      for (size_t s = 0; s < sizeof slots / sizeof *slots; s++) {
        const uint64_t period = periods[(l + s) % 3];
        /* A quiet mode with a failure run is not quiet; an OPEN one says explicit. */
        const uint64_t aux = s == 1 ? 1 : s == 2 ? 0x8001 : 0;
        const uint64_t w = lb_word(mode, aux, lives[l], period);
        const uint64_t h = lb_handle(lives[l], slots[s]);
        const uint64_t deadline = (uint64_t)(s + 3) << 30;
        const uint64_t p = lb_period_word(period, deadline);
        for (unsigned lean = 0; lean < 2; lean++) {
          lb_allow(out, n, h, w, p, lean, deadline - 1);
          lb_allow(out, n, lb_handle(lives[l] + 1, slots[s]), w, p, lean, 0);
          lb_allow(out, n, lb_handle(lives[l] - 1, slots[s]), w, p, lean, 0);
          lb_allow(out, n, (w & ~0xffffffull) | slots[s], w, p, lean, 0);
          lb_allow(out, n, ((w & ~0xffffffull) | slots[s]) & ~(1ull << 63), w, p, lean, 0);
        }
      }
}

static void lb_open_edges(FILE *out, lb_counts *n) {
  static const uint64_t deadlines[] = {1ull << 20, 30000000000ull, 0xfffffffffffull << 20};
  const uint64_t life = 0x12345, period = 0xabcdef;
  const uint64_t h = lb_handle(life, 0x2a);
  for (unsigned forced = 0; forced < 2; forced++) {
    const uint64_t w = lb_word(forced ? CB_FASTPATH_MODE_FORCED_OPEN : CB_FASTPATH_MODE_OPEN,
                               forced ? 0 : 0x8000 + 3, life, period);
    for (unsigned lean = 0; lean < 2; lean++) {
      for (size_t i = 0; i < sizeof deadlines / sizeof *deadlines; i++) {
        const uint64_t d = deadlines[i];
        const uint64_t matching = lb_period_word(period, d);
        lb_allow(out, n, h, w, matching, lean, 0);
        lb_allow(out, n, h, w, matching, lean, d - 1);
        lb_allow(out, n, h, w, matching, lean, d);
        lb_allow(out, n, h, w, matching, lean, d + 1);
        lb_allow(out, n, h, w, matching, lean, UINT64_MAX);
        lb_allow(out, n, h, w, lb_period_word(period + 1, d), lean, d - 1);
        lb_allow(out, n, h, w, lb_period_word(period - 1, d), lean, d - 1);
        lb_allow(out, n, h, w, lb_period_word(period, d) ^ (1ull << 24), lean, d - 1);
        lb_allow(out, n, h, w, lb_period_word(period ^ 0x800000, d), lean, d - 1);
      }
      /* d = 0: a period word with no deadline, or an all-zero one. */
      lb_allow(out, n, h, w, lb_period_word(period, 0), lean, 0);
      lb_allow(out, n, h, w, lb_period_word(period, (1ull << 20) - 1), lean, 0);
      lb_allow(out, n, h, w, 0, lean, 0);
      lb_allow(out, n, lb_handle(0, 0x2a), lb_word(CB_FASTPATH_MODE_OPEN, 1, 0, 0), 0, lean, 0);
    }
  }
}

/* Words from the generator: about half of the handle's life, the mode
 * random, the period word matching half of the time. */
static void lb_allow_random(FILE *out, lb_counts *n, unsigned count) {
  for (unsigned i = 0; i < count; i++) {
    const uint64_t r = lb_random();
    const uint64_t life = lb_random() & 0xfffff;
    const uint64_t period = lb_random() & 0xffffff;
    const uint64_t mode = r & 3   ? (r >> 8) & 0xf
                          : r & 4 ? CB_FASTPATH_MODE_QUIET
                                  : CB_FASTPATH_MODE_OPEN;
    uint64_t w = lb_word(mode, (r >> 16) & 0x1 ? lb_random() : 0, life, period);
    uint64_t h = lb_handle(r & 0x10 ? life : lb_random(), lb_random());
    if ((r & 0x60) == 0) h = lb_random();
    if ((r & 0x380) == 0) w = lb_random();
    const uint64_t deadline = lb_random() >> 4;
    const uint64_t p = lb_period_word(r & 0x400 ? period : lb_random(), deadline);
    const uint64_t now = r & 0x800 ? deadline - (lb_random() & 0xfffff) : lb_random() >> 4;
    lb_allow(out, n, h, w, p, (unsigned)(r >> 12) & 1, now);
  }
}

static void lb_done_edges(FILE *out, lb_counts *n) {
  static const uint64_t lives[] = {0, 0x54321, 0xfffff};
  static const uint64_t slots[] = {0, 0x3ff, 0xffffff};
  static const uint64_t periods[] = {0, 0x800000, 0xffffff};
  for (size_t l = 0; l < 3; l++)
    for (size_t s = 0; s < 3; s++) {
      const uint64_t h = lb_handle(lives[l], slots[s]);
      const uint64_t quiet = lb_word(CB_FASTPATH_MODE_QUIET, 0, lives[l], periods[s]);
      const uint64_t ticket = cb_fastpath_quiet_ticket(h, quiet);
      for (int outcome = CB_SUCCESS; outcome <= CB_IGNORED + 1; outcome++) {
        lb_done(out, n, h, quiet, ticket, outcome);
        lb_done(out, n, h, quiet, ticket + 1, outcome);
        lb_done(out, n, h, quiet, ticket - 1, outcome);
        lb_done(out, n, h, quiet + 1, ticket, outcome); /* the period moved on */
        lb_done(out, n, h, quiet, cb_fastpath_call_ticket(h, quiet), outcome);
        lb_done(out, n, lb_handle(lives[l] + 1, slots[s]), quiet, ticket, outcome);
        lb_done(out, n, quiet, quiet, quiet + quiet, outcome);
        lb_done(out, n, quiet & ~(1ull << 63), quiet & ~(1ull << 63), ticket, outcome);
        for (unsigned mode = 0; mode < 16; mode++) {
          const uint64_t w = lb_word(mode, 0, lives[l], periods[s]);
          lb_done(out, n, h, w, h + w, outcome);
        }
      }
    }
  for (int outcome = CB_SUCCESS; outcome <= CB_IGNORED; outcome++) {
    lb_done(out, n, 0, 0, 0, outcome);
    lb_done(out, n, UINT64_MAX, UINT64_MAX, UINT64_MAX - 1, outcome);
  }
}

static void lb_done_random(FILE *out, lb_counts *n, unsigned count) {
  for (unsigned i = 0; i < count; i++) {
    const uint64_t r = lb_random();
    const uint64_t life = lb_random() & 0xfffff;
    const uint64_t w = lb_word(r & 1 ? CB_FASTPATH_MODE_QUIET : (r >> 8) & 0xf,
                               r & 2 ? 0 : lb_random(), life, lb_random());
    const uint64_t h = lb_handle(r & 4 ? life : lb_random(), lb_random());
    const uint64_t ticket = r & 8 ? h + w : r & 16 ? h + w + ((r >> 20) & 3) - 2 : lb_random();
    lb_done(out, n, h, w, ticket, (int)((r >> 24) % 3));
  }
}

static void lb_count_edges(FILE *out, lb_counts *n) {
  /* A counter never passes fold_at by more than one: its writer folds first. */
  static const uint64_t values[] = {0, 1, 0x1234, 0x7ffe, 0x7fff, 0x8000};
  static const uint64_t others[] = {0, 0xffffffffffffffffull, 0x7fff7fff7fff7fffull,
                                    0x0001000200030004ull};
  for (int f = CB_FASTPATH_ADMITTED; f <= CB_FASTPATH_SUCCESSES; f++) {
    const unsigned shift = CB_FASTPATH_COUNTER_BITS * (unsigned)f;
    for (size_t v = 0; v < sizeof values / sizeof *values; v++)
      for (size_t o = 0; o < sizeof others / sizeof *others; o++)
        lb_count(out, n, (others[o] & ~(0xffffull << shift)) | values[v] << shift, f);
  }
}

static void lb_count_random(FILE *out, lb_counts *n, unsigned count) {
  for (unsigned i = 0; i < count; i++) {
    const uint64_t r = lb_random();
    const int f = (int)(r % 3);
    const unsigned shift = CB_FASTPATH_COUNTER_BITS * (unsigned)f;
    /* Half of them a few counts from fold_at either side. */
    const uint64_t counter = r & 8 ? 0x8000u - 4 + ((r >> 4) % 5) : (r >> 16) % 0x8000u;
    lb_count(out, n, (lb_random() & ~(0xffffull << shift)) | counter << shift, f);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: quiet_vectors <output file>\n");
    return 2;
  }
  FILE *out = fopen(argv[1], "w");
  if (!out) {
    fprintf(stderr, "quiet_vectors: cannot write %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  lb_counts n = {0, 0, 0};
  fprintf(out,
          "# The quiet path's decisions (docs/fastpath.md), computed by the functions of\n"
          "# include/lazybreaker/fastpath.h, layout %u. Numbers are hex.\n"
          "# allow <h> <w> <p> <lean> <now> <decision> <ticket>\n"
          "# done <h> <w> <ticket> <outcome> <decision>\n"
          "# count <cell> <counter> <fold_at> <new_cell> <fold>\n",
          (unsigned)CB_FASTPATH_LAYOUT);
  lb_allow_edges(out, &n);
  lb_open_edges(out, &n);
  lb_allow_random(out, &n, 600);
  lb_done_edges(out, &n);
  lb_done_random(out, &n, 300);
  lb_count_edges(out, &n);
  lb_count_random(out, &n, 200);
  if (fclose(out) != 0) {
    fprintf(stderr, "quiet_vectors: cannot write %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  printf("quiet_vectors: %u allow, %u done, %u count vectors in %s\n", n.allow, n.done, n.count,
         argv[1]);
  return 0;
}
