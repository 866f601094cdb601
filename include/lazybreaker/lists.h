/*
 * lazybreaker: the facts the ABI describes itself with, each written once.
 *
 * X-macro lists of the statuses, states, reasons and configuration fields,
 * and the configuration's limits. Every rendering of them (cb_strerror,
 * cb_status_name, cb_state_name, cb_reason_name, cb_config_init, the range
 * checks and their messages, the Prometheus labels, cbctl's columns) is
 * built from these lists; a binding reads them through the functions of
 * lazybreaker.h. Expand a list with a macro of your own:
 *
 *   #define PRINT_FIELD(field, type, since, unit, bounds, lo, hi, def) \
 *     printf("%s since %s\n", #field, #since);
 *   CB_CONFIG_FIELDS(PRINT_FIELD)
 *
 * Macros only, no declarations: lazybreaker.h includes this header, and
 * the library's core includes it alone. The status, state and reason lists
 * name lazybreaker.h's enumerators, so expand them after including it.
 * @since 1.3 (the limits themselves since the version each names)
 */
#ifndef LAZYBREAKER_LISTS_H
#define LAZYBREAKER_LISTS_H

/** @name Configuration maxima (inclusive)
 *  @{ */
#define CB_MAX_FAILURE_THRESHOLD 65535u
#define CB_MAX_HALF_OPEN_CALLS 32u
#define CB_MAX_HALF_OPEN_SUCCESSES 255u
#define CB_MIN_OPEN_DURATION_NS 1000ull
#define CB_MAX_DURATION_NS (366ull * 24 * 3600 * 1000000000ull)
#define CB_MAX_NAME_BYTES 255u
/** @} */

/** @name Policy limits (inclusive) @since 1.1
 *  @{ */
#define CB_MAX_WINDOW_SIZE 1000000u
#define CB_MAX_WINDOW_BUCKETS 32u
#define CB_MIN_WINDOW_DURATION_NS 1000000ull
#define CB_MAX_MINIMUM_CALLS 1000000000u
#define CB_MAX_BACKOFF_MULTIPLIER 1000.0
/** @} */

/** @name Registry limits
 *  @{ */
/** The largest capacity a registry may have (and the size of the default
 *  registry). */
#define CB_MAX_CAPACITY 4194304u
/** The largest event queue. @since 1.1 */
#define CB_MAX_EVENT_CAPACITY 1048576u
/** @} */

/** Every status: X(code, description). cb_strerror(code) is
 *  "<code>: <description>"; cb_status_name(code) is "<code>". */
#define CB_STATUS_LIST(X)                                           \
  X(CB_OK, "success")                                               \
  X(CB_REJECTED, "the breaker rejected the call (fail fast)")       \
  X(CB_EINVAL, "invalid argument or configuration")                 \
  X(CB_EHANDLE, "zero, unknown, destroyed or stale handle")         \
  X(CB_ENOMEM, "out of memory")                                     \
  X(CB_EEXIST, "name already taken")                                \
  X(CB_ENOENT, "no such breaker")                                   \
  X(CB_EFULL, "registry full")                                      \
  X(CB_ECORRUPT, "corrupt registry file")                           \
  X(CB_EVERSION, "registry file has an unsupported layout version") \
  X(CB_EIO, "I/O error")                                            \
  X(CB_EPERM, "permission denied")                                  \
  X(CB_ESTATE, "not possible in the current state")                 \
  X(CB_EINTERNAL, "internal error in lazybreaker")                  \
  X(CB_ERANGE, "buffer too small")                                  \
  X(CB_EBUSY, "a process holds the registry file's lock")

/** Every state: X(enumerator, name). The names are cb_state_name's and the
 *  Prometheus `state` label's values. */
#define CB_STATE_LIST(X)                 \
  X(CB_STATE_CLOSED, "closed")           \
  X(CB_STATE_OPEN, "open")               \
  X(CB_STATE_HALF_OPEN, "half_open")     \
  X(CB_STATE_FORCED_OPEN, "forced_open") \
  X(CB_STATE_DISABLED, "disabled")

/** Every reason: X(enumerator, name), the name the enumerator without
 *  CB_REASON_, in lower case (cb_reason_name). */
#define CB_REASON_LIST(X)                                   \
  X(CB_REASON_CONSECUTIVE_FAILURES, "consecutive_failures") \
  X(CB_REASON_FAILURE_RATE, "failure_rate")                 \
  X(CB_REASON_SLOW_CALL_RATE, "slow_call_rate")             \
  X(CB_REASON_OPEN_ELAPSED, "open_elapsed")                 \
  X(CB_REASON_PROBE_FAILED, "probe_failed")                 \
  X(CB_REASON_PROBE_LEASE_EXPIRED, "probe_lease_expired")   \
  X(CB_REASON_PROBES_SUCCEEDED, "probes_succeeded")         \
  X(CB_REASON_MANUAL, "manual")                             \
  X(CB_REASON_TRIPPED, "tripped")                           \
  X(CB_REASON_REJECTED, "rejected")

/** Every field of cb_config after struct_size, in the struct's order:
 *  X(field, type, since, unit, bounds, lo, hi, def)
 *    type    the field's C type;
 *    since   the version that added it (a number: 1.0, 1.1);
 *    unit    count, ns (nanoseconds), ratio, factor or policy (a cb_policy_t,
 *            CB_POLICY_CONSECUTIVE = 0 .. CB_POLICY_TIME_WINDOW = 2);
 *    bounds  how lo and hi bound it: closed [lo, hi]; above (lo, hi];
 *            below [lo, hi); zero_or 0 or [lo, hi] (0 = a default the field's
 *            comment in lazybreaker.h names);
 *    lo, hi  the bounds; open_duration_max_ns is also at least
 *            open_duration_ns unless it is 0 (the one rule across fields);
 *    def     what cb_config_init sets.
 *  A configuration the library refuses names the field in
 *  cb_last_error_field(). */
#define CB_CONFIG_FIELDS(X)                                                                        \
  X(failure_threshold, uint32_t, 1.0, count, closed, 1, CB_MAX_FAILURE_THRESHOLD, 5)               \
  X(open_duration_ns, uint64_t, 1.0, ns, closed, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS,      \
    30000000000ull)                                                                                \
  X(half_open_max_calls, uint32_t, 1.0, count, closed, 1, CB_MAX_HALF_OPEN_CALLS, 1)               \
  X(half_open_success_threshold, uint32_t, 1.0, count, closed, 1, CB_MAX_HALF_OPEN_SUCCESSES, 1)   \
  X(half_open_timeout_ns, uint64_t, 1.0, ns, closed, 0, CB_MAX_DURATION_NS, 0)                     \
  X(policy, int, 1.1, policy, closed, 0, 2, 0)                                                     \
  X(window_size, uint32_t, 1.1, count, closed, 1, CB_MAX_WINDOW_SIZE, 100)                         \
  X(window_duration_ns, uint64_t, 1.1, ns, closed, CB_MIN_WINDOW_DURATION_NS, CB_MAX_DURATION_NS,  \
    60000000000ull)                                                                                \
  X(window_buckets, uint32_t, 1.1, count, closed, 1, CB_MAX_WINDOW_BUCKETS, 10)                    \
  X(minimum_calls, uint32_t, 1.1, count, closed, 1, CB_MAX_MINIMUM_CALLS, 100)                     \
  X(failure_rate_threshold, double, 1.1, ratio, above, 0.0, 1.0, 0.5)                              \
  X(slow_call_ns, uint64_t, 1.1, ns, closed, 0, CB_MAX_DURATION_NS, 0)                             \
  X(slow_call_rate_threshold, double, 1.1, ratio, above, 0.0, 1.0, 1.0)                            \
  X(open_backoff_multiplier, double, 1.1, factor, closed, 1.0, CB_MAX_BACKOFF_MULTIPLIER, 1.0)     \
  X(open_duration_max_ns, uint64_t, 1.1, ns, zero_or, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS, \
    0)                                                                                             \
  X(open_jitter, double, 1.1, ratio, below, 0.0, 1.0, 0.0)

/** @name How a policy reads a field (CB_POLICY_READS, cb_policy_reads)
 *  @since 1.4
 *  @{ */
#define CB_FIELD_IGNORED 0
#define CB_FIELD_READ 1
/** Read only when slow_call_ns > 0: the consecutive policy's slow-call
 *  window. */
#define CB_FIELD_READ_WITH_SLOW_CALLS 2
/** @} */

/** How each policy reads each field of CB_CONFIG_FIELDS, in its order:
 *  X(field, consecutive, count_window, time_window), each column
 *  CB_FIELD_READ, CB_FIELD_IGNORED or CB_FIELD_READ_WITH_SLOW_CALLS.
 *  cb_policy_reads() answers it at run time. The library validates every
 *  field whatever the policy; a binding refuses a setting its policy
 *  ignores, and infers a policy from the settings given, by this table
 *  alone (docs/policies.md, "Which settings a policy reads").
 *  @since 1.4 */
#define CB_POLICY_READS(X)                                                       \
  X(failure_threshold, CB_FIELD_READ, CB_FIELD_IGNORED, CB_FIELD_IGNORED)        \
  X(open_duration_ns, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)               \
  X(half_open_max_calls, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)            \
  X(half_open_success_threshold, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)    \
  X(half_open_timeout_ns, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)           \
  X(policy, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)                         \
  X(window_size, CB_FIELD_READ_WITH_SLOW_CALLS, CB_FIELD_READ, CB_FIELD_IGNORED) \
  X(window_duration_ns, CB_FIELD_IGNORED, CB_FIELD_IGNORED, CB_FIELD_READ)       \
  X(window_buckets, CB_FIELD_IGNORED, CB_FIELD_IGNORED, CB_FIELD_READ)           \
  X(minimum_calls, CB_FIELD_READ_WITH_SLOW_CALLS, CB_FIELD_READ, CB_FIELD_READ)  \
  X(failure_rate_threshold, CB_FIELD_IGNORED, CB_FIELD_READ, CB_FIELD_READ)      \
  X(slow_call_ns, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)                   \
  X(slow_call_rate_threshold, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)       \
  X(open_backoff_multiplier, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)        \
  X(open_duration_max_ns, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)           \
  X(open_jitter, CB_FIELD_READ, CB_FIELD_READ, CB_FIELD_READ)

#endif /* LAZYBREAKER_LISTS_H */
