/* A consumer of the installed package: trips a breaker, is rejected, and
 * recovers lazily through HALF_OPEN on a manual clock. Built from the
 * installed files only, with pkg-config, with find_package and statically
 * (tests/packaging/consumers.sh). */
#include <lazybreaker/lazybreaker.h>
#include <stdio.h>

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "cycle: %s failed at line %d: %s\n", #cond, __LINE__, \
              cb_last_error_message());                                     \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main(void) {
  cb_registry_options o;
  cb_registry *reg = NULL;
  cb_config cfg;
  cb_handle h = 0;
  cb_ticket t = 0;
  int i;

  CHECK(cb_version_number() / 10000 == CB_VERSION_MAJOR);
  cb_registry_options_init(&o);
  o.clock = CB_CLOCK_MANUAL;
  CHECK(cb_registry_open(&o, &reg) == CB_OK);
  cb_config_init(&cfg);
  cfg.failure_threshold = 2;
  cfg.open_duration_ns = 1000000;
  CHECK(cb_create(reg, "consumer", &cfg, &h) == CB_OK);

  for (i = 0; i < 2; ++i) {
    CHECK(cb_allow(h, &t) == CB_OK);
    CHECK(cb_done(h, t, CB_FAILURE) == CB_OK);
  }
  CHECK(cb_state(h) == CB_STATE_OPEN);
  CHECK(cb_allow(h, &t) == CB_REJECTED);

  CHECK(cb_clock_advance(reg, 1000000) == CB_OK);
  CHECK(cb_allow(h, &t) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  CHECK(cb_done(h, t, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);

  CHECK(cb_registry_close(reg) == CB_OK);
  printf("cycle: lazybreaker %s: tripped, rejected, recovered\n", cb_version_string());
  return 0;
}
