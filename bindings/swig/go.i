/* go.i: the Go overlay of lazybreaker.i. SWIG generates the low layer of
 * the Go binding from it: package lbswig in bindings/go/internal/lbswig
 * (internal, so a user of package lazybreaker never sees it). The
 * hand-written API in bindings/go uses its structs: cb_config, made by
 * cb_config_init, which Settings fill by name (and the conformance runner
 * edits). Every call into the library is cgo of the package's own: the
 * request path (fastpath.go) and the cold calls (cold.go), which return
 * the status, cb_last_error_field() and cb_last_error_message() by value,
 * read in the failing crossing (a goroutine may move to another OS thread
 * between two cgo calls, and both are per thread). What is Go's alone
 * lives here:
 *
 *   - nothing raises: %lb_raise is empty, so no wrapper panics. A wrapper
 *     returns what its C call did: a status or a state as it is (negative
 *     on failure), a handle, a count or nanoseconds as 0 on failure, a
 *     pointer as nil. Package lazybreaker calls no function wrapper; a test
 *     that does checks those.
 *   - uint64_t (handles, tickets, nanoseconds) is a Go uint64, as SWIG's
 *     stdint.i has it; statuses with a uint64_t result return that uint64.
 *   - strings cross as Go strings with SWIG's own char * typemaps (a copy,
 *     freed after the call, which no raise can skip now).
 */
%module lbswig

%{
#include "lazybreaker/lazybreaker.h"
%}
%define %lb_raise(status)
%enddef
#define LB_RAISE_DEFINED

/* ---- return types of the abstract typemaps -------------------------------- */
%typemap(gotype) int LB_STATUS_U64, int LB_LOOKUP "uint64"
%typemap(gotype) int LB_STATUS, int LB_STATE "int"

/* SWIG's Go argout typemaps cannot assign $result (it names the C call's
 * own result there): these set the wrapper's return value directly, 0 when
 * the call failed (its out-parameter untouched). */
#define LB_OVERLAY_ARGOUT
%typemap(argout) uint64_t *LB_OUT_U64 {
  _swig_go_result = result < 0 ? 0 : (long long)temp$argnum;
}
%typemap(argout) cb_ticket *LB_OUT_TICKET {
  _swig_go_result = result == CB_OK ? (long long)temp$argnum : 0;
}

%include "lazybreaker.i"
