package lazybreaker

// #include <lazybreaker/lazybreaker.h>
import "C"

import (
	"fmt"
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
	// rejections: the *RejectedError of each rejecting state (OPEN,
	// HALF_OPEN, FORCED_OPEN), made at the first rejection in it; nil until
	// the breaker first rejects, so a breaker that never does costs a word.
	rejections atomic.Pointer[[rejectingStates]*RejectedError]
}

// rejectingStates bounds the states a rejection can report (cb_state_t's
// values are 0..4).
const rejectingStates = 5

// newCircuitBreaker makes a breaker's first value and its core; s gives
// its Go settings (nil: the defaults). An owner (an anonymous breaker's
// value) destroys the breaker when collected. Other values are made with
// their core in one allocation; an owner's cannot be, since an object
// that points into itself is never finalized.
func newCircuitBreaker(reg *Registry, h uint64, name string, s *Settings, shared, owner bool) *CircuitBreaker {
	var cb *CircuitBreaker
	var core *breakerCore
	if owner {
		cb, core = new(CircuitBreaker), new(breakerCore)
	} else {
		both := new(struct {
			cb   CircuitBreaker
			core breakerCore
		})
		cb, core = &both.cb, &both.core
	}
	core.h, core.name, core.shared = h, name, shared
	if s != nil {
		core.isSuccessful, core.isExcluded = s.IsSuccessful, s.IsExcluded
	}
	cb.h, cb.core, cb.reg = h, core, reg
	if owner {
		runtime.SetFinalizer(cb, (*CircuitBreaker).finalize)
	}
	return cb
}

// newView is another value of a breaker whose core exists.
func newView(reg *Registry, core *breakerCore) *CircuitBreaker {
	return &CircuitBreaker{h: core.h, core: core, reg: reg}
}

// finalize destroys an anonymous breaker dropped without Close.
func (cb *CircuitBreaker) finalize() {
	if cb.core.closed.CompareAndSwap(false, true) {
		_ = cgoDestroy("finalizer", cb.h)
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
	err := cgoDestroy("Close", cb.h)
	runtime.KeepAlive(cb)
	return orNil(err)
}

// Name is the breaker's name ("" if anonymous).
func (cb *CircuitBreaker) Name() string { return cb.core.name }

// Registry is the registry the breaker lives in.
func (cb *CircuitBreaker) Registry() *Registry { return cb.reg }

// State reports the state without ever moving it: an OPEN breaker whose
// open duration has passed is OPEN until a call arrives (RetryAfter is 0).
func (cb *CircuitBreaker) State() (State, error) {
	s, err := cgoState(cb.h)
	runtime.KeepAlive(cb)
	return s, orNil(err)
}

// RetryAfter is how long until a call could be admitted, on the registry's
// clock: 0 when one would be now (CLOSED, DISABLED, HALF_OPEN with a free
// probe slot, OPEN past its duration), the rest of the open duration in
// OPEN, Forever in FORCED_OPEN. It never moves the state machine.
func (cb *CircuitBreaker) RetryAfter() (time.Duration, error) {
	ns, err := cgoRetryAfter(cb.h)
	runtime.KeepAlive(cb)
	return wait(ns), orNil(err)
}

// Counts reads the breaker's counters (exact once calls have returned).
// Unlike gobreaker's Counts there is no ConsecutiveSuccesses: the library
// counts the failure run only.
func (cb *CircuitBreaker) Counts() (Counts, error) {
	c, err := cgoCounts(cb.h)
	runtime.KeepAlive(cb)
	return c, orNil(err)
}

// Config reads the breaker's configuration back from the library
// (cb_config_get), as Settings: Policy and every option it reads, the
// others 0 (so that GetOrCreate with them, IsSuccessful and IsExcluded
// added, finds this breaker). HalfOpenTimeout reads as Timeout when it was
// left 0. IsSuccessful and IsExcluded are this value's.
func (cb *CircuitBreaker) Config() (Settings, error) {
	cfg := lbswig.NewCb_config()
	if cfg.Swigcptr() == 0 {
		return Settings{}, newError("Config", statusENoMem, "no memory for a cb_config")
	}
	defer lbswig.DeleteCb_config(cfg)
	err := cgoConfigGet(cb.h, cfg.Swigcptr())
	runtime.KeepAlive(cb)
	if err != nil {
		return Settings{}, err
	}
	s := settingsOf(cfg)
	s.Name, s.IsSuccessful, s.IsExcluded = cb.core.name, cb.core.isSuccessful, cb.core.isExcluded
	return s, nil
}

// ForceOpen: FORCED_OPEN, rejecting everything until Reset.
func (cb *CircuitBreaker) ForceOpen() error {
	err := cgoForceOpen(cb.h)
	runtime.KeepAlive(cb)
	return orNil(err)
}

// Disable: DISABLED, admitting everything; outcomes feed Counts only, never
// the trip policy; until Reset.
func (cb *CircuitBreaker) Disable() error {
	err := cgoDisable(cb.h)
	runtime.KeepAlive(cb)
	return orNil(err)
}

// Reset: CLOSED with a fresh failure run, from any state.
func (cb *CircuitBreaker) Reset() error {
	err := cgoReset(cb.h)
	runtime.KeepAlive(cb)
	return orNil(err)
}

// Trip opens the breaker now for exactly d (e.g. a "429, Retry-After: 20"
// answer), then it probes as usual. From any state; counts as a trip.
// d must be 1 µs..366 days.
func (cb *CircuitBreaker) Trip(d time.Duration) error {
	const op = "Trip"
	if d < 0 {
		return optionError(op, "Trip's duration", "the open duration must not be negative, got "+d.String())
	}
	err := cgoTrip(cb.h, uint64(d))
	runtime.KeepAlive(cb)
	if err != nil && err.field == "open_for_ns" {
		err.Option = optionNames[err.field]
		err.text = fmt.Sprintf("the open duration must be from %v to %v, got %v", minOpenDuration, maxOpenDuration, d)
	}
	return orNil(err)
}

// The open durations Trip accepts.
const (
	minOpenDuration = time.Duration(C.CB_MIN_OPEN_DURATION_NS)
	maxOpenDuration = time.Duration(C.CB_MAX_DURATION_NS)
)

// capOpenDuration brings d into the range Trip accepts.
func capOpenDuration(d time.Duration) time.Duration {
	if d < minOpenDuration {
		return minOpenDuration
	}
	if d > maxOpenDuration {
		return maxOpenDuration
	}
	return d
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
