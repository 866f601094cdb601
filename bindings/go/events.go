package lazybreaker

// #include <lazybreaker/lazybreaker.h>
import "C"

import (
	"fmt"
	"time"
)

// Reason is why an event happened. The values are the C library's
// cb_reason_t, as cgo reads them from lazybreaker.h.
type Reason int

const (
	ReasonConsecutiveFailures Reason = C.CB_REASON_CONSECUTIVE_FAILURES // CLOSED -> OPEN by the failure run
	ReasonFailureRate         Reason = C.CB_REASON_FAILURE_RATE         // CLOSED -> OPEN by the window's failure rate
	ReasonSlowCallRate        Reason = C.CB_REASON_SLOW_CALL_RATE       // CLOSED -> OPEN by the window's slow-call rate
	ReasonOpenElapsed         Reason = C.CB_REASON_OPEN_ELAPSED         // OPEN -> HALF_OPEN: a call after the open duration
	ReasonProbeFailed         Reason = C.CB_REASON_PROBE_FAILED         // HALF_OPEN -> OPEN: a probe failed
	ReasonProbeLeaseExpired   Reason = C.CB_REASON_PROBE_LEASE_EXPIRED  // HALF_OPEN -> OPEN: a probe stayed silent
	ReasonProbesSucceeded     Reason = C.CB_REASON_PROBES_SUCCEEDED     // HALF_OPEN -> CLOSED
	ReasonManual              Reason = C.CB_REASON_MANUAL               // ForceOpen, Disable, Reset
	ReasonTripped             Reason = C.CB_REASON_TRIPPED              // Trip
	ReasonRejected            Reason = C.CB_REASON_REJECTED             // not a transition: a rejected call (EventRejections)
)

// String is the library's name of the reason (cb_reason_name:
// "consecutive_failures", "probe_lease_expired", ...).
func (r Reason) String() string {
	if p := C.cb_reason_name(C.int(r)); p != nil {
		return C.GoString(p)
	}
	return fmt.Sprintf("unknown reason %d", int(r))
}

// Event is one entry of a registry's event queue: a state transition (or,
// when selected, a rejected call).
type Event struct {
	Sequence uint64        // position in the registry's queue; increasing
	Breaker  string        // the breaker's name ("" if anonymous)
	From, To State         // To == From for ReasonRejected
	Reason   Reason        // why
	At       time.Duration // the registry's clock
}

func (e Event) String() string {
	return fmt.Sprintf("#%d %q %s -> %s (%s) at %v", e.Sequence, e.Breaker, e.From, e.To, e.Reason, e.At)
}

// EventKinds selects what a registry records (SelectEvents).
type EventKinds uint

const (
	EventTransitions EventKinds = C.CB_EVENTS_TRANSITIONS // state transitions (the default)
	EventRejections  EventKinds = C.CB_EVENTS_REJECTIONS  // every rejected call
)

// PollEvents takes up to max events, oldest first; the events of one
// breaker come in the order its transitions happened. Nothing runs on an
// event: the application drains the queue when it likes (no OnStateChange
// callback that could deadlock, as gobreaker's can). A full queue drops its
// oldest events (EventsDropped counts them).
func (r *Registry) PollEvents(max int) ([]Event, error) {
	if max <= 0 {
		return nil, newError("PollEvents", statusEInval, fmt.Sprintf("max must be positive, got %d", max))
	}
	var events []Event
	err := r.status("PollEvents", func(reg uintptr) (e *Error) { events, e = cgoEventsPoll(reg, max); return e })
	return events, err
}

// EventsDropped is how many events the queue has dropped since it opened.
func (r *Registry) EventsDropped() (uint64, error) {
	var n uint64
	err := r.status("EventsDropped", func(reg uintptr) (e *Error) { n, e = cgoEventsDropped(reg); return e })
	return n, err
}

// SelectEvents chooses what the registry records: EventTransitions,
// EventRejections, both (|) or 0 for nothing.
func (r *Registry) SelectEvents(kinds EventKinds) error {
	return r.status("SelectEvents", func(reg uintptr) *Error { return cgoEventsSelect(reg, kinds) })
}
