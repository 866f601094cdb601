/*
 * lazybreaker: a lazy, lock-free circuit breaker behind one stable C ABI.
 *
 * This header is the specification. Every function states what it does,
 * what it returns on each path and what is safe across threads, using this
 * fixed vocabulary on its "Thread safety:" line:
 *
 *   - "any thread":       may be called concurrently from any number of
 *                         threads, on the same or different objects.
 *   - "any thread, lock-free": as above, and the call never takes a lock,
 *                         never allocates and makes no system call other
 *                         than reading the clock (see docs/semantics.md).
 *   - "not with other calls on the same object": the caller must ensure no
 *                         other thread uses that object during the call.
 *
 * Conventions: every function returns an int status (CB_OK = 0, CB_REJECTED
 * = 1, errors < 0) unless stated otherwise, and writes results through
 * out-pointers, which it leaves untouched on error. On every error the
 * calling thread's cb_last_error_message() says what went wrong. A failed
 * call changes nothing. No function throws or lets a C++ exception out
 * (CB_NOEXCEPT).
 *
 * Processes and signals: after fork() the child has a private copy of every
 * registry as it stood, shared with nothing; open or close registries in the
 * child only if no other parent thread was opening or closing one at the
 * fork. No function is async-signal-safe. dlclose() leaves the library
 * loaded (it is linked -z nodelete), so threads that used it exit safely.
 * See docs/semantics.md, "Processes, signals and unloading".
 *
 * Only <stddef.h>, <stdint.h>, <stdbool.h> and its own lists.h (macros
 * only) are included; the header is C99 and C++ clean.
 */
#ifndef LAZYBREAKER_H
#define LAZYBREAKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lists.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a public function. Override it to build or use a static library
 *  with other visibility rules. On Windows the DLL is built with
 *  CB_BUILDING_DLL, which exports exactly these functions; a consumer needs
 *  nothing (the import library resolves them). */
#ifndef CB_API
#if defined(_WIN32) && defined(CB_BUILDING_DLL)
#define CB_API __declspec(dllexport)
#elif defined(_WIN32)
#define CB_API
#elif defined(__GNUC__)
#define CB_API __attribute__((visibility("default")))
#else
#define CB_API
#endif
#endif

/** Ends every function declaration: `noexcept` for C++ callers (no
 *  function of this library throws; none lets an exception out), nothing
 *  in C. It changes no symbol. @since 1.1 */
#ifndef CB_NOEXCEPT
#if defined(__cplusplus) && __cplusplus >= 201103L
#define CB_NOEXCEPT noexcept
#else
#define CB_NOEXCEPT
#endif
#endif

/** @name Version
 *  Compare CB_VERSION_NUMBER (the header you built with) against
 *  cb_version_number() (the library you run with).
 *  @{ */
#define CB_VERSION_MAJOR 1
#define CB_VERSION_MINOR 4
#define CB_VERSION_PATCH 0
#define CB_VERSION_NUMBER (CB_VERSION_MAJOR * 10000 + CB_VERSION_MINOR * 100 + CB_VERSION_PATCH)
#define CB_VERSION_STRINGIFY_(x) #x
#define CB_VERSION_STRINGIFY(x) CB_VERSION_STRINGIFY_(x)
/** "MAJOR.MINOR.PATCH", built from the three numbers. */
#define CB_VERSION_STRING                \
  CB_VERSION_STRINGIFY(CB_VERSION_MAJOR) \
  "." CB_VERSION_STRINGIFY(CB_VERSION_MINOR) "." CB_VERSION_STRINGIFY(CB_VERSION_PATCH)
/** @} */

/** A breaker's handle: its slot in the process's breaker space and the
 *  slot's incarnation, packed in 64 bits with tag bits. 0 is never a valid
 *  handle, and any value that is not a live handle is refused with
 *  CB_EHANDLE by every function, changing nothing. A destroyed breaker's
 *  handle stays invalid (CB_EHANDLE) for the life of the process: a slot
 *  that has held 1,048,576 breakers retires rather than repeat a handle. */
typedef uint64_t cb_handle;

/** An admitted call's ticket, from cb_allow, for cb_done. Opaque. It carries
 *  the state epoch it was issued in, so an outcome from an earlier period
 *  never moves the state machine. 0 is never a valid ticket. */
typedef uint64_t cb_ticket;

/** A set of breakers sharing a clock, a capacity and an event queue. */
typedef struct cb_registry cb_registry;

/** @name Statuses
 *  Values are pinned: never renumbered, never reused.
 *  @{ */
#define CB_OK 0            /**< success */
#define CB_REJECTED 1      /**< not an error: the breaker says fail fast */
#define CB_EINVAL (-1)     /**< a bad argument or config value */
#define CB_EHANDLE (-2)    /**< a zero, unknown, destroyed or stale handle */
#define CB_ENOMEM (-3)     /**< out of memory or address space */
#define CB_EEXIST (-4)     /**< the name is taken in this registry */
#define CB_ENOENT (-5)     /**< no breaker has that name */
#define CB_EFULL (-6)      /**< the registry holds its capacity */
#define CB_ECORRUPT (-7)   /**< a shared registry file is corrupt */
#define CB_EVERSION (-8)   /**< a shared registry file has another layout */
#define CB_EIO (-9)        /**< an I/O error on a shared registry file */
#define CB_EPERM (-10)     /**< not permitted (file mode, owner) */
#define CB_ESTATE (-11)    /**< the call does not apply in the current state */
#define CB_EINTERNAL (-12) /**< a bug in lazybreaker: please report it */
#define CB_ERANGE (-13)    /**< @since 1.1: a buffer is too small; the size needed was reported */
#define CB_EBUSY (-14)     /**< @since 1.3: a process holds the registry file's lock */
/** @} */

/** The breaker's state, as cb_state() reports it. */
typedef enum cb_state_t {
  CB_STATE_CLOSED = 0,      /**< admitting; the trip policy is counting */
  CB_STATE_OPEN = 1,        /**< rejecting until the open duration passes */
  CB_STATE_HALF_OPEN = 2,   /**< admitting a bounded number of probes */
  CB_STATE_FORCED_OPEN = 3, /**< rejecting everything until cb_reset */
  CB_STATE_DISABLED = 4     /**< admitting everything, tripping never */
} cb_state_t;

/** What a call reported through cb_done. */
typedef enum cb_outcome_t {
  CB_SUCCESS = 0, /**< the call succeeded */
  CB_FAILURE = 1, /**< the call failed and counts against the dependency */
  CB_IGNORED = 2  /**< neither: e.g. a cancellation or a client error */
} cb_outcome_t;

/* The configuration's limits (CB_MAX_*, CB_MIN_*) and the lists of
 * statuses, states, reasons and configuration fields: lists.h. */

/** A breaker's configuration. Always start from cb_config_init(); fields
 *  are only ever appended, and struct_size tells the library how much of
 *  the struct the caller knows. */
typedef struct cb_config {
  size_t struct_size;                   /**< sizeof(cb_config); set by cb_config_init */
  uint32_t failure_threshold;           /**< consecutive failures that trip; default 5,
                                             1..CB_MAX_FAILURE_THRESHOLD */
  uint64_t open_duration_ns;            /**< how long OPEN rejects; default 30 s,
                                             CB_MIN_OPEN_DURATION_NS..CB_MAX_DURATION_NS */
  uint32_t half_open_max_calls;         /**< probes admitted at once; default 1,
                                             1..CB_MAX_HALF_OPEN_CALLS */
  uint32_t half_open_success_threshold; /**< probe successes that close;
                                             default 1,
                                             1..CB_MAX_HALF_OPEN_SUCCESSES */
  uint64_t half_open_timeout_ns;        /**< a probe silent this long counts as
                                             failed; 0 (the default) =
                                             open_duration_ns; at most
                                             CB_MAX_DURATION_NS */
  /* @since 1.1: trip policies and backoff (docs/policies.md) */
  int policy;                      /**< a cb_policy_t; default CB_POLICY_CONSECUTIVE */
  uint32_t window_size;            /**< count window: outcomes kept; default 100,
                                        1..CB_MAX_WINDOW_SIZE */
  uint64_t window_duration_ns;     /**< time window: default 60 s,
                                        CB_MIN_WINDOW_DURATION_NS..CB_MAX_DURATION_NS */
  uint32_t window_buckets;         /**< time window: default 10, 1..CB_MAX_WINDOW_BUCKETS */
  uint32_t minimum_calls;          /**< no rate trips before this many outcomes are in
                                        the window; default 100, 1..CB_MAX_MINIMUM_CALLS */
  double failure_rate_threshold;   /**< (0, 1]; default 0.5. Reached when failures *
                                        10^9 >= calls * round(threshold * 10^9), in
                                        integers (docs/policies.md) */
  uint64_t slow_call_ns;           /**< a call longer than this is slow; 0 = slow-call
                                        tracking off (default); at most CB_MAX_DURATION_NS */
  double slow_call_rate_threshold; /**< (0, 1]; default 1.0; reached as
                                        failure_rate_threshold is, by slow calls */
  double open_backoff_multiplier;  /**< 1..CB_MAX_BACKOFF_MULTIPLIER; 1 = a fixed open
                                        duration (default) */
  uint64_t open_duration_max_ns;   /**< cap for backoff and jitter; 0 (the default) =
                                        CB_MAX_DURATION_NS; else
                                        open_duration_ns..CB_MAX_DURATION_NS */
  double open_jitter;              /**< [0, 1): each open duration is scaled by a factor
                                        in [1 - j, 1 + j], then kept within
                                        CB_MIN_OPEN_DURATION_NS..the cap; default 0.
                                        A fixed duration (no jitter, no backoff yet)
                                        is exact; a computed one is within a relative
                                        10^-15 (docs/policies.md) */
  /* later fields are appended here */
} cb_config;

/** Trip policies for cb_config.policy. @since 1.1 */
typedef enum cb_policy_t {
  CB_POLICY_CONSECUTIVE = 0,  /**< failure_threshold failures in a row */
  CB_POLICY_COUNT_WINDOW = 1, /**< failure rate over the last window_size outcomes */
  CB_POLICY_TIME_WINDOW = 2   /**< failure rate over the last window_duration_ns */
} cb_policy_t;

/** Fills the first `size` bytes of `cfg` with defaults and sets
 *  cfg->struct_size = size, so a caller built against an older, smaller
 *  cb_config is never written past its end.
 *  @return CB_OK; CB_EINVAL if cfg is NULL or size is smaller than the first
 *          version of cb_config.
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API int cb_config_init_size(cb_config *cfg, size_t size) CB_NOEXCEPT;

/** Fills `cfg` with defaults. @since 1.0 */
static inline void cb_config_init(cb_config *cfg) CB_NOEXCEPT {
  cb_config_init_size(cfg, sizeof *cfg);
}

/** How `policy` reads the cb_config field named `field` (a name of
 *  CB_CONFIG_FIELDS, as cb_last_error_field() gives them): CB_FIELD_READ,
 *  CB_FIELD_IGNORED, or CB_FIELD_READ_WITH_SLOW_CALLS (read only when
 *  slow_call_ns > 0) in *out; lists.h's CB_POLICY_READS at run time. The
 *  library validates every field whatever the policy; a binding refuses a
 *  setting the policy ignores and infers a policy from the settings given
 *  by these answers (docs/policies.md, "Which settings a policy reads").
 *  @return CB_OK; CB_EINVAL (field named: "policy" for an unknown policy,
 *          "field" for a NULL or unknown field name, "out" for a NULL out),
 *          *out unchanged.
 *  @since 1.4
 *  Thread safety: any thread. */
CB_API int cb_policy_reads(int policy, const char *field, int *out) CB_NOEXCEPT;

/** @name Clocks
 *  @{ */
enum {
  CB_CLOCK_MONOTONIC = 0, /**< CLOCK_MONOTONIC, read only when needed */
  CB_CLOCK_MANUAL = 1     /**< starts at 0, moves only by cb_clock_advance */
};
/** @} */

/** How to open a registry. Start from cb_registry_options_init(). */
typedef struct cb_registry_options {
  size_t struct_size;      /**< sizeof(cb_registry_options) */
  uint32_t capacity;       /**< most breakers it may hold; 0 = 65,536 (a new
                                registry file: CB_DEFAULT_FILE_CAPACITY; an existing
                                one: the file's); at most CB_MAX_CAPACITY */
  int clock;               /**< CB_CLOCK_MONOTONIC or CB_CLOCK_MANUAL */
  const char *path;        /**< NULL = private, in memory; else a registry file that
                                every process opening the same path shares
                                (docs/shared-registries.md) */
  uint32_t event_capacity; /**< @since 1.1: events the queue holds before it drops the
                                oldest; 0 = 1,024; at most CB_MAX_EVENT_CAPACITY
                                (rounded up to a power of two). Per process, also
                                for a shared registry */
  uint32_t flags;          /**< @since 1.2: CB_REGISTRY_* flags, for a path */
  uint32_t mode;           /**< @since 1.2: the permission bits (0..0777) of a file
                                this open creates, exactly (the umask does not
                                apply); 0 = 0600 */
  /* later fields are appended here */
} cb_registry_options;

/** @name cb_registry_options.flags @since 1.2
 *  @{ */
/** Create the registry file if it is missing (without it, a missing file is
 *  CB_ENOENT). */
#define CB_REGISTRY_CREATE 1u
/** With CB_REGISTRY_CREATE: CB_EEXIST if the file exists. */
#define CB_REGISTRY_EXCLUSIVE 2u
/** With CB_REGISTRY_CREATE: use an existing file whoever owns it and
 *  whoever may write it (never one reached through a symlink). Without it,
 *  a create refuses (CB_EPERM) a file that another user than the caller's
 *  effective one or root owns, or that others may write while `mode` does
 *  not grant them that. @since 1.3 */
#define CB_REGISTRY_ANY_OWNER 4u
/** @} */

/* CB_MAX_CAPACITY and CB_MAX_EVENT_CAPACITY, the largest registry and
 * event queue: lists.h. */
/** Capacity of a registry file created with capacity 0: a file holds about
 *  3.7 KB per breaker of capacity, all allocated when it is created
 *  (docs/shared-registries.md, "Capacity"). @since 1.2 */
#define CB_DEFAULT_FILE_CAPACITY 4096u
/** Capacity of cb_default_registry(). */
#define CB_DEFAULT_REGISTRY_CAPACITY 1048576u

/** Fills the first `size` bytes of `opts` with defaults.
 *  @return CB_OK; CB_EINVAL if opts is NULL or size is too small.
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API int cb_registry_options_init_size(cb_registry_options *opts, size_t size) CB_NOEXCEPT;

/** Fills `opts` with defaults. @since 1.0 */
static inline void cb_registry_options_init(cb_registry_options *opts) CB_NOEXCEPT {
  cb_registry_options_init_size(opts, sizeof *opts);
}

/** Opens a new registry. Memory is reserved for `capacity` breakers up
 *  front and touched only as breakers are created. The first registry of
 *  the process (the default one included) also reserves the address space
 *  all registries' breakers share (docs/semantics.md, "Memory").
 *  With opts->path set, maps the registry file at that path, shared with
 *  every process that opens it: its capacity and clock are the file's (a
 *  capacity of 0 takes the file's, another that disagrees is CB_EINVAL; the
 *  clock must be the file's, CB_EINVAL saying so; cb_last_error_field names
 *  "capacity" or "clock"), and its breakers, their
 *  states and counters are seen by all (docs/shared-registries.md).
 *  With CB_REGISTRY_CREATE, an existing file at the path is used only if it
 *  is a regular file at the path itself (the last component is not followed
 *  if it is a symlink), owned by the caller's effective user or by root,
 *  and not writable by others unless `mode` grants them that; else
 *  CB_EPERM, the message naming the file's owner and mode
 *  (CB_REGISTRY_ANY_OWNER lifts the owner and mode rule, not the symlink
 *  one; since 1.3, a security fix: 1.2 used any file it could open).
 *  Without CB_REGISTRY_CREATE, any file the caller may open for reading and
 *  writing is used (through a symlink too): the caller named it. Either
 *  way, the open waits at most 5 s behind another process's lock on the
 *  file (a process opening it holds the lock while it checks the file).
 *  @param opts NULL = all defaults.
 *  @param out receives the registry.
 *  @return CB_OK; CB_EINVAL for a NULL out, a bad struct_size, an unknown
 *          clock or flag, a capacity over CB_MAX_CAPACITY, options that
 *          disagree with an existing file;
 *          CB_ENOENT for a missing file without CB_REGISTRY_CREATE;
 *          CB_EEXIST for an existing one with CB_REGISTRY_EXCLUSIVE;
 *          CB_EPERM when the file may not be opened or created, or a create
 *          finds a file it may not trust (above);
 *          CB_EBUSY when another process has held the file's lock for 5 s;
 *          CB_EVERSION for a file of another layout or not a registry file;
 *          CB_ECORRUPT for a file whose header or size is wrong;
 *          CB_EIO for another I/O error (the message names the file);
 *          CB_ENOMEM when memory cannot be reserved; CB_EFULL when the
 *          file's 64 counter stripes are all taken by live processes and
 *          threads of this one already count, or when 65,535
 *          registries are open at once (a closed one's id is reused), or
 *          when the open registries would hold more than 16,777,216
 *          breakers between them (capacities count in whole 1,024s).
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API int cb_registry_open(const cb_registry_options *opts, cb_registry **out) CB_NOEXCEPT;

/** Closes a registry: every handle into it becomes stale for the life of
 *  the process, and the pointer is refused (CB_EINVAL) from then on, even
 *  once another registry has its id (docs/semantics.md).
 *  @return CB_OK (NULL is a no-op); CB_EINVAL for the default registry or a
 *          registry that is not open (of two racing closes, one gets CB_OK
 *          and the other CB_EINVAL).
 *  @since 1.0
 *  Thread safety: any thread. Other threads may call the registry and its
 *  breakers meanwhile: a call in flight when the close begins returns its pre-close
 *  result or CB_EHANDLE (CB_EINVAL for a call on the registry pointer);
 *  every call after the close returns CB_EHANDLE on its handles and
 *  CB_EINVAL on its pointer; none faults. The registry's memory is given
 *  back once no call is inside it, by this close or a later open or close
 *  (docs/semantics.md, "Closing a registry"). */
CB_API int cb_registry_close(cb_registry *reg) CB_NOEXCEPT;

/** The process-wide registry: monotonic clock, capacity
 *  CB_DEFAULT_REGISTRY_CAPACITY. Created on first use; never closed.
 *  @return the registry; NULL only if its memory could not be reserved
 *          (cb_last_error_message() says why); a later call tries again.
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API cb_registry *cb_default_registry(void) CB_NOEXCEPT;

/** Moves a manual clock forward.
 *  @param reg NULL = the default registry (whose clock is not manual).
 *  @return CB_OK; CB_EINVAL unless the registry's clock is manual, or if
 *          the clock would overflow.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_clock_advance(cb_registry *reg, uint64_t ns) CB_NOEXCEPT;

/** Reads the registry's clock, in nanoseconds.
 *  @return CB_OK; CB_EINVAL for a NULL out.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_clock_now(cb_registry *reg, uint64_t *out_ns) CB_NOEXCEPT;

/** Creates a breaker, CLOSED.
 *  @param reg NULL = the default registry.
 *  @param name NULL = anonymous; else 1..CB_MAX_NAME_BYTES bytes of valid
 *         UTF-8, unique in the registry.
 *  @param cfg NULL = defaults.
 *  @param out receives the handle.
 *  @return CB_OK; CB_EINVAL for a NULL out, a bad name or a bad config
 *          (the message and cb_last_error_field name the field); CB_EEXIST
 *          when the name is taken;
 *          CB_EFULL when the registry holds its capacity.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_create(cb_registry *reg, const char *name, const cb_config *cfg,
                     cb_handle *out) CB_NOEXCEPT;

/** Returns the breaker named `name` if its configuration equals `cfg`
 *  (NULL = defaults), or creates it if no breaker has the name: what every
 *  worker of a pool calls at start. Atomic against other threads and, in a
 *  shared registry, other processes doing the same: of concurrent calls
 *  with one name, one creates and the others return its handle.
 *  @return CB_OK; CB_EINVAL as cb_create (a name is required); CB_EEXIST
 *          when a breaker has the name with another configuration (the
 *          message and cb_last_error_field name the first field that
 *          differs; the field is NULL if the breaker was destroyed meanwhile);
 *          CB_EFULL when it must be created and the registry holds its
 *          capacity.
 *  @since 1.2
 *  Thread safety: any thread, lock-free. */
CB_API int cb_get_or_create(cb_registry *reg, const char *name, const cb_config *cfg,
                            cb_handle *out) CB_NOEXCEPT;

/** Reads a breaker's configuration back into the first out->struct_size
 *  bytes of `out`, as the breaker uses it: every field as it was given,
 *  except a half_open_timeout_ns of 0, which reads as the open duration it
 *  stands for. cb_get_or_create with what it reads finds the breaker.
 *  @return CB_OK; CB_EINVAL for a NULL out or a struct_size smaller than
 *          the first version of cb_config (set it with cb_config_init);
 *          CB_EHANDLE.
 *  @since 1.3
 *  Thread safety: any thread, lock-free. */
CB_API int cb_config_get(cb_handle h, cb_config *out) CB_NOEXCEPT;

/** Finds a breaker by name.
 *  @return CB_OK; CB_EINVAL for a NULL or invalid name or NULL out;
 *          CB_ENOENT when no breaker has that name.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_lookup(cb_registry *reg, const char *name, cb_handle *out) CB_NOEXCEPT;

/** Destroys a breaker; its name becomes free and its handle stale.
 *  Threads still calling it get CB_EHANDLE; none of them crashes.
 *  @return CB_OK; CB_EHANDLE for a zero, unknown or stale handle.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_destroy(cb_handle h) CB_NOEXCEPT;

/** Asks to make a call. CB_OK admits it: make the call, then report its
 *  outcome with cb_done(h, *ticket, outcome). CB_REJECTED: fail fast.
 *  In OPEN, the first call after the open duration becomes the probe.
 *  *ticket is written only on CB_OK: on CB_REJECTED and on every error it
 *  is left untouched.
 *  @return CB_OK; CB_REJECTED; CB_EINVAL for a NULL ticket; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_allow(cb_handle h, cb_ticket *ticket) CB_NOEXCEPT;

/** Reports the outcome of an admitted call. Report each ticket once, with
 *  the handle it was issued for: that is the caller's contract. A ticket is
 *  a plain number and the library keeps no record of a CLOSED one, so a
 *  CLOSED ticket reported twice counts twice, in cb_stats and in the trip
 *  policy. A probe ticket reported twice counts once in the state machine
 *  (cb_stats counts both). A ticket issued before the breaker's last
 *  transition is stale: it counts in cb_stats but never moves the state
 *  machine.
 *  @param outcome a cb_outcome_t.
 *  @return CB_OK (also for a stale ticket); CB_EINVAL for an unknown outcome
 *          or a ticket that cb_allow never issues; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_done(cb_handle h, cb_ticket ticket, int outcome) CB_NOEXCEPT;

/** Reports the breaker's state without ever moving it: an OPEN breaker
 *  whose open duration has passed reports CB_STATE_OPEN until a call
 *  arrives (cb_retry_after then reports 0).
 *  @return a cb_state_t (>= 0); CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_state(cb_handle h) CB_NOEXCEPT;

/** How long until a call could be admitted, in nanoseconds of the
 *  registry's clock: 0 exactly when a call would be admitted now (CLOSED,
 *  DISABLED, HALF_OPEN with a free probe slot, OPEN after its duration); the
 *  rest of the open duration in OPEN; in HALF_OPEN with every probe slot
 *  taken, the wait if no probe reports (the rest of the probes' lease plus
 *  the next open duration; once the lease has run out, what is left of that
 *  open duration, counted from the lease's end); UINT64_MAX in FORCED_OPEN.
 *  Near the end of the clock the wait is still exact, never wrapped. Never
 *  moves the state machine.
 *  @return CB_OK; CB_EINVAL for a NULL out; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_retry_after(cb_handle h, uint64_t *out_ns) CB_NOEXCEPT;

/** A breaker's counters. Counted in every state: they are observations. */
typedef struct cb_stats {
  size_t struct_size;            /**< set by the caller: sizeof(cb_stats) */
  uint64_t admitted;             /**< calls cb_allow admitted */
  uint64_t rejected;             /**< calls cb_allow rejected */
  uint64_t successes;            /**< CB_SUCCESS outcomes reported */
  uint64_t failures;             /**< CB_FAILURE outcomes reported */
  uint64_t ignored;              /**< CB_IGNORED outcomes reported */
  uint64_t trips;                /**< transitions into OPEN (not FORCED_OPEN) */
  uint32_t consecutive_failures; /**< the current failure run under
                                      CB_POLICY_CONSECUTIVE, in CLOSED; 0 in other
                                      states and under the rate policies, which
                                      keep no run */
  /* @since 1.1 */
  uint64_t slow;       /**< outcomes slower than slow_call_ns (0 when tracking is off) */
  double failure_rate; /**< failures / calls in the window now: a rate policy's
                            window, or under CB_POLICY_CONSECUTIVE with slow-call
                            tracking its count window of window_size (where the
                            rate trips nothing); 0 with no window or an empty one */
  double slow_rate;    /**< slow calls / calls in the window now (0 when tracking
                            is off) */
  uint64_t state_ns;   /**< time since the last transition, on the registry clock.
                            A silent probe's re-opening happens as of the end of its
                            lease; cb_force_open, cb_disable, cb_reset and cb_trip
                            are transitions even into the state the breaker was in */
  /* later fields are appended here */
} cb_stats;

/** Reads a breaker's counters into the first out->struct_size bytes of out.
 *  Counters are exact once calls have returned; during concurrent calls
 *  each is a value it held during this call, and none is below what an
 *  earlier read returned. The read is taken again while another thread is
 *  in the middle of folding one of its counters into the breaker's totals
 *  (a few instructions, once every 32,768 counts: docs/semantics.md). In a
 *  private registry it waits for that thread. In a shared registry a fold
 *  does not hold the read up for long: one whose stripe's owner has died is
 *  finished at once; one still unfinished after 100 ms while the stripe's
 *  owner is 0 or a live process that does not map the file (only a damaged
 *  file, or a co-tenant's writes, leave that) is finished then; and one
 *  unfinished after 1 s whatever its owner (a process stopped inside a
 *  fold, or a co-tenant) is read around, once per process. Each of these
 *  is counted in lazybreaker_shared_uncertain_folds_total and may leave one
 *  counter of one breaker up to 32,768 off; the read returns CB_OK with
 *  the counts it could read. A read whose stripes' sequence words keep
 *  changing for 2 s (only a co-tenant's writes do that) returns the counts
 *  as they stand (docs/shared-registries.md, "Damaged files and
 *  co-tenants").
 *  @return CB_OK; CB_EINVAL for a NULL out or a struct_size smaller than
 *          the first version of cb_stats; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_stats_get(cb_handle h, cb_stats *out) CB_NOEXCEPT;

/** FORCED_OPEN: rejects everything until cb_reset.
 *  @return CB_OK; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_force_open(cb_handle h) CB_NOEXCEPT;

/** DISABLED: admits everything; outcomes feed cb_stats only, never the
 *  trip policy; until cb_reset. Under slow-call tracking its calls are
 *  timed as CLOSED calls are, and a slow one counts in cb_stats.slow.
 *  @return CB_OK; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_disable(cb_handle h) CB_NOEXCEPT;

/** CLOSED, with a fresh failure run, from any state.
 *  @return CB_OK; CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_reset(cb_handle h) CB_NOEXCEPT;

/** OPEN now, for exactly `open_for_ns` (e.g. from a "429 Too Many Requests,
 *  Retry-After: 20" answer), then probing as usual. From any state; counts
 *  as a trip; tickets issued before it become stale; backoff goes on from
 *  the trips before it (since the last close or manual state).
 *  @return CB_OK; CB_EINVAL for open_for_ns outside
 *          CB_MIN_OPEN_DURATION_NS..CB_MAX_DURATION_NS; CB_EHANDLE.
 *  @since 1.1
 *  Thread safety: any thread, lock-free. Of concurrent cb_trip calls on one
 *  breaker, the last to trip sets the duration. */
CB_API int cb_trip(cb_handle h, uint64_t open_for_ns) CB_NOEXCEPT;

/** Keeps an OPEN breaker OPEN until at least `until_ns` on the registry's
 *  clock (a time read with cb_clock_now), also one whose open duration has
 *  run out that no call has moved yet. Not a transition: it counts no trip
 *  (cb_stats.trips and the backoff stay as they were), reports no event,
 *  leaves cb_stats.state_ns and the next period's duration alone, and
 *  never shortens the period: an `until_ns` at or before its end changes
 *  nothing. What a fleet agent calls on the hosts that do not probe
 *  (docs/fleet.md); a cb_trip racing it may open a period that ends up to
 *  the held time later than asked.
 *  @return CB_OK; CB_ESTATE when the breaker is not OPEN (it changes
 *          nothing); CB_EINVAL for an until_ns more than CB_MAX_DURATION_NS
 *          after the clock's now; CB_EHANDLE.
 *  @since 1.3
 *  Thread safety: any thread, lock-free. */
CB_API int cb_hold_open(cb_handle h, uint64_t until_ns) CB_NOEXCEPT;

/** Why an event happened. @since 1.1 */
typedef enum cb_reason_t {
  CB_REASON_CONSECUTIVE_FAILURES = 1, /**< CLOSED -> OPEN by the failure run */
  CB_REASON_FAILURE_RATE = 2,         /**< CLOSED -> OPEN by the window's failure rate */
  CB_REASON_SLOW_CALL_RATE = 3,       /**< CLOSED -> OPEN by the window's slow-call rate */
  CB_REASON_OPEN_ELAPSED = 4,         /**< OPEN -> HALF_OPEN: a call after the open duration */
  CB_REASON_PROBE_FAILED = 5,         /**< HALF_OPEN -> OPEN: a probe failed */
  CB_REASON_PROBE_LEASE_EXPIRED = 6,  /**< HALF_OPEN -> OPEN: a probe stayed silent */
  CB_REASON_PROBES_SUCCEEDED = 7,     /**< HALF_OPEN -> CLOSED */
  CB_REASON_MANUAL = 8,               /**< cb_force_open, cb_disable, cb_reset */
  CB_REASON_TRIPPED = 9,              /**< cb_trip */
  CB_REASON_REJECTED = 10             /**< not a transition: a rejected call */
} cb_reason_t;

/** One event from a registry's queue. @since 1.1 */
typedef struct cb_event {
  size_t struct_size;               /**< set by the caller */
  uint64_t sequence;                /**< position in the registry's queue; increasing */
  cb_handle breaker;                /**< the breaker (the handle may be stale by now) */
  int from;                         /**< cb_state_t before */
  int to;                           /**< cb_state_t after (== from for CB_REASON_REJECTED) */
  int reason;                       /**< a cb_reason_t */
  uint64_t at_ns;                   /**< registry clock */
  char name[CB_MAX_NAME_BYTES + 1]; /**< the breaker's name; "" if anonymous, or if the
                                         breaker was destroyed while the event was recorded */
  /* later fields are appended here */
} cb_event;

/** @name Event kinds for cb_events_select @since 1.1
 *  @{ */
#define CB_EVENTS_TRANSITIONS 1u /**< state transitions (on by default) */
#define CB_EVENTS_REJECTIONS 2u  /**< every rejected call (off by default) */
/** @} */

/** Chooses what the registry records in its event queue: a bitwise or of
 *  CB_EVENTS_*, or 0 for nothing.
 *  @param reg NULL = the default registry.
 *  @return CB_OK; CB_EINVAL for an unknown bit or registry.
 *  @since 1.1
 *  Thread safety: any thread. Calls already under way may use the old set. */
CB_API int cb_events_select(cb_registry *reg, unsigned kinds) CB_NOEXCEPT;

/** Takes up to `max` events, oldest first. The events of one breaker come in
 *  the order its transitions happened. Nothing runs inside the library on an
 *  event: the application drains the queue when it likes. A full queue drops
 *  its oldest events and counts them (cb_events_dropped).
 *  @param reg NULL = the default registry.
 *  @param out an array of `max` cb_event; out[0].struct_size must be set, and
 *         every element written is written whole at that stride, its
 *         struct_size set to the stride.
 *  @param count receives how many were written.
 *  @return CB_OK; CB_EINVAL for a NULL out (with max > 0) or count, an
 *          out[0].struct_size smaller than the first cb_event, or an unknown
 *          registry.
 *  @since 1.1
 *  Thread safety: any thread, lock-free. */
CB_API int cb_events_poll(cb_registry *reg, cb_event *out, size_t max, size_t *count) CB_NOEXCEPT;

/** How many events the registry's queue has dropped since it opened.
 *  @param reg NULL = the default registry.
 *  @return CB_OK; CB_EINVAL for a NULL out or an unknown registry.
 *  @since 1.1
 *  Thread safety: any thread, lock-free. */
CB_API int cb_events_dropped(cb_registry *reg, uint64_t *out) CB_NOEXCEPT;

/** Renders every breaker of the registry in the Prometheus text exposition
 *  format 0.0.4: metrics named lazybreaker_*, labelled breaker="name"
 *  (anonymous breakers: breaker="#" and the handle in hex). See
 *  docs/observability.md for the metrics.
 *  @param reg NULL = the default registry.
 *  @param buf where to write the text, NUL-terminated; NULL with size 0 asks
 *         only for the size.
 *  @param needed receives the length of the text, without the NUL.
 *  @return CB_OK (with buf NULL and size 0: only *needed is set);
 *          CB_ERANGE when size <= *needed (nothing is written: call again
 *          with at least *needed + 1 bytes, with room to spare, since the
 *          text grows with breakers and with counters' digits); CB_EINVAL
 *          for a NULL needed, a NULL buf with size > 0, or an unknown
 *          registry.
 *  @since 1.1
 *  Thread safety: any thread. Figures are read without a lock, each
 *  breaker's a moment apart from the next's. Allocates: meant for a scrape
 *  endpoint, not the request path. */
CB_API int cb_metrics_prometheus(cb_registry *reg, char *buf, size_t size,
                                 size_t *needed) CB_NOEXCEPT;

/** Lists the handles of the registry's live breakers.
 *  @param reg NULL = the default registry.
 *  @param out room for `max` handles (may be NULL when max is 0).
 *  @param count receives how many breakers there are (may exceed max).
 *  @return CB_OK; CB_EINVAL for a NULL count, a NULL out with max > 0, or an
 *          unknown registry.
 *  @since 1.1
 *  Thread safety: any thread, lock-free. Breakers created or destroyed
 *  meanwhile may or may not be listed. */
CB_API int cb_registry_list(cb_registry *reg, cb_handle *out, size_t max,
                            size_t *count) CB_NOEXCEPT;

/** Copies the breaker's name (NUL-terminated, "" when anonymous) into buf.
 *  @param size the size of buf; CB_MAX_NAME_BYTES + 1 always suffices.
 *  @return CB_OK; CB_EINVAL for a NULL buf or a buf too small (nothing is
 *          written then); CB_EHANDLE.
 *  @since 1.0
 *  Thread safety: any thread, lock-free. */
CB_API int cb_name(cb_handle h, char *buf, size_t size) CB_NOEXCEPT;

/** Names a status: the text starts with the code's name ("CB_EINVAL: ...")
 *  and goes on with a short description; "unknown status" for any other int.
 *  @return never NULL; a static string.
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API const char *cb_strerror(int status) CB_NOEXCEPT;

/** The detail of the calling thread's last error, e.g. "cb_config:
 *  failure_threshold must be 1..65535, got 0".
 *  @return never NULL ("" when no call on this thread has failed). A
 *          successful call leaves it as it was; the next failing call on
 *          this thread overwrites it.
 *  @since 1.0
 *  Thread safety: any thread. The message is per thread. */
CB_API const char *cb_last_error_message(void) CB_NOEXCEPT;

/** The field at fault in the calling thread's last failing call: the C
 *  name of the cb_config or cb_registry_options field ("open_duration_ns",
 *  "capacity", "struct_size"), or of the parameter ("name", "open_for_ns",
 *  "outcome", "out"), that made it fail; for a registry file whose capacity
 *  or clock the options disagree with, "capacity" or "clock"; after a
 *  cb_get_or_create that found the name with another configuration, the
 *  first cb_config field (in the struct's order) whose value differs. A
 *  binding renders its own message from this and the status, never from
 *  cb_last_error_message's text.
 *  @return a static string, or NULL when the last failing call named no
 *          field (or no call on this thread has failed). A successful call
 *          leaves it as it was; the next failing call overwrites it.
 *  @since 1.3
 *  Thread safety: any thread. The field is per thread. */
CB_API const char *cb_last_error_field(void) CB_NOEXCEPT;

/** Names a status: "CB_EINVAL" for CB_EINVAL (the enumerator, as in
 *  CB_STATUS_LIST).
 *  @return a static string; NULL for a value that is no status.
 *  @since 1.3
 *  Thread safety: any thread. */
CB_API const char *cb_status_name(int status) CB_NOEXCEPT;

/** Names a state: "closed", "open", "half_open", "forced_open" or
 *  "disabled" (CB_STATE_LIST; the Prometheus `state` label's values).
 *  @return a static string; NULL for a value that is no cb_state_t.
 *  @since 1.3
 *  Thread safety: any thread. */
CB_API const char *cb_state_name(int state) CB_NOEXCEPT;

/** Names a reason: the enumerator without CB_REASON_, in lower case
 *  ("consecutive_failures", "failure_rate", ..., CB_REASON_LIST).
 *  @return a static string; NULL for a value that is no cb_reason_t.
 *  @since 1.3
 *  Thread safety: any thread. */
CB_API const char *cb_reason_name(int reason) CB_NOEXCEPT;

/** The library's version as "MAJOR.MINOR.PATCH".
 *  @return the version; never NULL.
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API const char *cb_version_string(void) CB_NOEXCEPT;

/** The library's version as MAJOR * 10000 + MINOR * 100 + PATCH, to compare
 *  with CB_VERSION_NUMBER.
 *  @return the number, e.g. 10100 for 1.1.0.
 *  @since 1.0
 *  Thread safety: any thread. */
CB_API int cb_version_number(void) CB_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LAZYBREAKER_H */
