/* The size and every field offset of each public struct, pinned. A change
 * here is an ABI break for programs built against lazybreaker 1.x: structs
 * grow only at the end (docs/api-stability.md), so a new field adds a
 * line and changes a size, and nothing else ever changes. Statuses and
 * enumerators are part of the ABI too and are pinned with them. */
#include <lazybreaker/fastpath.h>
#include <lazybreaker/lazybreaker.h>
#include <stddef.h>
#include <stdio.h>

#define PIN_SIZE(T, n) _Static_assert(sizeof(T) == (n), "sizeof(" #T ") changed")
#define PIN_OFFSET(T, f, n) _Static_assert(offsetof(T, f) == (n), "offset of " #T "." #f " changed")
#define PIN_VALUE(name, v) _Static_assert((name) == (v), #name " was renumbered")

#if defined(__LP64__) || defined(_LP64)
/* LP64 (x86_64, aarch64, ppc64le, s390x, riscv64): 8-byte size_t and
 * pointers, uint64_t aligned to 8. */
PIN_SIZE(cb_config, 112);
PIN_OFFSET(cb_config, struct_size, 0);
PIN_OFFSET(cb_config, failure_threshold, 8);
PIN_OFFSET(cb_config, open_duration_ns, 16);
PIN_OFFSET(cb_config, half_open_max_calls, 24);
PIN_OFFSET(cb_config, half_open_success_threshold, 28);
PIN_OFFSET(cb_config, half_open_timeout_ns, 32);
/* 1.1 */
PIN_OFFSET(cb_config, policy, 40);
PIN_OFFSET(cb_config, window_size, 44);
PIN_OFFSET(cb_config, window_duration_ns, 48);
PIN_OFFSET(cb_config, window_buckets, 56);
PIN_OFFSET(cb_config, minimum_calls, 60);
PIN_OFFSET(cb_config, failure_rate_threshold, 64);
PIN_OFFSET(cb_config, slow_call_ns, 72);
PIN_OFFSET(cb_config, slow_call_rate_threshold, 80);
PIN_OFFSET(cb_config, open_backoff_multiplier, 88);
PIN_OFFSET(cb_config, open_duration_max_ns, 96);
PIN_OFFSET(cb_config, open_jitter, 104);

PIN_SIZE(cb_registry_options, 40);
PIN_OFFSET(cb_registry_options, struct_size, 0);
PIN_OFFSET(cb_registry_options, capacity, 8);
PIN_OFFSET(cb_registry_options, clock, 12);
PIN_OFFSET(cb_registry_options, path, 16);
/* 1.1 */
PIN_OFFSET(cb_registry_options, event_capacity, 24);
/* 1.2 */
PIN_OFFSET(cb_registry_options, flags, 28);
PIN_OFFSET(cb_registry_options, mode, 32);

PIN_SIZE(cb_stats, 96);
PIN_OFFSET(cb_stats, struct_size, 0);
PIN_OFFSET(cb_stats, admitted, 8);
PIN_OFFSET(cb_stats, rejected, 16);
PIN_OFFSET(cb_stats, successes, 24);
PIN_OFFSET(cb_stats, failures, 32);
PIN_OFFSET(cb_stats, ignored, 40);
PIN_OFFSET(cb_stats, trips, 48);
PIN_OFFSET(cb_stats, consecutive_failures, 56);
/* 1.1 */
PIN_OFFSET(cb_stats, slow, 64);
PIN_OFFSET(cb_stats, failure_rate, 72);
PIN_OFFSET(cb_stats, slow_rate, 80);
PIN_OFFSET(cb_stats, state_ns, 88);

/* 1.1 */
PIN_SIZE(cb_event, 304);
PIN_OFFSET(cb_event, struct_size, 0);
PIN_OFFSET(cb_event, sequence, 8);
PIN_OFFSET(cb_event, breaker, 16);
PIN_OFFSET(cb_event, from, 24);
PIN_OFFSET(cb_event, to, 28);
PIN_OFFSET(cb_event, reason, 32);
PIN_OFFSET(cb_event, at_ns, 40);
PIN_OFFSET(cb_event, name, 48);

/* 1.3, lazybreaker/fastpath.h */
PIN_SIZE(cb_fastpath, 48);
PIN_OFFSET(cb_fastpath, struct_size, 0);
PIN_OFFSET(cb_fastpath, layout, 8);
PIN_OFFSET(cb_fastpath, index_bits, 12);
PIN_OFFSET(cb_fastpath, lines, 16);
PIN_OFFSET(cb_fastpath, line_words, 24);
PIN_OFFSET(cb_fastpath, open_period_word, 28);
PIN_OFFSET(cb_fastpath, lean_rejections, 32);
PIN_OFFSET(cb_fastpath, chunk_bits, 40);
PIN_OFFSET(cb_fastpath, fold_at, 44);
PIN_SIZE(cb_fastpath_cells, 24);
PIN_OFFSET(cb_fastpath_cells, struct_size, 0);
PIN_OFFSET(cb_fastpath_cells, cells, 8);
PIN_OFFSET(cb_fastpath_cells, stripe, 16);
PIN_OFFSET(cb_fastpath_cells, claimed, 20);

PIN_SIZE(cb_handle, 8);
PIN_SIZE(cb_ticket, 8);
#else
#error "pin the struct layouts of this data model before shipping lazybreaker on it"
#endif

PIN_VALUE(CB_OK, 0);
PIN_VALUE(CB_REJECTED, 1);
PIN_VALUE(CB_EINVAL, -1);
PIN_VALUE(CB_EHANDLE, -2);
PIN_VALUE(CB_ENOMEM, -3);
PIN_VALUE(CB_EEXIST, -4);
PIN_VALUE(CB_ENOENT, -5);
PIN_VALUE(CB_EFULL, -6);
PIN_VALUE(CB_ECORRUPT, -7);
PIN_VALUE(CB_EVERSION, -8);
PIN_VALUE(CB_EIO, -9);
PIN_VALUE(CB_EPERM, -10);
PIN_VALUE(CB_ESTATE, -11);
PIN_VALUE(CB_EINTERNAL, -12);
PIN_VALUE(CB_ERANGE, -13);
PIN_VALUE(CB_EBUSY, -14);
PIN_VALUE(CB_FASTPATH_LAYOUT, 1);
PIN_VALUE(CB_FASTPATH_MODE_OPEN, 1);
PIN_VALUE(CB_FASTPATH_MODE_RUN, 3);
PIN_VALUE(CB_FASTPATH_MODE_FORCED_OPEN, 4);
PIN_VALUE(CB_FASTPATH_MODE_WINDOW, 7);
PIN_VALUE(CB_FASTPATH_MODE_QUIET, 0xb);
PIN_VALUE(CB_FASTPATH_CALL_TICKET, 0xc);
PIN_VALUE(CB_FASTPATH_ADMITTED, 0);
PIN_VALUE(CB_FASTPATH_REJECTED, 1);
PIN_VALUE(CB_FASTPATH_SUCCESSES, 2);
PIN_VALUE(CB_STATE_CLOSED, 0);
PIN_VALUE(CB_STATE_OPEN, 1);
PIN_VALUE(CB_STATE_HALF_OPEN, 2);
PIN_VALUE(CB_STATE_FORCED_OPEN, 3);
PIN_VALUE(CB_STATE_DISABLED, 4);
PIN_VALUE(CB_SUCCESS, 0);
PIN_VALUE(CB_FAILURE, 1);
PIN_VALUE(CB_IGNORED, 2);
PIN_VALUE(CB_CLOCK_MONOTONIC, 0);
PIN_VALUE(CB_CLOCK_MANUAL, 1);
/* 1.1 */
PIN_VALUE(CB_POLICY_CONSECUTIVE, 0);
PIN_VALUE(CB_POLICY_COUNT_WINDOW, 1);
PIN_VALUE(CB_POLICY_TIME_WINDOW, 2);
PIN_VALUE(CB_REASON_CONSECUTIVE_FAILURES, 1);
PIN_VALUE(CB_REASON_FAILURE_RATE, 2);
PIN_VALUE(CB_REASON_SLOW_CALL_RATE, 3);
PIN_VALUE(CB_REASON_OPEN_ELAPSED, 4);
PIN_VALUE(CB_REASON_PROBE_FAILED, 5);
PIN_VALUE(CB_REASON_PROBE_LEASE_EXPIRED, 6);
PIN_VALUE(CB_REASON_PROBES_SUCCEEDED, 7);
PIN_VALUE(CB_REASON_MANUAL, 8);
PIN_VALUE(CB_REASON_TRIPPED, 9);
PIN_VALUE(CB_REASON_REJECTED, 10);
PIN_VALUE(CB_EVENTS_TRANSITIONS, 1);
PIN_VALUE(CB_EVENTS_REJECTIONS, 2);
PIN_VALUE(CB_REGISTRY_CREATE, 1u);
PIN_VALUE(CB_REGISTRY_EXCLUSIVE, 2u);
/* 1.3 */
PIN_VALUE(CB_REGISTRY_ANY_OWNER, 4u);

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

int main(void) {
  /* The compiled library agrees with the header about the first version
     of each struct: it accepts exactly that size and nothing smaller. */
  cb_config cfg;
  cb_registry_options opts;
  cb_registry *reg = NULL;
  cb_handle h = 0;
  cb_stats st;

  /* The first version of each struct ends at its last 1.0 field. */
  const size_t config_v1 = offsetof(cb_config, half_open_timeout_ns) + 8;
  const size_t options_v1 = offsetof(cb_registry_options, path) + sizeof(const char *);
  expect(cb_config_init_size(&cfg, sizeof cfg) == CB_OK, "cb_config_init_size(sizeof)");
  expect(cfg.struct_size == sizeof cfg, "cb_config.struct_size set by init");
  expect(cb_config_init_size(&cfg, config_v1) == CB_OK, "cb_config_init_size(first version)");
  expect(cb_config_init_size(&cfg, config_v1 - 1) == CB_EINVAL,
         "cb_config_init_size rejects a size below the first version");
  expect(cb_config_init_size(&cfg, sizeof cfg) == CB_OK, "cb_config_init_size(sizeof) again");
  expect(cb_registry_options_init_size(&opts, sizeof opts) == CB_OK,
         "cb_registry_options_init_size(sizeof)");
  expect(opts.struct_size == sizeof opts, "cb_registry_options.struct_size set by init");
  expect(cb_registry_options_init_size(&opts, options_v1 - 1) == CB_EINVAL,
         "cb_registry_options_init_size rejects a size below the first version");

  opts.clock = CB_CLOCK_MANUAL;
  expect(cb_registry_open(&opts, &reg) == CB_OK, "cb_registry_open");
  expect(cb_create(reg, "layout", &cfg, &h) == CB_OK, "cb_create");
  st.struct_size = sizeof st;
  expect(cb_stats_get(h, &st) == CB_OK, "cb_stats_get(sizeof)");
  /* The first version of cb_stats ends with consecutive_failures, at 60;
     the 4 bytes after it are tail padding. */
  st.struct_size = 60;
  expect(cb_stats_get(h, &st) == CB_OK, "cb_stats_get accepts the first version's 60 bytes");
  st.struct_size = 59;
  expect(cb_stats_get(h, &st) == CB_EINVAL, "cb_stats_get rejects a size below the first version");
  expect(cb_version_number() / 10000 == CB_VERSION_MAJOR,
         "library and header share a major version");
  expect(cb_registry_close(reg) == CB_OK, "cb_registry_close");

  if (failures == 0) printf("struct layouts, statuses and enumerators are as pinned\n");
  return failures == 0 ? 0 : 1;
}
