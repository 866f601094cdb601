package lazybreaker

// The cold calls: everything but the request path (fastpath.go) goes
// through these shims. Each makes its C call and, when that fails, reads
// the calling thread's status, field and message in the same crossing and
// returns them by value: between two cgo calls a goroutine may move to
// another OS thread, and cb_last_error_field() and cb_last_error_message()
// are per thread. Nothing panics, nothing is recovered, no message is
// parsed: code reads the status and the field, people read the message.
//
// Pointers cross as uintptr_t (registries, SWIG's cb_config) and are cast
// in C, so the Go side holds no unsafe conversion of a uintptr; outputs
// (counters, a configuration, events, names, text) go into Go memory that
// holds no Go pointer, as cgo allows.

/*
#cgo pkg-config: lazybreaker
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <lazybreaker/lazybreaker.h>

typedef struct lb_go_result {
  uint64_t value;     // the call's result (a handle, nanoseconds, a count, a pointer)
  int status;         // the C status
  const char *field;  // on failure: cb_last_error_field() (static), or NULL
  char message[512];  // on failure: cb_last_error_message()
} lb_go_result;

static lb_go_result lb_go_finish(int status, uint64_t value) {
  lb_go_result r;
  r.value = status < 0 ? 0 : value;
  r.status = status;
  r.field = NULL;
  r.message[0] = '\0';
  if (status < 0) {
    r.field = cb_last_error_field();
    strncpy(r.message, cb_last_error_message(), sizeof r.message - 1);
    r.message[sizeof r.message - 1] = '\0';
  }
  return r;
}

// A Go string, NUL-terminated in buf (size bytes). The caller has refused a
// NUL inside and a string that cannot fit (Go checks both first).
static const char *lb_go_cstring(_GoString_ s, char *buf, size_t size) {
  size_t n = _GoStringLen(s);
  if (n >= size) n = size - 1;
  memcpy(buf, _GoStringPtr(s), n);
  buf[n] = '\0';
  return buf;
}

static lb_go_result lb_go_registry_open(uint32_t capacity, int manual, uint32_t event_capacity,
                                        uint32_t flags, uint32_t mode, _GoString_ path) {
  char buf[PATH_MAX];
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = capacity;
  o.clock = manual ? CB_CLOCK_MANUAL : CB_CLOCK_MONOTONIC;
  o.event_capacity = event_capacity;
  if (_GoStringLen(path) > 0) {
    o.path = lb_go_cstring(path, buf, sizeof buf);
    o.flags = flags;
    o.mode = mode;
  }
  cb_registry *reg = NULL;
  const int st = cb_registry_open(&o, &reg);
  return lb_go_finish(st, (uint64_t)(uintptr_t)reg);
}
static lb_go_result lb_go_default_registry(void) {
  cb_registry *reg = cb_default_registry();
  return lb_go_finish(reg ? CB_OK : CB_ENOMEM, (uint64_t)(uintptr_t)reg);
}
static lb_go_result lb_go_registry_close(uintptr_t reg) {
  return lb_go_finish(cb_registry_close((cb_registry *)reg), 0);
}
static lb_go_result lb_go_clock_advance(uintptr_t reg, uint64_t ns) {
  return lb_go_finish(cb_clock_advance((cb_registry *)reg, ns), 0);
}
static lb_go_result lb_go_clock_now(uintptr_t reg) {
  uint64_t ns = 0;
  const int st = cb_clock_now((cb_registry *)reg, &ns);
  return lb_go_finish(st, ns);
}

// cb_create (anonymous for "") or cb_get_or_create.
static lb_go_result lb_go_create(uintptr_t reg, _GoString_ name, uintptr_t cfg, int get_or_create) {
  char buf[CB_MAX_NAME_BYTES + 2];
  const char *n = _GoStringLen(name) > 0 ? lb_go_cstring(name, buf, sizeof buf) : NULL;
  cb_handle h = 0;
  const int st = get_or_create ? cb_get_or_create((cb_registry *)reg, n, (const cb_config *)cfg, &h)
                               : cb_create((cb_registry *)reg, n, (const cb_config *)cfg, &h);
  return lb_go_finish(st, h);
}
static lb_go_result lb_go_lookup(uintptr_t reg, _GoString_ name) {
  char buf[CB_MAX_NAME_BYTES + 2];
  cb_handle h = 0;
  const int st = cb_lookup((cb_registry *)reg, lb_go_cstring(name, buf, sizeof buf), &h);
  return lb_go_finish(st, h);
}
static lb_go_result lb_go_list(uintptr_t reg, cb_handle *out, size_t max) {
  size_t count = 0;
  const int st = cb_registry_list((cb_registry *)reg, out, max, &count);
  return lb_go_finish(st, count);
}
static lb_go_result lb_go_name(cb_handle h, char *buf) {
  return lb_go_finish(cb_name(h, buf, CB_MAX_NAME_BYTES + 1), 0);
}

static lb_go_result lb_go_destroy(cb_handle h) { return lb_go_finish(cb_destroy(h), 0); }
static lb_go_result lb_go_force_open(cb_handle h) { return lb_go_finish(cb_force_open(h), 0); }
static lb_go_result lb_go_disable(cb_handle h) { return lb_go_finish(cb_disable(h), 0); }
static lb_go_result lb_go_reset(cb_handle h) { return lb_go_finish(cb_reset(h), 0); }
static lb_go_result lb_go_trip(cb_handle h, uint64_t ns) { return lb_go_finish(cb_trip(h, ns), 0); }
static lb_go_result lb_go_state(cb_handle h) {
  const int st = cb_state(h);
  return lb_go_finish(st < 0 ? st : CB_OK, st < 0 ? 0 : (uint64_t)st);
}
static lb_go_result lb_go_retry_after(cb_handle h) {
  uint64_t ns = 0;
  const int st = cb_retry_after(h, &ns);
  return lb_go_finish(st, ns);
}
static lb_go_result lb_go_stats(cb_handle h, cb_stats *out) {
  out->struct_size = sizeof *out;
  return lb_go_finish(cb_stats_get(h, out), 0);
}
static lb_go_result lb_go_config_get(cb_handle h, uintptr_t out) {
  return lb_go_finish(cb_config_get(h, (cb_config *)out), 0);
}

static lb_go_result lb_go_events_select(uintptr_t reg, unsigned kinds) {
  return lb_go_finish(cb_events_select((cb_registry *)reg, kinds), 0);
}
static lb_go_result lb_go_events_dropped(uintptr_t reg) {
  uint64_t n = 0;
  const int st = cb_events_dropped((cb_registry *)reg, &n);
  return lb_go_finish(st, n);
}
static lb_go_result lb_go_events_poll(uintptr_t reg, cb_event *out, size_t max) {
  size_t count = 0;
  out[0].struct_size = sizeof *out;
  const int st = cb_events_poll((cb_registry *)reg, out, max, &count);
  return lb_go_finish(st, count);
}
static lb_go_result lb_go_prometheus(uintptr_t reg, char *buf, size_t size) {
  size_t needed = 0;
  const int st = cb_metrics_prometheus((cb_registry *)reg, buf, size, &needed);
  return lb_go_finish(st, needed);
}
*/
import "C"

import (
	"unsafe"
)

// failed is the *Error of a failed shim call, or nil: the status, the field
// and the message the call left on its thread, in the binding's words once
// the caller has said what it passed (see describe.go).
func failed(op string, r C.lb_go_result) *Error {
	if r.status >= 0 {
		return nil
	}
	return failure(op, r)
}

// failure is failed's error. Not inlined: reading the message takes the
// result's address, which would move every caller's result to the heap,
// an allocation per successful call too.
//
//go:noinline
func failure(op string, r C.lb_go_result) *Error {
	e := &Error{Op: op, Status: int(r.status), field: C.GoString(r.field), Message: C.GoString(&r.message[0])}
	if e.Status == statusEHandle {
		e.text = "the breaker or its registry is closed"
	}
	return e
}

func cgoRegistryOpen(o RegistryOptions) (uintptr, *Error) {
	var flags C.uint32_t
	if o.Create {
		flags |= C.CB_REGISTRY_CREATE
	}
	if o.Exclusive {
		flags |= C.CB_REGISTRY_EXCLUSIVE
	}
	if o.AnyOwner {
		flags |= C.CB_REGISTRY_ANY_OWNER
	}
	manual := C.int(0)
	if o.ManualClock {
		manual = 1
	}
	r := C.lb_go_registry_open(C.uint32_t(o.Capacity), manual, C.uint32_t(o.EventCapacity), flags,
		C.uint32_t(o.Mode), o.Path)
	return uintptr(r.value), failed(openRegistryOp, r)
}

func cgoDefaultRegistry() (uintptr, *Error) {
	r := C.lb_go_default_registry()
	return uintptr(r.value), failed("DefaultRegistry", r)
}

func cgoRegistryClose(op string, reg uintptr) *Error {
	return failed(op, C.lb_go_registry_close(C.uintptr_t(reg)))
}

func cgoClockAdvance(reg uintptr, ns uint64) *Error {
	return failed("Advance", C.lb_go_clock_advance(C.uintptr_t(reg), C.uint64_t(ns)))
}

func cgoClockNow(reg uintptr) (uint64, *Error) {
	r := C.lb_go_clock_now(C.uintptr_t(reg))
	return uint64(r.value), failed("Now", r)
}

// cgoCreate: cfg is SWIG's cb_config (its Swigcptr).
func cgoCreate(op string, reg uintptr, name string, cfg uintptr, getOrCreate bool) (uint64, *Error) {
	g := C.int(0)
	if getOrCreate {
		g = 1
	}
	r := C.lb_go_create(C.uintptr_t(reg), name, C.uintptr_t(cfg), g)
	return uint64(r.value), failed(op, r)
}

func cgoLookup(reg uintptr, name string) (uint64, *Error) {
	r := C.lb_go_lookup(C.uintptr_t(reg), name)
	return uint64(r.value), failed("Lookup", r)
}

// cgoList takes the handles, asking again with room to spare while
// breakers are created meanwhile.
func cgoList(reg uintptr) ([]uint64, *Error) {
	r := C.lb_go_list(C.uintptr_t(reg), nil, 0)
	for {
		if err := failed("Breakers", r); err != nil {
			return nil, err
		}
		room := uint64(r.value) + 16
		handles := make([]C.cb_handle, room)
		r = C.lb_go_list(C.uintptr_t(reg), &handles[0], C.size_t(room))
		if r.status >= 0 && uint64(r.value) <= room {
			list := make([]uint64, r.value)
			for i := range list {
				list[i] = uint64(handles[i])
			}
			return list, nil
		}
	}
}

func cgoName(h uint64) (string, *Error) {
	var buf [C.CB_MAX_NAME_BYTES + 1]C.char
	r := C.lb_go_name(C.cb_handle(h), &buf[0])
	if err := failed("Lookup", r); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

func cgoDestroy(op string, h uint64) *Error { return failed(op, C.lb_go_destroy(C.cb_handle(h))) }
func cgoForceOpen(h uint64) *Error          { return failed("ForceOpen", C.lb_go_force_open(C.cb_handle(h))) }
func cgoDisable(h uint64) *Error            { return failed("Disable", C.lb_go_disable(C.cb_handle(h))) }
func cgoReset(h uint64) *Error              { return failed("Reset", C.lb_go_reset(C.cb_handle(h))) }

func cgoTrip(h uint64, ns uint64) *Error {
	return failed("Trip", C.lb_go_trip(C.cb_handle(h), C.uint64_t(ns)))
}

func cgoState(h uint64) (State, *Error) {
	r := C.lb_go_state(C.cb_handle(h))
	return State(r.value), failed("State", r)
}

func cgoRetryAfter(h uint64) (uint64, *Error) {
	r := C.lb_go_retry_after(C.cb_handle(h))
	return uint64(r.value), failed("RetryAfter", r)
}

func cgoCounts(h uint64) (Counts, *Error) {
	var s C.cb_stats
	if err := failed("Counts", C.lb_go_stats(C.cb_handle(h), &s)); err != nil {
		return Counts{}, err
	}
	return Counts{
		Requests:            uint64(s.admitted),
		Rejections:          uint64(s.rejected),
		TotalSuccesses:      uint64(s.successes),
		TotalFailures:       uint64(s.failures),
		TotalExclusions:     uint64(s.ignored),
		Trips:               uint64(s.trips),
		ConsecutiveFailures: uint32(s.consecutive_failures),
		Slow:                uint64(s.slow),
		FailureRate:         float64(s.failure_rate),
		SlowRate:            float64(s.slow_rate),
		InState:             wait(uint64(s.state_ns)),
	}, nil
}

// cgoConfigGet reads the breaker's configuration into SWIG's cb_config
// (made by cb_config_init, so its struct_size is set).
func cgoConfigGet(h uint64, cfg uintptr) *Error {
	return failed("Config", C.lb_go_config_get(C.cb_handle(h), C.uintptr_t(cfg)))
}

func cgoEventsSelect(reg uintptr, kinds EventKinds) *Error {
	return failed("SelectEvents", C.lb_go_events_select(C.uintptr_t(reg), C.unsigned(kinds)))
}

func cgoEventsDropped(reg uintptr) (uint64, *Error) {
	r := C.lb_go_events_dropped(C.uintptr_t(reg))
	return uint64(r.value), failed("EventsDropped", r)
}

func cgoEventsPoll(reg uintptr, max int) ([]Event, *Error) {
	batch := make([]C.cb_event, max)
	r := C.lb_go_events_poll(C.uintptr_t(reg), &batch[0], C.size_t(max))
	if err := failed("PollEvents", r); err != nil {
		return nil, err
	}
	events := make([]Event, r.value)
	for i := range events {
		e := &batch[i]
		events[i] = Event{
			Sequence: uint64(e.sequence), Breaker: C.GoString(&e.name[0]),
			From: State(e.from), To: State(e.to), Reason: Reason(e.reason), At: wait(uint64(e.at_ns)),
		}
	}
	return events, nil
}

// cgoPrometheus asks for the size, then for the text with room to spare
// (it grows with breakers and with digits while we look).
func cgoPrometheus(reg uintptr) (string, *Error) {
	r := C.lb_go_prometheus(C.uintptr_t(reg), nil, 0)
	for {
		if err := failed("Prometheus", r); err != nil {
			return "", err
		}
		size := uint64(r.value) + uint64(r.value)/4 + 256
		buf := make([]byte, size)
		r = C.lb_go_prometheus(C.uintptr_t(reg), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(size))
		if r.status == C.CB_ERANGE {
			r = C.lb_go_prometheus(C.uintptr_t(reg), nil, 0)
			continue
		}
		if r.status >= 0 {
			return string(buf[:r.value]), nil
		}
	}
}
