/* go.i: the Go overlay of lazybreaker.i. SWIG generates the low layer of
 * the Go binding from it: package lbswig in bindings/go/internal/lbswig
 * (internal, so a user of package lazybreaker never sees it), which the
 * hand-written API in bindings/go uses for everything but the request path
 * (cgo calls of its own there, see bindings/go/fastpath.go). What is Go's
 * alone lives here:
 *
 *   - %lb_raise panics in Go with "lazybreaker status N: MESSAGE" (SWIG's
 *     _swig_gopanic). The message must be read in the failing C call:
 *     between two cgo calls a goroutine may move to another OS thread, and
 *     cb_last_error_message() is per thread. The Go layer recovers the panic
 *     and turns it into an error value (bindings/go/errors.go).
 *   - uint64_t (handles, tickets, nanoseconds) is a Go uint64, as SWIG's
 *     stdint.i has it; statuses with a uint64_t result return that uint64.
 *   - strings cross as Go strings, copied: SWIG's own char * typemaps
 *     (the Go layer refuses a name with a NUL inside, which C would cut).
 *   - one Go-only helper, lb_go_create (at the end): "" is the anonymous
 *     breaker.
 */
%module lbswig

%{
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "lazybreaker/lazybreaker.h"
%}
%{
/* Formats the status and this thread's last error message, then panics in
 * Go: the panic unwinds the C wrapper (which holds nothing to release). */
static void _swig_gopanic(const char *p);
static void lb_go_raise(int status) {
  char text[64 + 512];
  snprintf(text, sizeof text, "lazybreaker status %d: %s", status, cb_last_error_message());
  _swig_gopanic(text);
}
%}
%define %lb_raise(status)
  lb_go_raise(status);
%enddef
#define LB_RAISE_DEFINED

/* ---- return types of the abstract typemaps -------------------------------- */
%typemap(gotype) int LB_STATUS_U64, int LB_LOOKUP "uint64"
%typemap(gotype) int LB_STATUS, int LB_STATE "int"

/* ---- names in --------------------------------------------------------------- */
/* A Go string is not NUL-terminated: SWIG's own typemap mallocs a copy,
 * which a raise (a panic: freearg never runs) would leak. Names are short,
 * so the copy goes on the stack; a longer string is cut to one byte over
 * the limit, which the library refuses exactly as it refuses the whole
 * (it measures with strnlen up to CB_MAX_NAME_BYTES + 1). A NUL inside
 * would silently cut the name: refused here. */
%typemap(in) const char *name (char buf[CB_MAX_NAME_BYTES + 2]) {
  size_t n = (size_t)$input.n;
  if (n > CB_MAX_NAME_BYTES + 1) n = CB_MAX_NAME_BYTES + 1;
  if (n > 0 && memchr($input.p, 0, n)) {
    _swig_gopanic("lazybreaker status -1: name: a NUL byte inside the name");
  }
  if (n > 0) memcpy(buf, $input.p, n);
  buf[n] = '\0';
  $1 = buf;
}
%typemap(freearg) const char *name ""
/* A shared registry's path, the same way, on a buffer of PATH_MAX: a
 * longer path could never be opened (ENAMETOOLONG), so it is refused here
 * rather than cut. */
%typemap(in) const char *path (char buf[PATH_MAX]) {
  size_t n = (size_t)$input.n;
  if (n >= sizeof buf) {
    _swig_gopanic("lazybreaker status -1: path: longer than PATH_MAX - 1 bytes");
  }
  if (n > 0 && memchr($input.p, 0, n)) {
    _swig_gopanic("lazybreaker status -1: path: a NUL byte inside the path");
  }
  if (n > 0) memcpy(buf, $input.p, n);
  buf[n] = '\0';
  $1 = buf;
}
%typemap(freearg) const char *path ""

/* SWIG's Go argout typemaps cannot assign $result (it names the C call's
 * own result there): these set the wrapper's return value directly. */
#define LB_OVERLAY_ARGOUT
%typemap(argout) uint64_t *LB_OUT_U64 {
  _swig_go_result = (long long)temp$argnum;
}
%typemap(argout) cb_ticket *LB_OUT_TICKET {
  _swig_go_result = result == CB_OK ? (long long)temp$argnum : 0;
}

%include "lazybreaker.i"

/* Go's Settings.Name "" is the anonymous breaker, which SWIG's string
 * typemap cannot say (it passes "", not NULL): cb_create through this
 * helper, which passes NULL for "". Any other name goes as it is, and the
 * library judges it. */
%{
static int lb_go_create(cb_registry *reg, const char *name, const cb_config *cfg, cb_handle *out) {
  return cb_create(reg, name && name[0] ? name : NULL, cfg, out);
}
%}
%apply int LB_STATUS_U64 { int lb_go_create };
%rename("%s") lb_go_create;
int lb_go_create(cb_registry *reg, const char *name, const cb_config *cfg, cb_handle *out);
