package lazybreaker

import (
	"fmt"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// Reason is why an event happened.
type Reason int

const (
	ReasonConsecutiveFailures Reason = 1  // CLOSED -> OPEN by the failure run
	ReasonFailureRate         Reason = 2  // CLOSED -> OPEN by the window's failure rate
	ReasonSlowCallRate        Reason = 3  // CLOSED -> OPEN by the window's slow-call rate
	ReasonOpenElapsed         Reason = 4  // OPEN -> HALF_OPEN: a call after the open duration
	ReasonProbeFailed         Reason = 5  // HALF_OPEN -> OPEN: a probe failed
	ReasonProbeLeaseExpired   Reason = 6  // HALF_OPEN -> OPEN: a probe stayed silent
	ReasonProbesSucceeded     Reason = 7  // HALF_OPEN -> CLOSED
	ReasonManual              Reason = 8  // ForceOpen, Disable, Reset
	ReasonTripped             Reason = 9  // Trip
	ReasonRejected            Reason = 10 // not a transition: a rejected call (EventRejections)
)

var reasonNames = map[Reason]string{
	ReasonConsecutiveFailures: "consecutive failures", ReasonFailureRate: "failure rate",
	ReasonSlowCallRate: "slow-call rate", ReasonOpenElapsed: "open duration elapsed",
	ReasonProbeFailed: "probe failed", ReasonProbeLeaseExpired: "probe lease expired",
	ReasonProbesSucceeded: "probes succeeded", ReasonManual: "manual", ReasonTripped: "tripped",
	ReasonRejected: "rejected",
}

func (r Reason) String() string {
	if name, ok := reasonNames[r]; ok {
		return name
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
	EventTransitions EventKinds = 1 // state transitions (the default)
	EventRejections  EventKinds = 2 // every rejected call
)

// PollEvents takes up to max events, oldest first; the events of one
// breaker come in the order its transitions happened. Nothing runs on an
// event: the application drains the queue when it likes (no OnStateChange
// callback that could deadlock, as gobreaker's can). A full queue drops its
// oldest events (EventsDropped counts them).
func (r *Registry) PollEvents(max int) (events []Event, err error) {
	if max <= 0 {
		return nil, newError("PollEvents", statusEInval, fmt.Sprintf("max must be positive, got %d", max))
	}
	err = r.status("PollEvents", func(reg lbswig.Struct_SS_cb_registry) int {
		batch := lbswig.NewLb_event_batch(int64(max))
		defer lbswig.DeleteLb_event_batch(batch)
		n := batch.Poll(reg)
		events = make([]Event, 0, n)
		for i := 0; i < n; i++ {
			e := batch.Get(int64(i))
			events = append(events, Event{
				Sequence: e.GetSequence(), Breaker: e.GetName(),
				From: State(e.GetFrom()), To: State(e.GetTo()), Reason: Reason(e.GetReason()),
				At: wait(e.GetAt_ns()),
			})
		}
		return 0
	})
	return events, err
}

// EventsDropped is how many events the queue has dropped since it opened.
func (r *Registry) EventsDropped() (n uint64, err error) {
	err = r.status("EventsDropped", func(reg lbswig.Struct_SS_cb_registry) int { n = lbswig.Cb_events_dropped(reg); return 0 })
	return n, err
}

// SelectEvents chooses what the registry records: EventTransitions,
// EventRejections, both (|) or 0 for nothing.
func (r *Registry) SelectEvents(kinds EventKinds) error {
	return r.status("SelectEvents", func(reg lbswig.Struct_SS_cb_registry) int { return lbswig.Cb_events_select(reg, uint(kinds)) })
}
