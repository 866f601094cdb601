package lazybreaker

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// CircuitBreaker is one breaker of a registry, reached through its C
// handle. Every method may be called from any number of goroutines. The
// state machine is the C library's: this type only asks it and reports to it.
//
// A breaker lives until Close (or until its registry closes). A named
// breaker is held by its registry, so dropping the value loses nothing:
// Lookup gives it back, with its settings. An anonymous breaker is owned by
// the value NewCircuitBreaker returned: if that value is dropped without
// Close, a finalizer destroys the breaker when the garbage collector finds
// it (a safety net, not a schedule: call Close).
type CircuitBreaker struct {
	h    uint64 // the C handle, copied here for the fast path
	core *breakerCore
	reg  *Registry // keeps the registry open while the value is reachable
}

// breakerCore is what every value for one breaker shares.
type breakerCore struct {
	h            uint64
	name         string
	isSuccessful func(error) bool
	isExcluded   func(error) bool
	closed       atomic.Bool
	shared       bool // from GetOrCreate: Close lets go, never destroys
}

func newCircuitBreaker(reg *Registry, core *breakerCore, owner bool) *CircuitBreaker {
	cb := &CircuitBreaker{h: core.h, core: core, reg: reg}
	if owner {
		runtime.SetFinalizer(cb, (*CircuitBreaker).finalize)
	}
	return cb
}

// finalize destroys an anonymous breaker dropped without Close.
func (cb *CircuitBreaker) finalize() {
	if cb.core.closed.CompareAndSwap(false, true) {
		_ = swigStatus("finalizer", func() int { return lbswig.Cb_destroy(cb.h) })
	}
}

// Close destroys the breaker: its name becomes free, and every call on it
// afterwards (through any value, in any language) fails with ErrClosed.
// Goroutines still calling it get ErrClosed; none of them crashes. A second
// Close returns ErrClosed. On a breaker from GetOrCreate, Close destroys
// nothing: it marks the value closed (a second Close is ErrClosed) and the
// breaker lives on for every process using it.
func (cb *CircuitBreaker) Close() error {
	if !cb.core.closed.CompareAndSwap(false, true) {
		return newError("Close", statusEHandle, "the breaker is closed")
	}
	runtime.SetFinalizer(cb, nil)
	if cb.core.shared {
		return nil
	}
	cb.reg.forget(cb.h)
	err := swigStatus("Close", func() int { return lbswig.Cb_destroy(cb.h) })
	runtime.KeepAlive(cb)
	return err
}

// Name is the breaker's name ("" if anonymous).
func (cb *CircuitBreaker) Name() string { return cb.core.name }

// Registry is the registry the breaker lives in.
func (cb *CircuitBreaker) Registry() *Registry { return cb.reg }

// State reports the state without ever moving it: an OPEN breaker whose
// open duration has passed is OPEN until a call arrives (RetryAfter is 0).
func (cb *CircuitBreaker) State() (s State, err error) {
	defer recoverStatus("State", &err)
	s = State(lbswig.Cb_state(cb.h))
	runtime.KeepAlive(cb)
	return s, nil
}

// RetryAfter is how long until a call could be admitted, on the registry's
// clock: 0 when one would be now (CLOSED, DISABLED, HALF_OPEN with a free
// probe slot, OPEN past its duration), the rest of the open duration in
// OPEN, Forever in FORCED_OPEN. It never moves the state machine.
func (cb *CircuitBreaker) RetryAfter() (d time.Duration, err error) {
	defer recoverStatus("RetryAfter", &err)
	d = wait(lbswig.Cb_retry_after(cb.h))
	runtime.KeepAlive(cb)
	return d, nil
}

// Counts reads the breaker's counters (exact once calls have returned).
func (cb *CircuitBreaker) Counts() (c Counts, err error) {
	defer recoverStatus("Counts", &err)
	stats := lbswig.NewCb_stats()
	defer lbswig.DeleteCb_stats(stats)
	lbswig.Cb_stats_get(cb.h, stats)
	runtime.KeepAlive(cb)
	return Counts{
		Requests:            stats.GetAdmitted(),
		Rejections:          stats.GetRejected(),
		TotalSuccesses:      stats.GetSuccesses(),
		TotalFailures:       stats.GetFailures(),
		TotalExclusions:     stats.GetIgnored(),
		Trips:               stats.GetTrips(),
		ConsecutiveFailures: uint32(stats.GetConsecutive_failures()),
		Slow:                stats.GetSlow(),
		FailureRate:         stats.GetFailure_rate(),
		SlowRate:            stats.GetSlow_rate(),
		InState:             wait(stats.GetState_ns()),
	}, nil
}

// ForceOpen: FORCED_OPEN, rejecting everything until Reset.
func (cb *CircuitBreaker) ForceOpen() error {
	return cb.status("ForceOpen", lbswig.Cb_force_open)
}

// Disable: DISABLED, admitting everything; outcomes feed Counts only, never
// the trip policy; until Reset.
func (cb *CircuitBreaker) Disable() error {
	return cb.status("Disable", lbswig.Cb_disable)
}

// Reset: CLOSED with a fresh failure run, from any state.
func (cb *CircuitBreaker) Reset() error {
	return cb.status("Reset", lbswig.Cb_reset)
}

// Trip opens the breaker now for exactly d (e.g. a "429, Retry-After: 20"
// answer), then it probes as usual. From any state; counts as a trip.
// d must be 1 µs..366 days.
func (cb *CircuitBreaker) Trip(d time.Duration) error {
	if d < 0 {
		return newError("Trip", statusEInval, "the open duration must not be negative, got "+d.String())
	}
	return cb.status("Trip", func(h uint64) int { return lbswig.Cb_trip(h, uint64(d)) })
}

func (cb *CircuitBreaker) status(op string, f func(uint64) int) error {
	err := swigStatus(op, func() int { return f(cb.h) })
	runtime.KeepAlive(cb)
	return err
}

// outcome classifies a call's error by the settings.
func (c *breakerCore) outcome(err error) Outcome {
	if c.isExcluded != nil && c.isExcluded(err) {
		return Ignored
	}
	if c.isSuccessful != nil {
		if c.isSuccessful(err) {
			return Success
		}
		return Failure
	}
	if err == nil {
		return Success
	}
	return Failure
}

// swigStatus runs a SWIG call that returns a status, turning its panic on
// a negative status into an *Error.
func swigStatus(op string, f func() int) (err error) {
	defer recoverStatus(op, &err)
	f()
	return nil
}
