/* lazybreaker.i: the one SWIG interface for the Java, C#, Go and Lua
 * bindings. It wraps the C ABI (include/lazybreaker/lazybreaker.h), never
 * the C++ classes, and it decides, once for every language:
 *
 *   - WHAT is wrapped: an allow-list. Everything in the header is %ignore'd,
 *     then each public handle type, function, struct and constant is brought
 *     back by name (section 2). A function added to the header stays out of
 *     every binding until it is named here.
 *   - HOW statuses surface: every function that returns a status is listed
 *     in one %apply (section 3). A negative status raises the language's
 *     error through %lb_raise(status), the one hook an overlay must define;
 *     CB_REJECTED is not an error and never raises.
 *   - WHERE results go: out-parameters become return values (cb_create
 *     returns the handle, cb_allow the ticket or 0 when rejected, ...).
 *   - HOW config and options start: cb_config, cb_registry_options, cb_stats
 *     and cb_event are constructed through their *_init functions (or with
 *     struct_size set), so no binding ever hard-codes a default.
 *
 * A language includes this file from its overlay (bindings/swig/java.i,
 * csharp.i, go.i, lua.i), which, BEFORE the %include:
 *
 *   - defines %lb_raise(status): C code that raises the language's error for
 *     the negative `status` and leaves the wrapper (Java: throw, then
 *     `return $null;`). It runs on the thread of the failing call, so it may
 *     read cb_last_error_message(), which is per thread.
 *   - maps uint64_t (handles, tickets, nanoseconds) to a 64-bit integer of
 *     its own if SWIG's default does not suit it (Java: long, not BigInteger).
 *   - sets the return type of the abstract typemaps below where its SWIG
 *     module needs it (Java: jni/jtype/jstype/javaout of `int LB_STATUS_U64`
 *     is long; `int LB_STATUS` may become void).
 *   - may #define LB_OVERLAY_ARGOUT and then defines the argout typemaps of
 *     section 3 itself (a language that returns values on a stack, as Lua
 *     does, cannot assign $result).
 *   - may define %lb_return_int(value) and #define LB_RETURN_INT_DEFINED
 *     for the same reason: how LB_STATUS and LB_STATE return their int.
 *
 * The abstract typemap names (the contract between this file and overlays):
 *
 *   int LB_STATUS           a status and nothing else: raises below 0, else
 *                           passes the status (>= 0) through ($result).
 *   int LB_STATUS_U64       a status with one uint64_t out-parameter that is
 *                           the result: raises below 0; the result is set by
 *                           the out-parameter's argout.
 *   int LB_STATE            a value (>= 0) or a status: cb_state's
 *                           cb_state_t, lb_policy_reads' CB_FIELD_*.
 *   int LB_LOOKUP           cb_lookup: as LB_STATUS_U64, but CB_ENOENT gives
 *                           the handle 0 instead of raising.
 *   uint64_t *LB_OUT_U64    an out-parameter that becomes the result.
 *   cb_ticket *LB_OUT_TICKET  cb_allow's ticket: the result, 0 when rejected.
 *   %lb_check_null(NAME)    constructors and helpers that return a pointer
 *                           return NULL on failure and leave the status in
 *                           lb_last_status() (thread-local); an %exception
 *                           raises it, so the language's own pointer and
 *                           string typemaps do the conversion and only the
 *                           check is ours. lb_prometheus and lb_name return
 *                           malloc'd UTF-8 (%newobject: freed after the copy).
 *
 * The C glue in this file (the lb_* helpers) is binding-neutral: it loops
 * the size-probing calls (Prometheus text, breaker lists, event batches)
 * that every language would otherwise write again. It decides nothing about
 * breakers; the state machine stays in the library.
 */

%{
#include <stdlib.h>
#include <string.h>
#include "lazybreaker/lazybreaker.h"
%}

%include <stdint.i>

/* ---- 1. helpers' C side ---------------------------------------------------- */
%{
/* The status of the calling thread's last failed lb_* helper (the helpers
 * return NULL on failure; the wrapper then raises with this status). */
static _Thread_local int lb_status_tls = 0;
static void *lb_fail_null(int status) {
  lb_status_tls = status;
  return NULL;
}
static int lb_last_status(void) { return lb_status_tls; }

/* A registry: the default one is never closed, so both come back as a
 * non-NULL pointer or NULL with a status. */
static cb_registry *lb_registry_open(const cb_registry_options *opts) {
  cb_registry *reg = NULL;
  const int st = cb_registry_open(opts, &reg);
  return st == CB_OK ? reg : (cb_registry *)lb_fail_null(st);
}
/* A shared registry: opts with `path` set for this call only. The path is
 * an argument, not a struct member, so that it crosses with the language's
 * own string typemap and the options struct never owns a string (SWIG's
 * char * member setter would malloc a copy that nothing frees). NULL path
 * = a private registry, as lb_registry_open. */
static cb_registry *lb_registry_open_at(const cb_registry_options *opts, const char *path) {
  cb_registry_options with_path;
  cb_registry_options_init(&with_path);
  if (opts) with_path = *opts;
  with_path.path = path;
  return lb_registry_open(&with_path);
}
static cb_registry *lb_default_registry(void) {
  cb_registry *reg = cb_default_registry();
  return reg ? reg : (cb_registry *)lb_fail_null(CB_ENOMEM);
}

/* The Prometheus text, malloc'd (the language copies and frees it). The
 * text grows with breakers and with digits while we look, so ask again with
 * room to spare until it fits. */
/* cb_policy_reads with its answer as the result: a CB_FIELD_* (>= 0), or
 * the status when it fails. */
static int lb_policy_reads(int policy, const char *field) {
  int reads = CB_FIELD_IGNORED;
  const int st = cb_policy_reads(policy, field, &reads);
  return st == CB_OK ? reads : st;
}
static char *lb_prometheus(cb_registry *reg) {
  size_t needed = 0;
  int st = cb_metrics_prometheus(reg, NULL, 0, &needed);
  while (st == CB_OK || st == CB_ERANGE) {
    const size_t size = needed + needed / 4 + 256;
    char *buf = (char *)malloc(size);
    if (!buf) return (char *)lb_fail_null(CB_ENOMEM);
    st = cb_metrics_prometheus(reg, buf, size, &needed);
    if (st == CB_OK) return buf;
    free(buf);
  }
  return (char *)lb_fail_null(st);
}

/* A breaker's name, malloc'd; "" when anonymous. */
static char *lb_name(cb_handle h) {
  char buf[CB_MAX_NAME_BYTES + 1];
  const int st = cb_name(h, buf, sizeof buf);
  if (st != CB_OK) return (char *)lb_fail_null(st);
  char *copy = (char *)malloc(strlen(buf) + 1);
  if (!copy) return (char *)lb_fail_null(CB_ENOMEM);
  strcpy(copy, buf);
  return copy;
}
%}

/* A snapshot of a registry's breaker handles (cb_registry_list), and a
 * reusable array that cb_events_poll fills (struct_size set each poll). */
%{
typedef struct lb_handle_list {
  size_t count;
  cb_handle *handles;
} lb_handle_list;

typedef struct lb_event_batch {
  size_t capacity;
  size_t count;
  cb_event *events;
} lb_event_batch;
%}
%{
static lb_handle_list *lb_handle_list_new(cb_registry *reg) {
  lb_handle_list *list = (lb_handle_list *)calloc(1, sizeof *list);
  if (!list) return (lb_handle_list *)lb_fail_null(CB_ENOMEM);
  size_t count = 0;
  int st = cb_registry_list(reg, NULL, 0, &count);
  while (st == CB_OK) {
    const size_t room = count + 16;
    cb_handle *handles = (cb_handle *)realloc(list->handles, room * sizeof *handles);
    if (!handles) {
      st = CB_ENOMEM;
      break;
    }
    list->handles = handles;
    st = cb_registry_list(reg, handles, room, &count);
    if (st == CB_OK && count <= room) {
      list->count = count;
      return list;
    }
  }
  free(list->handles);
  free(list);
  return (lb_handle_list *)lb_fail_null(st);
}
static void lb_handle_list_free(lb_handle_list *list) {
  if (list) free(list->handles);
  free(list);
}
static cb_handle lb_handles_at(const lb_handle_list *list, size_t i) {
  return i < list->count ? list->handles[i] : 0;
}

static lb_event_batch *lb_event_batch_new(size_t capacity) {
  if (capacity == 0) return (lb_event_batch *)lb_fail_null(CB_EINVAL);
  lb_event_batch *b = (lb_event_batch *)calloc(1, sizeof *b);
  if (!b) return (lb_event_batch *)lb_fail_null(CB_ENOMEM);
  b->events = (cb_event *)calloc(capacity, sizeof *b->events);
  if (!b->events) {
    free(b);
    return (lb_event_batch *)lb_fail_null(CB_ENOMEM);
  }
  b->capacity = capacity;
  return b;
}
static void lb_event_batch_free(lb_event_batch *b) {
  if (b) free(b->events);
  free(b);
}
static int lb_events_poll_into(lb_event_batch *b, cb_registry *reg) {
  size_t count = 0;
  b->events[0].struct_size = sizeof(cb_event);
  const int st = cb_events_poll(reg, b->events, b->capacity, &count);
  b->count = st == CB_OK ? count : 0;
  return st == CB_OK ? (int)count : st;
}
static const cb_event *lb_events_at(const lb_event_batch *b, size_t i) {
  return i < b->count ? &b->events[i] : (const cb_event *)lb_fail_null(CB_EINVAL);
}
%}

/* ---- 2. the allow-list ----------------------------------------------------- */
%ignore "";
%define %lb_expose(NAME) %rename("%s") NAME; %enddef
/* struct members of exposed structs come back; those that the library owns
 * (struct_size) stay hidden */
%rename("%s", %$ismember) "";

/* handles, structs, enums */
%lb_expose(cb_handle) %lb_expose(cb_ticket) %lb_expose(cb_registry)
%lb_expose(cb_config) %lb_expose(cb_registry_options) %lb_expose(cb_stats) %lb_expose(cb_event)
%lb_expose(cb_state_t) %lb_expose(cb_outcome_t) %lb_expose(cb_policy_t) %lb_expose(cb_reason_t)
%ignore cb_config::struct_size;
%ignore cb_registry_options::struct_size;
%ignore cb_stats::struct_size;
%ignore cb_event::struct_size;
/* Statistics and events are read-only views of what the library wrote. */
%nodefaultctor cb_event;
%nodefaultdtor cb_event;
%immutable cb_stats::admitted; %immutable cb_stats::rejected; %immutable cb_stats::successes;
%immutable cb_stats::failures; %immutable cb_stats::ignored; %immutable cb_stats::trips;
%immutable cb_stats::consecutive_failures; %immutable cb_stats::slow;
%immutable cb_stats::failure_rate; %immutable cb_stats::slow_rate; %immutable cb_stats::state_ns;
%immutable cb_event::sequence; %immutable cb_event::breaker; %immutable cb_event::from;
%immutable cb_event::to; %immutable cb_event::reason; %immutable cb_event::at_ns;
%immutable cb_event::name;
/* The path of a shared registry is lb_registry_open_at's argument (see
 * there), never a member a binding sets. */
%ignore cb_registry_options::path;

/* the functions wrapped as they are */
%lb_expose(cb_registry_close) %lb_expose(cb_clock_advance) %lb_expose(cb_clock_now)
%lb_expose(cb_create) %lb_expose(cb_get_or_create) %lb_expose(cb_lookup) %lb_expose(cb_destroy)
%lb_expose(cb_allow) %lb_expose(cb_done) %lb_expose(cb_state) %lb_expose(cb_retry_after)
%lb_expose(cb_stats_get) %lb_expose(cb_force_open) %lb_expose(cb_disable) %lb_expose(cb_reset)
%lb_expose(cb_trip) %lb_expose(cb_events_select) %lb_expose(cb_events_dropped)
%lb_expose(cb_strerror) %lb_expose(cb_last_error_message) %lb_expose(cb_last_error_field)
%lb_expose(cb_status_name) %lb_expose(cb_state_name) %lb_expose(cb_reason_name)
%lb_expose(cb_config_get)
%lb_expose(cb_version_string) %lb_expose(cb_version_number)

/* constants: statuses, states, outcomes, policies, reasons, clocks, limits */
%lb_expose(CB_VERSION_MAJOR) %lb_expose(CB_VERSION_MINOR) %lb_expose(CB_VERSION_PATCH)
%lb_expose(CB_VERSION_NUMBER) %lb_expose(CB_VERSION_STRING)
%lb_expose(CB_OK) %lb_expose(CB_REJECTED) %lb_expose(CB_EINVAL) %lb_expose(CB_EHANDLE)
%lb_expose(CB_ENOMEM) %lb_expose(CB_EEXIST) %lb_expose(CB_ENOENT) %lb_expose(CB_EFULL)
%lb_expose(CB_ECORRUPT) %lb_expose(CB_EVERSION) %lb_expose(CB_EIO) %lb_expose(CB_EPERM)
%lb_expose(CB_ESTATE) %lb_expose(CB_EINTERNAL) %lb_expose(CB_ERANGE) %lb_expose(CB_EBUSY)
%lb_expose(CB_STATE_CLOSED) %lb_expose(CB_STATE_OPEN) %lb_expose(CB_STATE_HALF_OPEN)
%lb_expose(CB_STATE_FORCED_OPEN) %lb_expose(CB_STATE_DISABLED)
%lb_expose(CB_SUCCESS) %lb_expose(CB_FAILURE) %lb_expose(CB_IGNORED)
%lb_expose(CB_POLICY_CONSECUTIVE) %lb_expose(CB_POLICY_COUNT_WINDOW) %lb_expose(CB_POLICY_TIME_WINDOW)
%lb_expose(CB_FIELD_IGNORED) %lb_expose(CB_FIELD_READ) %lb_expose(CB_FIELD_READ_WITH_SLOW_CALLS)
%lb_expose(CB_REASON_CONSECUTIVE_FAILURES) %lb_expose(CB_REASON_FAILURE_RATE)
%lb_expose(CB_REASON_SLOW_CALL_RATE) %lb_expose(CB_REASON_OPEN_ELAPSED)
%lb_expose(CB_REASON_PROBE_FAILED) %lb_expose(CB_REASON_PROBE_LEASE_EXPIRED)
%lb_expose(CB_REASON_PROBES_SUCCEEDED) %lb_expose(CB_REASON_MANUAL)
%lb_expose(CB_REASON_TRIPPED) %lb_expose(CB_REASON_REJECTED)
%lb_expose(CB_CLOCK_MONOTONIC) %lb_expose(CB_CLOCK_MANUAL)
%lb_expose(CB_REGISTRY_CREATE) %lb_expose(CB_REGISTRY_EXCLUSIVE) %lb_expose(CB_REGISTRY_ANY_OWNER)
%lb_expose(CB_EVENTS_TRANSITIONS) %lb_expose(CB_EVENTS_REJECTIONS)
%lb_expose(CB_MAX_FAILURE_THRESHOLD) %lb_expose(CB_MAX_HALF_OPEN_CALLS)
%lb_expose(CB_MAX_HALF_OPEN_SUCCESSES) %lb_expose(CB_MIN_OPEN_DURATION_NS)
%lb_expose(CB_MAX_DURATION_NS) %lb_expose(CB_MAX_NAME_BYTES) %lb_expose(CB_MAX_WINDOW_SIZE)
%lb_expose(CB_MAX_WINDOW_BUCKETS) %lb_expose(CB_MIN_WINDOW_DURATION_NS)
%lb_expose(CB_MAX_MINIMUM_CALLS) %lb_expose(CB_MAX_BACKOFF_MULTIPLIER)
%lb_expose(CB_MAX_CAPACITY) %lb_expose(CB_MAX_EVENT_CAPACITY) %lb_expose(CB_DEFAULT_REGISTRY_CAPACITY)

/* the helpers (section 1) */
%lb_expose(lb_handle_list) %lb_expose(lb_event_batch)
%lb_expose(lb_registry_open) %lb_expose(lb_registry_open_at) %lb_expose(lb_default_registry) %lb_expose(lb_prometheus)
%lb_expose(lb_name)
/* cb_policy_reads(policy, field) in every language: the answer, or raises. */
%rename("cb_policy_reads") lb_policy_reads;

/* What SWIG sees of the helper structs: their counts only. */
typedef struct lb_handle_list {
  const size_t count;
} lb_handle_list;
typedef struct lb_event_batch {
  const size_t count;
} lb_event_batch;

/* Constructors and helpers that return a pointer: NULL is a failure whose
 * status lb_fail_null left behind. Declared before the %extend blocks below:
 * SWIG applies an %exception only to the declarations that follow it. */
%define %lb_check_null(NAME)
%exception NAME {
  $action
  if (!result) {
    %lb_raise(lb_last_status())
  }
}
%enddef
%lb_check_null(lb_registry_open)
%lb_check_null(lb_registry_open_at)
%lb_check_null(lb_default_registry)
%lb_check_null(lb_prometheus)
%lb_check_null(lb_name)
%lb_check_null(cb_config::cb_config)
%lb_check_null(cb_registry_options::cb_registry_options)
%lb_check_null(cb_stats::cb_stats)
%lb_check_null(lb_handle_list::lb_handle_list)
%lb_check_null(lb_event_batch::lb_event_batch)
%lb_check_null(lb_event_batch::get)
/* Constructors fill defaults through the library: a binding never
 * hard-codes one. */
%extend cb_config {
  cb_config() {
    cb_config *c = (cb_config *)calloc(1, sizeof *c);
    if (!c) return (cb_config *)lb_fail_null(CB_ENOMEM);
    cb_config_init(c);
    return c;
  }
  ~cb_config() { free($self); }
}
%extend cb_registry_options {
  cb_registry_options() {
    cb_registry_options *o = (cb_registry_options *)calloc(1, sizeof *o);
    if (!o) return (cb_registry_options *)lb_fail_null(CB_ENOMEM);
    cb_registry_options_init(o);
    return o;
  }
  ~cb_registry_options() { free($self); }
}
%extend cb_stats {
  cb_stats() {
    cb_stats *s = (cb_stats *)calloc(1, sizeof *s);
    if (!s) return (cb_stats *)lb_fail_null(CB_ENOMEM);
    s->struct_size = sizeof *s;
    return s;
  }
  ~cb_stats() { free($self); }
}
%extend lb_handle_list {
  lb_handle_list(cb_registry *reg) { return lb_handle_list_new(reg); }
  ~lb_handle_list() { lb_handle_list_free($self); }
  cb_handle get(size_t i) const { return lb_handles_at($self, i); }
}
%extend lb_event_batch {
  lb_event_batch(size_t capacity) { return lb_event_batch_new(capacity); }
  ~lb_event_batch() { lb_event_batch_free($self); }
  /* Polls into the batch; returns how many events it holds now. */
  int poll(cb_registry *reg) { return lb_events_poll_into($self, reg); }
  const cb_event *get(size_t i) const { return lb_events_at($self, i); }
}
%rename("%s") lb_handle_list::lb_handle_list;
%rename("%s") lb_handle_list::~lb_handle_list;
%rename("%s") lb_handle_list::get;
%rename("%s") lb_event_batch::lb_event_batch;
%rename("%s") lb_event_batch::~lb_event_batch;
%rename("%s") lb_event_batch::poll;
%rename("%s") lb_event_batch::get;

/* ---- 3. statuses and results ----------------------------------------------- */
#if !defined(LB_RAISE_DEFINED)
#error "an overlay must define %lb_raise(status) and #define LB_RAISE_DEFINED before including lazybreaker.i"
#endif

/* %lb_return_int(value): how a status or state (>= 0) becomes the result.
 * An overlay whose language returns values on a stack defines it (Lua:
 * push and count); every other language assigns $result. */
#if !defined(LB_RETURN_INT_DEFINED)
%define %lb_return_int(value)
  $result = value;
%enddef
#endif
%typemap(out) int LB_STATUS {
  if ($1 < 0) {
    %lb_raise($1)
  }
  %lb_return_int($1)
}
%typemap(out) int LB_STATE {
  if ($1 < 0) {
    %lb_raise($1)
  }
  %lb_return_int($1)
}
%typemap(out) int LB_STATUS_U64 {
  if ($1 < 0) {
    %lb_raise($1)
  }
}
/* cb_lookup: no breaker of that name is not an error but a 0 handle (0 is
 * never a valid handle), so a miss costs no exception. */
%typemap(out) int LB_LOOKUP {
  if ($1 < 0 && $1 != CB_ENOENT) {
    %lb_raise($1)
  }
}
%typemap(in, numinputs=0) uint64_t *LB_OUT_U64 (uint64_t temp), cb_ticket *LB_OUT_TICKET (uint64_t temp) {
  temp = 0;
  $1 = &temp;
}
#if !defined(LB_OVERLAY_ARGOUT)
%typemap(argout) uint64_t *LB_OUT_U64 {
  $result = temp$argnum;
}
%typemap(argout) cb_ticket *LB_OUT_TICKET {
  $result = result == CB_OK ? temp$argnum : 0;
}
#endif
%newobject lb_prometheus;
%newobject lb_name;

/* The classification: which function returns what. */
%apply int LB_STATUS {
  int cb_registry_close, int cb_clock_advance, int cb_destroy, int cb_done,
  int cb_stats_get, int cb_force_open, int cb_disable, int cb_reset, int cb_trip,
  int cb_events_select, int cb_config_get, int lb_event_batch::poll
};
%apply int LB_STATE { int cb_state, int lb_policy_reads };
%apply int LB_LOOKUP { int cb_lookup };
%apply int LB_STATUS_U64 {
  int cb_clock_now, int cb_create, int cb_get_or_create, int cb_allow, int cb_retry_after,
  int cb_events_dropped
};
%apply uint64_t *LB_OUT_U64 {
  uint64_t *out_ns, cb_handle *out, uint64_t *out
};
%apply cb_ticket *LB_OUT_TICKET { cb_ticket *ticket };

/* The limits first: lazybreaker.h takes them from lists.h, which SWIG does
   not follow on its own (its X-macro lists are for C and are not wrapped). */
%include "lazybreaker/lists.h"
%include "lazybreaker/lazybreaker.h"

cb_registry *lb_registry_open(const cb_registry_options *opts);
cb_registry *lb_registry_open_at(const cb_registry_options *opts, const char *path);
cb_registry *lb_default_registry(void);
char *lb_prometheus(cb_registry *reg);
int lb_policy_reads(int policy, const char *field);
char *lb_name(cb_handle h);
