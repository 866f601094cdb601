package lazybreaker

// The Go runner of the conformance scenarios: it interprets the step
// streams that lb_conformance writes at build time from
// tests/conformance/*.scn (tests/conformance/README.md, "Step streams"),
// every step through this package's API (Acquire, Done, State, RetryAfter,
// Counts, ForceOpen, Disable, Reset, Trip, Advance), each scenario on a
// fresh manual-clock registry.
//
//	LB_CONFORMANCE_STEPS=$PWD/../../build/tests/conformance/steps go test -run Conformance
//
// CTest sets LB_CONFORMANCE_STEPS; without it (a user's `go test` in the
// module cache, where the streams are not) the runner skips.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// scnFields: each cb_config field as the Settings field a Go user sets.
func scnFields(s *Settings) map[string]any {
	return map[string]any{
		"failure_threshold": &s.FailureThreshold, "open_duration_ns": &s.Timeout,
		"half_open_max_calls": &s.MaxRequests, "half_open_success_threshold": &s.HalfOpenSuccessThreshold,
		"half_open_timeout_ns": &s.HalfOpenTimeout, "policy": &s.Policy, "window_size": &s.WindowSize,
		"window_duration_ns": &s.WindowDuration, "window_buckets": &s.WindowBuckets,
		"minimum_calls": &s.MinimumCalls, "failure_rate_threshold": &s.FailureRateThreshold,
		"slow_call_ns": &s.SlowCallDuration, "slow_call_rate_threshold": &s.SlowCallRateThreshold,
		"open_backoff_multiplier": &s.BackoffMultiplier, "open_duration_max_ns": &s.MaxTimeout,
		"open_jitter": &s.Jitter,
	}
}

var scnPolicies = map[string]Policy{"consecutive": PolicyConsecutive, "count_window": PolicyCountWindow, "time_window": PolicyTimeWindow}
var scnOutcomes = map[string]Outcome{"success": Success, "failure": Failure, "ignored": Ignored}

// scnRaw sets the cb_config field key to 0, which Settings cannot say (it
// reads a zero as "the default"), so that the library judges exactly what
// the scenario says.
func scnRaw(c lbswig.Cb_config, key string) {
	m := reflect.ValueOf(c).MethodByName("Set" + strings.ToUpper(key[:1]) + key[1:])
	m.Call([]reflect.Value{reflect.Zero(m.Type().In(0))})
}

// scnRun is one scenario as it runs.
type scnRun struct {
	reg      *Registry
	settings Settings
	zeros    []string // the fields set to 0
	cb       *CircuitBreaker
	tickets  map[string]Ticket
	mismatch string
}

// step runs one step; a step that checks something returns what the
// breaker shows, in the stream's words.
func (r *scnRun) step(t []string) (got string, err error) {
	switch t[0] {
	case "scenario":
		r.settings.Name = t[2]
		r.reg, err = OpenRegistry(RegistryOptions{Capacity: 1, ManualClock: true})
	case "config":
		if t[4] == "set" && t[2] == "policy" {
			r.settings.Policy = scnPolicies[t[3]]
		} else if t[4] == "set" && t[3] == "0" {
			r.zeros = append(r.zeros, t[2])
		} else if t[4] == "set" {
			_, err = fmt.Sscan(t[3], scnFields(&r.settings)[t[2]])
		}
	case "create":
		r.cb, err = r.reg.newCircuitBreaker(&r.settings, func(c lbswig.Cb_config) {
			for _, key := range r.zeros {
				scnRaw(c, key)
			}
		})
	case "allow":
		ticket, err := r.cb.Acquire()
		if errors.Is(err, ErrOpenState) || errors.Is(err, ErrTooManyRequests) {
			return "rejected", nil
		}
		r.tickets[t[len(t)-1]] = ticket
		return "ok", err
	case "done":
		err = r.cb.Done(r.tickets[t[2]], scnOutcomes[t[3]])
	case "advance": // in steps that time.Duration can hold
		ns, err := strconv.ParseUint(t[2], 10, 64)
		for ; err == nil && ns > math.MaxInt64; ns -= math.MaxInt64 {
			err = r.reg.Advance(time.Duration(math.MaxInt64))
		}
		if err == nil {
			err = r.reg.Advance(time.Duration(ns))
		}
		return "", err
	case "state":
		s, err := r.cb.State()
		return strings.ReplaceAll(s.String(), "-", "_"), err
	case "retry_after":
		d, err := r.cb.RetryAfter()
		if d == Forever {
			return strconv.FormatUint(math.MaxUint64, 10), err
		}
		return strconv.FormatUint(uint64(d), 10), err
	case "force_open", "disable", "reset":
		err = map[string]func() error{"force_open": r.cb.ForceOpen, "disable": r.cb.Disable, "reset": r.cb.Reset}[t[0]]()
	case "trip":
		var d time.Duration
		if _, err = fmt.Sscan(t[2], &d); err == nil {
			err = r.cb.Trip(d)
		}
	case "count", "rate":
		c, err := r.cb.Counts()
		if t[0] == "count" {
			return strconv.FormatUint(map[string]uint64{
				"admitted": c.Requests, "rejected": c.Rejections, "successes": c.TotalSuccesses,
				"failures": c.TotalFailures, "ignored": c.TotalExclusions, "trips": c.Trips,
				"consecutive_failures": uint64(c.ConsecutiveFailures), "slow": c.Slow, "state_ns": uint64(c.InState),
			}[t[2]], 10), err
		}
		rate := map[string]float64{"failure_rate": c.FailureRate, "slow_rate": c.SlowRate}[t[2]]
		if want, _ := strconv.ParseFloat(t[3], 64); err == nil && !(math.Abs(rate-want) <= 1e-9) {
			err = fmt.Errorf("expected %s, got %.17g", t[3], rate)
		}
		return "", err
	default:
		err = fmt.Errorf("not a step: %q", t)
	}
	return "", err
}

// scnStream interprets one stream; it returns a mismatch per failing
// scenario ("file:line: mismatch: ..."), the rest of that scenario skipped.
func scnStream(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if err != nil || !strings.HasPrefix(lines[0], "lbsteps 1 ") {
		return nil, fmt.Errorf("%s: not a step stream of version 1 (%v)", path, err)
	}
	source := strings.TrimPrefix(lines[0], "lbsteps 1 ")
	var mismatches []string
	var r *scnRun
	for _, line := range lines[1:] {
		t := strings.Split(line, " ")
		if t[0] == "scenario" {
			r = &scnRun{tickets: map[string]Ticket{}}
		}
		if t[0] == "end" {
			if r.reg != nil {
				r.reg.Close() // every ticket left is silent now
			}
			if r.mismatch != "" {
				mismatches = append(mismatches, r.mismatch)
			}
			continue
		}
		if r.mismatch != "" {
			continue
		}
		// The value a checking step expects is its last token (allow: its 3rd).
		what, want := t[0], t[len(t)-1]
		if t[0] == "allow" {
			want = t[2]
		} else if t[0] == "count" {
			what = t[2]
		}
		if got, err := r.step(t); err == nil && got != "" && got != want {
			r.mismatch = fmt.Sprintf("%s:%s: mismatch: %s: expected %s, got %s", source, t[1], what, want, got)
		} else if err != nil {
			r.mismatch = fmt.Sprintf("%s:%s: mismatch: %s: %v", source, t[1], t[0], err)
		}
	}
	return mismatches, nil
}

// Every stream: each scenario file on a clock that starts at 0 and at the
// clock offset (NAME.late_clock); and the runner finds the mismatch in each
// mismatch self-test, so it skips nothing (README.md, "Runner self-tests").
func TestConformance(t *testing.T) {
	dir := os.Getenv("LB_CONFORMANCE_STEPS")
	if dir == "" {
		t.Skip("LB_CONFORMANCE_STEPS is not set (CTest sets it to build/tests/conformance/steps)")
	}
	for _, c := range []struct {
		pattern  string
		mismatch bool
	}{{"*.steps", false}, {filepath.Join("selftest", "mismatch", "*.steps"), true}} {
		files, err := filepath.Glob(filepath.Join(dir, c.pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("no step stream %s in %s (%v)", c.pattern, dir, err)
		}
		for _, file := range files {
			file, want := file, c.mismatch
			name, _ := filepath.Rel(dir, file)
			t.Run(strings.TrimSuffix(name, ".steps"), func(t *testing.T) {
				mismatches, err := scnStream(file)
				if err != nil || (len(mismatches) > 0) != want {
					t.Errorf("expected a mismatch: %v, got %v\n%s", want, err, strings.Join(mismatches, "\n"))
				}
				t.Log(strings.Join(mismatches, "\n"))
			})
		}
	}
}
