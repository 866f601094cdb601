// What the header (include/lazybreaker/lazybreaker.h) promises of every
// call, checked by both fuzz targets after every call they make: statuses
// in the documented set, the last error message set on every error, out-
// parameters untouched on error, state and rate values in range. A broken
// promise prints what was broken and aborts, which libFuzzer reports as a
// crash with the input that did it.
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "lazybreaker/lazybreaker.h"

namespace lbfuzz {

[[noreturn]] inline void broken(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void broken(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "\nlazybreaker fuzz: a promise of lazybreaker.h is broken: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n  (last error message: \"%s\")\n", cb_last_error_message());
  va_end(ap);
  std::abort();
}

#define LBF_CHECK(cond)                                                    \
  do {                                                                     \
    if (!(cond)) ::lbfuzz::broken("%s:%d: %s", __FILE__, __LINE__, #cond); \
  } while (0)

// LBF_CHECK with a message of its own.
#define LBF_CHECKF(cond, fmt, ...)                                                               \
  do {                                                                                           \
    if (!(cond)) ::lbfuzz::broken("%s:%d: " fmt, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

// The name every status's cb_strerror text starts with.
inline const char *status_name(int st) {
  switch (st) {
    case CB_OK:
      return "CB_OK";
    case CB_REJECTED:
      return "CB_REJECTED";
    case CB_EINVAL:
      return "CB_EINVAL";
    case CB_EHANDLE:
      return "CB_EHANDLE";
    case CB_ENOMEM:
      return "CB_ENOMEM";
    case CB_EEXIST:
      return "CB_EEXIST";
    case CB_ENOENT:
      return "CB_ENOENT";
    case CB_EFULL:
      return "CB_EFULL";
    case CB_ECORRUPT:
      return "CB_ECORRUPT";
    case CB_EVERSION:
      return "CB_EVERSION";
    case CB_EIO:
      return "CB_EIO";
    case CB_EPERM:
      return "CB_EPERM";
    case CB_ESTATE:
      return "CB_ESTATE";
    case CB_EINTERNAL:
      return "CB_EINTERNAL";
    case CB_ERANGE:
      return "CB_ERANGE";
    case CB_EBUSY:
      return "CB_EBUSY";
    default:
      return nullptr;
  }
}

// cb_strerror: never NULL, the code's name first, "unknown status" else.
inline void check_strerror(int st) {
  const char *s = cb_strerror(st);
  LBF_CHECKF(s != nullptr, "cb_strerror(%d) is NULL", st);
  const char *name = status_name(st);
  if (name != nullptr)
    LBF_CHECKF(std::strncmp(s, name, std::strlen(name)) == 0 &&
                   (s[std::strlen(name)] == ':' || s[std::strlen(name)] == '\0'),
               "cb_strerror(%d) is \"%s\", not \"%s: ...\"", st, s, name);
  else
    LBF_CHECKF(std::strcmp(s, "unknown status") == 0, "cb_strerror(%d) is \"%s\"", st, s);
}

// After every call returning a status: one of `allowed` (the function's
// @return list); on an error, the thread's message says something and the
// status has a name. CB_EINTERNAL is never allowed: it is a bug by definition.
// LB_FUZZ_TRACE=1 in the environment: every call and its status on stderr
// (to read what an input does: tests/fuzz/README.md).
inline bool tracing() {
  static const bool on = std::getenv("LB_FUZZ_TRACE") != nullptr;
  return on;
}

inline int status(const char *fn, int st, std::initializer_list<int> allowed) {
  if (tracing()) std::fprintf(stderr, "  %s -> %d\n", fn, st);
  bool ok = false;
  for (int a : allowed) ok = ok || a == st;
  LBF_CHECKF(ok, "%s returned %d (%s), which its @return does not list", fn, st,
             status_name(st) != nullptr ? status_name(st) : "no such status");
  const char *m = cb_last_error_message();
  LBF_CHECKF(m != nullptr, "%s: cb_last_error_message() is NULL", fn);
  if (st < 0) {
    LBF_CHECKF(m[0] != '\0', "%s failed with %s and left no message", fn, status_name(st));
    check_strerror(st);
  }
  return st;
}

// An out-parameter filled with a pattern before the call, to tell whether
// the call wrote it.
constexpr unsigned char kUntouched = 0xa5;

template <typename T>
void poison(T *p, size_t bytes = sizeof(T)) {
  std::memset(static_cast<void *>(p), kUntouched, bytes);
}

inline bool untouched(const void *p, size_t bytes) {
  const auto *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < bytes; ++i)
    if (b[i] != kUntouched) return false;
  return true;
}

#define LBF_UNTOUCHED(fn, st, p, bytes) \
  LBF_CHECKF(untouched((p), (bytes)), "%s failed with %d but wrote its out-parameter", fn, st)

inline bool valid_state(int s) { return s >= CB_STATE_CLOSED && s <= CB_STATE_DISABLED; }
inline bool unit_or_zero(double r) { return r >= 0.0 && r <= 1.0; }  // false for NaN

// What cb_stats promises alone (not against other reads): rates in [0, 1],
// no slow calls without tracking, no failure run outside CLOSED.
inline void check_stats_shape(const cb_stats &s, size_t size, int state) {
  LBF_CHECKF(s.struct_size == size, "cb_stats_get changed struct_size %zu to %zu", size,
             s.struct_size);
  if (state >= 0 && state != CB_STATE_CLOSED)
    LBF_CHECKF(s.consecutive_failures == 0, "consecutive_failures %u in state %d",
               s.consecutive_failures, state);
  if (size >= sizeof(cb_stats)) {
    LBF_CHECKF(unit_or_zero(s.failure_rate), "failure_rate %g", s.failure_rate);
    LBF_CHECKF(unit_or_zero(s.slow_rate), "slow_rate %g", s.slow_rate);
  }
}

// What cb_retry_after promises for each state.
inline void check_retry_after(int state, uint64_t ns) {
  switch (state) {
    case CB_STATE_CLOSED:
    case CB_STATE_DISABLED:
      LBF_CHECKF(ns == 0, "retry_after %llu in state %d", (unsigned long long)ns, state);
      break;
    case CB_STATE_FORCED_OPEN:
      LBF_CHECKF(ns == UINT64_MAX, "retry_after %llu in FORCED_OPEN", (unsigned long long)ns);
      break;
    case CB_STATE_OPEN:
      LBF_CHECKF(ns <= CB_MAX_DURATION_NS, "retry_after %llu in OPEN", (unsigned long long)ns);
      break;
    default:
      LBF_CHECKF(ns < UINT64_MAX, "retry_after %llu in HALF_OPEN", (unsigned long long)ns);
  }
}

// One polled event: whole at the stride, states and reason valid, name
// terminated.
inline void check_event(const cb_event &e, size_t stride) {
  LBF_CHECKF(e.struct_size == stride, "event struct_size %zu, stride %zu", e.struct_size, stride);
  LBF_CHECKF(valid_state(e.from) && valid_state(e.to), "event from %d to %d", e.from, e.to);
  LBF_CHECKF(e.reason >= CB_REASON_CONSECUTIVE_FAILURES && e.reason <= CB_REASON_REJECTED,
             "event reason %d", e.reason);
  if (e.reason == CB_REASON_REJECTED)
    LBF_CHECKF(e.from == e.to, "a rejection event from %d to %d", e.from, e.to);
  LBF_CHECK(std::memchr(e.name, '\0', sizeof e.name) != nullptr);
  LBF_CHECK(e.breaker != 0);
}

}  // namespace lbfuzz
