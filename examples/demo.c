/*
 * lazybreaker-demo: a circuit breaker in front of a simulated flaky
 * dependency, on a manual clock, so every run prints the same timeline:
 * the breaker trips, fails fast, sends a probe that fails and re-opens it,
 * then a probe that succeeds and closes it.
 *
 * The dependency is healthy, then down from t=400ms until t=8000ms. Calls
 * arrive at the times in `schedule` below. C99, the C ABI only.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazybreaker/lazybreaker.h"

#define MS ((uint64_t)1000000) /* nanoseconds per millisecond */

static const uint64_t kDownFromMs = 400, kUpAgainMs = 8000;

/* When calls arrive, in milliseconds of the manual clock. */
static const uint64_t schedule[] = {0,    100,  200,  300,  400,  500,   600,   700,  1000,
                                    3000, 5599, 5600, 5700, 9000, 10600, 10700, 10800};

/* A state's name in capitals, e.g. "HALF_OPEN", from cb_state_name: one
 * buffer per state, so that two names can be printed together. */
static const char *state_name(int s) {
  static char upper[CB_STATE_DISABLED + 1][16];
  const char *name = cb_state_name(s);
  size_t i = 0;
  if (name == NULL) return cb_strerror(s);
  for (; name[i] != '\0' && i + 1 < sizeof upper[s]; ++i)
    upper[s][i] = (char)toupper((unsigned char)name[i]);
  upper[s][i] = '\0';
  return upper[s];
}

/* Exits with the library's message if st is an error. */
static int check(int st, const char *what) {
  if (st < 0) {
    fprintf(stderr, "lazybreaker-demo: %s: %s (%s)\n", what, cb_strerror(st),
            cb_last_error_message());
    exit(EXIT_FAILURE);
  }
  return st;
}

/* The simulated dependency: does a call at `now_ms` succeed? */
static int dependency_call(uint64_t now_ms) { return now_ms < kDownFromMs || now_ms >= kUpAgainMs; }

/* Prints " STATE_A -> STATE_B" if the state moved, and returns the new one. */
static int note_transition(cb_handle h, int before) {
  const int after = check(cb_state(h), "cb_state");
  if (after == before) return after;
  printf("   %s -> %s", state_name(before), state_name(after));
  if (before == CB_STATE_CLOSED && after == CB_STATE_OPEN) printf(" (tripped)");
  if (before == CB_STATE_OPEN && after == CB_STATE_HALF_OPEN) printf(" (probing)");
  if (before == CB_STATE_HALF_OPEN && after == CB_STATE_OPEN) printf(" (probe failed)");
  if (before == CB_STATE_HALF_OPEN && after == CB_STATE_CLOSED) printf(" (recovered)");
  return after;
}

static const char kUsage[] =
    "usage: lazybreaker-demo [--help]\n"
    "\n"
    "Drives one lazybreaker circuit breaker in front of a simulated dependency\n"
    "that fails from t=400ms until t=8000ms, on a manual clock, and prints the\n"
    "timeline: the trip, fast failures with the time until a retry, a probe\n"
    "that fails and re-opens the breaker, one that succeeds and closes it,\n"
    "then the breaker's statistics. Every run prints the same.\n"
    "\n"
    "  -h, --help  print this help and exit\n";

int main(int argc, char **argv) {
  cb_registry_options opts;
  cb_registry *reg = NULL;
  cb_config cfg;
  cb_handle h = 0;
  cb_stats stats;
  uint64_t now_ms = 0;
  size_t i;
  int state;

  if (argc > 1) {
    const int help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    fputs(kUsage, help ? stdout : stderr);
    return help ? 0 : 2;
  }
  cb_registry_options_init(&opts);
  opts.clock = CB_CLOCK_MANUAL;
  check(cb_registry_open(&opts, &reg), "cb_registry_open");

  cb_config_init(&cfg);
  cfg.failure_threshold = 3;
  cfg.open_duration_ns = 5000 * MS;
  check(cb_create(reg, "inventory-service", &cfg, &h), "cb_create");

  printf("lazybreaker %s demo: breaker 'inventory-service'\n", cb_version_string());
  printf("  trips after %" PRIu32 " consecutive failures, stays open %" PRIu64
         " ms, "
         "%" PRIu32 " probe at a time\n",
         cfg.failure_threshold, cfg.open_duration_ns / MS, cfg.half_open_max_calls);
  printf("  the dependency is down from t=%" PRIu64 "ms to t=%" PRIu64 "ms\n\n", kDownFromMs,
         kUpAgainMs);

  state = check(cb_state(h), "cb_state");
  for (i = 0; i < sizeof schedule / sizeof schedule[0]; ++i) {
    cb_ticket ticket = 0;
    int st;
    check(cb_clock_advance(reg, (schedule[i] - now_ms) * MS), "cb_clock_advance");
    now_ms = schedule[i];
    printf("t=%6" PRIu64 "ms  call #%-2u ", now_ms, (unsigned)(i + 1));

    st = check(cb_allow(h, &ticket), "cb_allow");
    if (st == CB_REJECTED) {
      uint64_t wait_ns = 0;
      check(cb_retry_after(h, &wait_ns), "cb_retry_after");
      printf("rejected  fail fast, retry after %" PRIu64 " ms", wait_ns / MS);
      state = note_transition(h, state);
      printf("\n");
      continue;
    }
    {
      const int probe = check(cb_state(h), "cb_state") == CB_STATE_HALF_OPEN;
      const int ok = dependency_call(now_ms);
      printf("admitted%s %s", probe ? " (probe)" : "        ", ok ? "success" : "FAILURE");
      state = note_transition(h, state); /* OPEN -> HALF_OPEN on the probe's admission */
      check(cb_done(h, ticket, ok ? CB_SUCCESS : CB_FAILURE), "cb_done");
      state = note_transition(h, state);
      if (state == CB_STATE_OPEN) {
        uint64_t wait_ns = 0;
        check(cb_retry_after(h, &wait_ns), "cb_retry_after");
        printf(", open for %" PRIu64 " ms", wait_ns / MS);
      }
      printf("\n");
    }
  }

  stats.struct_size = sizeof stats;
  check(cb_stats_get(h, &stats), "cb_stats_get");
  printf("\nfinal state %s; admitted %" PRIu64 ", rejected %" PRIu64 ", successes %" PRIu64
         ", failures %" PRIu64 ", ignored %" PRIu64 ", trips %" PRIu64 "\n",
         state_name(check(cb_state(h), "cb_state")), stats.admitted, stats.rejected,
         stats.successes, stats.failures, stats.ignored, stats.trips);

  check(cb_destroy(h), "cb_destroy");
  check(cb_registry_close(reg), "cb_registry_close");
  /* A self-check, so that running the demo as a test means something. */
  return state == CB_STATE_CLOSED && stats.trips == 2 ? EXIT_SUCCESS : EXIT_FAILURE;
}
