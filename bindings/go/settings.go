package lazybreaker

// #include <lazybreaker/lazybreaker.h>
import "C"

import (
	"fmt"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// State is a breaker's state. The values are the C library's cb_state_t
// (not gobreaker's numbering), as cgo reads them from lazybreaker.h.
type State int

const (
	StateClosed     State = C.CB_STATE_CLOSED      // admitting; the trip policy is counting
	StateOpen       State = C.CB_STATE_OPEN        // rejecting until the open duration (Timeout) passes
	StateHalfOpen   State = C.CB_STATE_HALF_OPEN   // admitting at most MaxRequests probes
	StateForcedOpen State = C.CB_STATE_FORCED_OPEN // rejecting everything until Reset
	StateDisabled   State = C.CB_STATE_DISABLED    // admitting everything, tripping never, until Reset
)

// String is the library's name of the state (cb_state_name: "closed",
// "open", "half_open", "forced_open", "disabled", the Prometheus label).
func (s State) String() string {
	if p := C.cb_state_name(C.int(s)); p != nil {
		return C.GoString(p)
	}
	return fmt.Sprintf("unknown state %d", int(s))
}

// Policy is what trips a CLOSED breaker (docs/policies.md). Its zero value
// is PolicyConsecutive, which Settings cannot tell from "not set": there
// the policy follows from the options set (Settings.Policy says how).
type Policy int

const (
	// PolicyConsecutive: FailureThreshold failures in a row.
	PolicyConsecutive Policy = C.CB_POLICY_CONSECUTIVE
	// PolicyCountWindow: the failure (or slow-call) rate over the last
	// WindowSize outcomes, once MinimumCalls are in the window.
	PolicyCountWindow Policy = C.CB_POLICY_COUNT_WINDOW
	// PolicyTimeWindow: the rate over the last WindowDuration, in
	// WindowBuckets buckets, once MinimumCalls are in the window.
	PolicyTimeWindow Policy = C.CB_POLICY_TIME_WINDOW
)

func (p Policy) String() string {
	switch p {
	case PolicyConsecutive:
		return "PolicyConsecutive"
	case PolicyCountWindow:
		return "PolicyCountWindow"
	case PolicyTimeWindow:
		return "PolicyTimeWindow"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// Outcome is what an admitted call reports through Done.
type Outcome int

const (
	Success Outcome = C.CB_SUCCESS // the call succeeded
	Failure Outcome = C.CB_FAILURE // the call failed and counts against the dependency
	Ignored Outcome = C.CB_IGNORED // neither: a cancellation, a client error; counted nowhere
)

// Settings configures a breaker. A zero field keeps the library's default
// (cb_config_init), so Settings{} is the library's breaker: 5 failures in a
// row trip it, it stays open 30 s, then 1 probe. These are the C library's
// defaults, NOT gobreaker's (which trips after more than 5 and stays open
// 60 s). Every value is checked by the library when the breaker is created:
// one out of range fails NewCircuitBreaker with an *Error matching
// ErrInvalidArgument whose Option names the setting and whose Error() says
// the rule in Go's terms ("Timeout must be at least 1µs, got 1ns").
//
// There is no Interval: gobreaker clears its counts every Interval, and
// nothing here clears on a timer. For counts that forget, use
// Policy: PolicyTimeWindow with WindowDuration (a rolling window).
type Settings struct {
	// Name is the breaker's name, unique in its registry; "" is anonymous.
	// 1..255 bytes of UTF-8.
	Name string
	// MaxRequests is how many probes HALF_OPEN admits at once (default 1,
	// at most 32). Unlike gobreaker's, it is not also the number of
	// successes that closes the breaker: that is HalfOpenSuccessThreshold.
	MaxRequests uint32
	// HalfOpenSuccessThreshold is how many probe successes close the
	// breaker (default 1, at most 255); one probe failure re-opens it.
	HalfOpenSuccessThreshold uint32
	// Timeout is how long OPEN rejects before the next call probes
	// (default 30 s, at least 1 µs, at most 366 days). As gobreaker's.
	Timeout time.Duration
	// HalfOpenTimeout is the probe's lease: a probe that has not reported
	// after it counts as failed (default: Timeout).
	HalfOpenTimeout time.Duration
	// FailureThreshold is how many failures in a row trip the breaker under
	// PolicyConsecutive (default 5, at most 65535). gobreaker's default
	// ReadyToTrip trips after more than 5.
	FailureThreshold uint32

	// Policy chooses what trips the breaker. Left PolicyConsecutive (the
	// zero value), it follows from the options set: the first of
	// PolicyConsecutive, PolicyCountWindow, PolicyTimeWindow that reads
	// every one of them, as the library says (cb_policy_reads); none of
	// them, PolicyConsecutive. Setting an option the policy ignores is an
	// error naming both (FailureThreshold with PolicyCountWindow,
	// WindowSize with PolicyTimeWindow, FailureRateThreshold with
	// PolicyConsecutive, ...). docs/go.md has the rule in full.
	Policy Policy
	// WindowSize is the count window's length in outcomes (default 100).
	WindowSize uint32
	// WindowDuration is the time window's length (default 60 s, at least 1 ms).
	WindowDuration time.Duration
	// WindowBuckets is the time window's bucket count (default 10, at most 32).
	WindowBuckets uint32
	// MinimumCalls is how many outcomes the window must hold before a rate
	// may trip (default 100). Under PolicyConsecutive, WindowSize and
	// MinimumCalls are the slow-call window's, so they need SlowCallDuration.
	MinimumCalls uint32
	// FailureRateThreshold is the failure rate that trips, in (0, 1]
	// (default 0.5).
	FailureRateThreshold float64
	// SlowCallDuration: a call slower than this is slow (0, the default:
	// slow-call tracking off). Timed by the library from Acquire to Done.
	SlowCallDuration time.Duration
	// SlowCallRateThreshold is the slow-call rate that trips, in (0, 1]
	// (default 1.0).
	SlowCallRateThreshold float64
	// BackoffMultiplier multiplies the open duration at each trip after a
	// failed probe, in [1, 1000] (default 1: a fixed open duration).
	BackoffMultiplier float64
	// MaxTimeout caps the backed-off, jittered open duration (0, the
	// default: no cap below 366 days).
	MaxTimeout time.Duration
	// Jitter scales each open duration by a random factor in
	// [1-Jitter, 1+Jitter], in [0, 1) (default 0).
	Jitter float64

	// IsSuccessful says which errors of the call count as successes
	// (default: err == nil). As gobreaker v2's.
	IsSuccessful func(err error) bool
	// IsExcluded says which errors count nowhere: they are reported as
	// Ignored (default: none). As gobreaker v2's. Asked before IsSuccessful.
	IsExcluded func(err error) bool
}

// fill writes the non-zero settings into a cb_config that cb_config_init
// filled. Only a negative duration is refused here (it has no nanosecond
// count for the library to judge); every range check is the library's.
func (s *Settings) fill(cfg lbswig.Cb_config) error {
	durations := []struct {
		name string
		d    time.Duration
		set  func(uint64)
	}{
		{"Timeout", s.Timeout, cfg.SetOpen_duration_ns},
		{"HalfOpenTimeout", s.HalfOpenTimeout, cfg.SetHalf_open_timeout_ns},
		{"WindowDuration", s.WindowDuration, cfg.SetWindow_duration_ns},
		{"SlowCallDuration", s.SlowCallDuration, cfg.SetSlow_call_ns},
		{"MaxTimeout", s.MaxTimeout, cfg.SetOpen_duration_max_ns},
	}
	for _, f := range durations {
		if f.d < 0 {
			return optionError("NewCircuitBreaker", f.name, fmt.Sprintf("%s must not be negative, got %v", f.name, f.d))
		}
		if f.d != 0 {
			f.set(uint64(f.d))
		}
	}
	counts := []struct {
		v   uint32
		set func(uint)
	}{
		{s.MaxRequests, cfg.SetHalf_open_max_calls},
		{s.HalfOpenSuccessThreshold, cfg.SetHalf_open_success_threshold},
		{s.FailureThreshold, cfg.SetFailure_threshold},
		{s.WindowSize, cfg.SetWindow_size},
		{s.WindowBuckets, cfg.SetWindow_buckets},
		{s.MinimumCalls, cfg.SetMinimum_calls},
	}
	for _, f := range counts {
		if f.v != 0 {
			f.set(uint(f.v))
		}
	}
	rates := []struct {
		v   float64
		set func(float64)
	}{
		{s.FailureRateThreshold, cfg.SetFailure_rate_threshold},
		{s.SlowCallRateThreshold, cfg.SetSlow_call_rate_threshold},
		{s.BackoffMultiplier, cfg.SetOpen_backoff_multiplier},
		{s.Jitter, cfg.SetOpen_jitter},
	}
	for _, f := range rates {
		if f.v != 0 {
			f.set(f.v)
		}
	}
	if s.Policy != PolicyConsecutive {
		cfg.SetPolicy(int(s.Policy))
	}
	return nil
}

// newConfig is a cb_config that cb_config_init filled (SWIG's, so that
// fill and the conformance runner set it by name), by its address.
func newConfig() (uintptr, func()) {
	cfg := lbswig.NewCb_config()
	return cfg.Swigcptr(), func() { lbswig.DeleteCb_config(cfg) }
}

// settingsOf is a configuration read back as Settings: every option the
// policy reads, and Policy itself (PolicyConsecutive reads as the zero
// value, with FailureThreshold set, so resolve keeps it).
func settingsOf(cfg lbswig.Cb_config) Settings {
	s := Settings{
		Policy:                   Policy(cfg.GetPolicy()),
		MaxRequests:              uint32(cfg.GetHalf_open_max_calls()),
		HalfOpenSuccessThreshold: uint32(cfg.GetHalf_open_success_threshold()),
		Timeout:                  wait(cfg.GetOpen_duration_ns()),
		HalfOpenTimeout:          wait(cfg.GetHalf_open_timeout_ns()),
		FailureThreshold:         uint32(cfg.GetFailure_threshold()),
		WindowSize:               uint32(cfg.GetWindow_size()),
		WindowDuration:           wait(cfg.GetWindow_duration_ns()),
		WindowBuckets:            uint32(cfg.GetWindow_buckets()),
		MinimumCalls:             uint32(cfg.GetMinimum_calls()),
		FailureRateThreshold:     cfg.GetFailure_rate_threshold(),
		SlowCallDuration:         wait(cfg.GetSlow_call_ns()),
		SlowCallRateThreshold:    cfg.GetSlow_call_rate_threshold(),
		BackoffMultiplier:        cfg.GetOpen_backoff_multiplier(),
		MaxTimeout:               wait(cfg.GetOpen_duration_max_ns()),
		Jitter:                   cfg.GetOpen_jitter(),
	}
	s.clearIgnored()
	return s
}

// Counts are a breaker's counters since it was created, counted in every
// state (gobreaker's are cleared at each state change and Interval; these
// never are).
type Counts struct {
	Requests            uint64        // calls admitted
	Rejections          uint64        // calls rejected
	TotalSuccesses      uint64        // Success outcomes reported
	TotalFailures       uint64        // Failure outcomes reported
	TotalExclusions     uint64        // Ignored outcomes reported
	Trips               uint64        // transitions into OPEN (not FORCED_OPEN)
	ConsecutiveFailures uint32        // the current failure run (CLOSED)
	Slow                uint64        // outcomes slower than SlowCallDuration
	FailureRate         float64       // failures / calls in the window now (rate policies)
	SlowRate            float64       // slow calls / calls in the window now
	InState             time.Duration // time in the current state, on the registry's clock
}
