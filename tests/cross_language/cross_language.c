/* cross_language.c: the C side of the cross-language test (see
 * CMakeLists.txt here). Every language opens one registry file:
 *
 *   cross_language trip FILE         creates FILE (exclusively: a stale one
 *                                    is removed first) with a manual clock,
 *                                    get-or-creates "payments" (one failure
 *                                    trips it, 300 s open) and trips it.
 *   cross_language expect-open FILE NAME
 *                                    opens the existing FILE and checks that
 *                                    the breaker NAME is OPEN and rejects a
 *                                    call: what another language tripped.
 *
 * The bindings' checkers get-or-create "payments" with the same settings,
 * so the configuration each binding builds must equal this one field for
 * field (cb_get_or_create refuses another with CB_EEXIST). Exit status 0
 * when all holds, 1 otherwise, with the reason on stderr. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lazybreaker/lazybreaker.h"

#define OPEN_NS (300ull * 1000000000ull)

static int fail(const char *what, int status) {
  fprintf(stderr, "cross_language: %s: %s (%s)\n", what, cb_strerror(status),
          cb_last_error_message());
  return 1;
}

static int open_file(const char *path, uint32_t flags, cb_registry **reg) {
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.path = path;
  opts.flags = flags;
  opts.clock = CB_CLOCK_MANUAL;
  return cb_registry_open(&opts, reg);
}

static int expect_open(cb_handle h, const char *name) {
  const int state = cb_state(h);
  if (state != CB_STATE_OPEN) {
    fprintf(stderr, "cross_language: %s: expected OPEN (%d), got %d\n", name, CB_STATE_OPEN, state);
    return 1;
  }
  cb_ticket ticket = 0;
  const int st = cb_allow(h, &ticket);
  if (st != CB_REJECTED) {
    fprintf(stderr, "cross_language: %s: expected CB_REJECTED, got %d\n", name, st);
    return 1;
  }
  return 0;
}

static int trip(const char *path) {
  if (unlink(path) != 0 && access(path, F_OK) == 0) {
    perror(path);
    return 1;
  }
  cb_registry *reg = NULL;
  int st = open_file(path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, &reg);
  if (st != CB_OK) return fail("cb_registry_open", st);
  cb_config cfg;
  cb_config_init(&cfg);
  cfg.failure_threshold = 1;
  cfg.open_duration_ns = OPEN_NS;
  cb_handle h = 0;
  st = cb_get_or_create(reg, "payments", &cfg, &h);
  if (st != CB_OK) return fail("cb_get_or_create", st);
  cb_ticket ticket = 0;
  st = cb_allow(h, &ticket);
  if (st != CB_OK) return fail("cb_allow", st);
  st = cb_done(h, ticket, CB_FAILURE);
  if (st != CB_OK) return fail("cb_done", st);
  const int result = expect_open(h, "payments");
  cb_registry_close(reg);
  if (result == 0) printf("cross_language: payments tripped in %s\n", path);
  return result;
}

static int check(const char *path, const char *name) {
  cb_registry *reg = NULL;
  int st = open_file(path, 0, &reg);
  if (st != CB_OK) return fail("cb_registry_open", st);
  cb_handle h = 0;
  st = cb_lookup(reg, name, &h);
  if (st != CB_OK) return fail(name, st);
  const int result = expect_open(h, name);
  cb_registry_close(reg);
  if (result == 0) printf("cross_language: %s is OPEN here too\n", name);
  return result;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "trip") == 0) return trip(argv[2]);
  if (argc == 4 && strcmp(argv[1], "expect-open") == 0) return check(argv[2], argv[3]);
  fprintf(stderr, "usage: cross_language trip FILE | cross_language expect-open FILE NAME\n");
  return 2;
}
