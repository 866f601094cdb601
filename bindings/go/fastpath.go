package lazybreaker

// The request path: Acquire, Done, and the admission under Allow, Execute
// and ExecuteContext call the C library through cgo directly, as the cold
// calls do (cold.go), but without reading a message: a failure here is a
// stale handle or a ticket or outcome the library refuses, and copying the
// message would cost every call. SWIG's wrapper of cb_allow returns the
// ticket by value too, but it cannot say "rejected" and "in which state"
// in one crossing. These shims
// return everything by value in one crossing, so a call allocates nothing,
// admitted or rejected, and costs one cgo crossing each way. No Go pointer
// crosses: a pointer to a Go variable for cb_allow's out-parameter would
// move the variable to the heap, an allocation per call.

/*
#cgo pkg-config: lazybreaker
#include <lazybreaker/lazybreaker.h>

typedef struct lb_go_admission {
  cb_ticket ticket;  // the ticket when status is CB_OK
  int status;        // cb_allow's
  int state;         // when rejected: the state that rejected (cb_state, no clock read)
} lb_go_admission;

// cb_allow, and on a rejection the state read in the same crossing. The
// wait is not: RejectedError.RetryAfter asks for it when it is wanted.
static lb_go_admission lb_go_admit(cb_handle h) {
  lb_go_admission a = {0, 0, 0};
  a.status = cb_allow(h, &a.ticket);
  if (a.status == CB_REJECTED) a.state = cb_state(h);
  return a;
}
*/
import "C"

import (
	"math"
	"runtime"
	"time"
)

// Ticket is an admitted call's ticket, from Acquire, for Done. Opaque; it
// carries the period it was issued in, so an outcome reported after a
// transition counts in Counts but never moves the state machine.
type Ticket uint64

// Acquire asks to make a call: nil admits it (make the call, then report it
// with Done, once); ErrOpenState or ErrTooManyRequests rejects it (fail
// fast; RetryAfter gives the wait); ErrClosed after Close. It allocates
// nothing and returns the bare sentinels. In OPEN, the first call after the
// open duration becomes the probe.
func (cb *CircuitBreaker) Acquire() (Ticket, error) {
	if q := quietOn(); q != nil {
		if t, rejected, st, ok := q.admit(cb.h); ok {
			if rejected {
				return 0, rejection(st)
			}
			return t, nil
		}
	}
	a := C.lb_go_admit(C.cb_handle(cb.h))
	runtime.KeepAlive(cb)
	switch a.status {
	case statusOK:
		return Ticket(a.ticket), nil
	case statusRejected:
		return 0, rejection(State(a.state))
	}
	return 0, fastError("Acquire", int(a.status))
}

// Done reports the outcome of a call Acquire admitted. Report each ticket
// once, on the breaker that issued it: that is the caller's contract, as in
// C. A Ticket is a plain number, so Done cannot know it was reported
// before, and a CLOSED ticket reported twice counts twice, in Counts and
// in the trip policy (a probe's ticket counts once in the state machine).
// Allow's done and Execute keep the contract for you. It allocates nothing.
func (cb *CircuitBreaker) Done(t Ticket, o Outcome) error {
	if q := quietOn(); q != nil && q.done(cb.h, t, o) {
		return nil
	}
	st := C.cb_done(C.cb_handle(cb.h), C.cb_ticket(t), C.int(o))
	runtime.KeepAlive(cb)
	if st != statusOK {
		return fastError("Done", int(st))
	}
	return nil
}

// admit is Acquire with a *RejectedError (name, state) on rejection, for
// Allow, Execute and ExecuteContext. The error is the breaker's own, made
// at its first rejection in that state and returned for every later one,
// so a rejection allocates nothing; its RetryAfter asks the library for
// the wait only when called.
func (cb *CircuitBreaker) admit(op string) (Ticket, error) {
	if q := quietOn(); q != nil {
		if t, rejected, st, ok := q.admit(cb.h); ok {
			if rejected {
				return 0, cb.core.rejected(st)
			}
			return t, nil
		}
	}
	a := C.lb_go_admit(C.cb_handle(cb.h))
	runtime.KeepAlive(cb)
	switch a.status {
	case statusOK:
		return Ticket(a.ticket), nil
	case statusRejected:
		return 0, cb.core.rejected(State(a.state))
	}
	return 0, fastError(op, int(a.status))
}

// rejected is the breaker's *RejectedError for a rejection in state s,
// made once per state (a race makes two, and one of them is kept). The
// table is copied on write: it changes at most once per rejecting state.
func (c *breakerCore) rejected(s State) *RejectedError {
	i := int(s)
	if i < 0 || i >= rejectingStates {
		return &RejectedError{Breaker: c.name, State: s, h: c.h}
	}
	for {
		old := c.rejections.Load()
		if old != nil && old[i] != nil {
			return old[i]
		}
		table := new([rejectingStates]*RejectedError)
		if old != nil {
			*table = *old
		}
		table[i] = &RejectedError{Breaker: c.name, State: s, h: c.h}
		if c.rejections.CompareAndSwap(old, table) {
			return table[i]
		}
	}
}

// fastError: a stale handle is the bare ErrClosed (no allocation); any
// other status of the fast path (a ticket cb_allow never issued, an unknown
// outcome) an *Error. Its message cannot be read here: the goroutine may
// have moved to another thread since the failing call.
func fastError(op string, status int) error {
	if status == statusEHandle {
		return ErrClosed
	}
	return newError(op, status, "")
}

// wait converts the library's nanoseconds, UINT64_MAX (FORCED_OPEN)
// becoming Forever.
func wait(ns uint64) time.Duration {
	if ns > math.MaxInt64 {
		return Forever
	}
	return time.Duration(ns)
}
