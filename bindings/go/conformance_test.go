package lazybreaker

// The Go runner of the conformance scenarios (tests/conformance/README.md):
// the same *.scn files the C++ runner reads, every step through this
// package's API (Acquire, Done, State, RetryAfter, Counts, ForceOpen,
// Disable, Reset, Trip, Advance). Each file runs twice: on clocks that
// start at 0, and at the clock offset (README.md, "Clock offset": 10^18
// ns, or LB_CONFORMANCE_CLOCK_OFFSET).
//
//	LB_CONFORMANCE_DIR=tests/conformance go test -run Conformance
//
// CTest sets LB_CONFORMANCE_DIR; without it (a user's `go test` in the
// module cache, where the scenarios are not) the runner skips.

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// The README's clock offset: every file runs a second time on clocks that
// start there.
const scnClockOffset = uint64(1_000_000_000_000_000_000)

// clockOffset is scnClockOffset, or LB_CONFORMANCE_CLOCK_OFFSET when set.
func clockOffset(t *testing.T) uint64 {
	env := os.Getenv("LB_CONFORMANCE_CLOCK_OFFSET")
	if env == "" {
		return scnClockOffset
	}
	offset, ok := parseU64(env)
	if !ok || offset == 0 {
		t.Fatalf("LB_CONFORMANCE_CLOCK_OFFSET=%q: not a positive number of nanoseconds", env)
	}
	return offset
}

type scnKind int

const (
	kindU32 scnKind = iota
	kindU64
	kindDecimal
	kindPolicy
)

var (
	scnStates   = map[string]State{"closed": StateClosed, "open": StateOpen, "half_open": StateHalfOpen, "forced_open": StateForcedOpen, "disabled": StateDisabled}
	scnOutcomes = map[string]Outcome{"success": Success, "failure": Failure, "ignored": Ignored}
	scnPolicies = map[string]Policy{"consecutive": PolicyConsecutive, "count_window": PolicyCountWindow, "time_window": PolicyTimeWindow}
	scnConfig   = map[string]scnKind{
		"failure_threshold": kindU32, "open_duration_ns": kindU64, "half_open_max_calls": kindU32,
		"half_open_success_threshold": kindU32, "half_open_timeout_ns": kindU64, "policy": kindPolicy,
		"window_size": kindU32, "window_duration_ns": kindU64, "window_buckets": kindU32, "minimum_calls": kindU32,
		"failure_rate_threshold": kindDecimal, "slow_call_ns": kindU64, "slow_call_rate_threshold": kindDecimal,
		"open_backoff_multiplier": kindDecimal, "open_duration_max_ns": kindU64, "open_jitter": kindDecimal,
	}
	scnStats = map[string]scnKind{
		"admitted": kindU64, "rejected": kindU64, "successes": kindU64, "failures": kindU64, "ignored": kindU64,
		"trips": kindU64, "consecutive_failures": kindU64, "slow": kindU64, "state_ns": kindU64,
		"failure_rate": kindDecimal, "slow_rate": kindDecimal,
	}
	scnIdent   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	scnNumber  = regexp.MustCompile(`^[0-9]+$`)
	scnDecimal = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

const scnRateTolerance = 1e-9

type scnField struct {
	key  string
	kind scnKind
	u    uint64
	d    float64
}

type scnStep struct {
	line   int
	op     string // config, allow_ok, allow_rejected, done, advance, state, retry_after, force_open, disable, reset, trip, stats
	name   string // ticket
	value  uint64 // ns, state, outcome
	fields []scnField
}

type scnScenario struct {
	name  string
	line  int
	steps []scnStep
}

func parseU64(s string) (uint64, bool) {
	if !scnNumber.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

func parseDecimal(s string) (float64, bool) {
	if !scnDecimal.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsInf(v, 0)
}

// parseScenarios parses a whole file; every malformed line is an error
// naming file:line.
func parseScenarios(path string) ([]scnScenario, []string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: cannot open: %v", path, err)}
	}
	defer f.Close()
	var out []scnScenario
	var bad []string
	names := map[string]bool{}
	var tickets map[string]bool
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		raw := sc.Text()
		if hash := strings.IndexByte(raw, '#'); hash >= 0 {
			raw = raw[:hash]
		}
		t := strings.Fields(raw)
		if len(t) == 0 {
			continue
		}
		why := func() string {
			arity := func(want int) string {
				if len(t) == want {
					return ""
				}
				return fmt.Sprintf("'%s' takes %d argument(s), got %d", t[0], want-1, len(t)-1)
			}
			if t[0] == "scenario" {
				if w := arity(2); w != "" {
					return w
				}
				if !scnIdent.MatchString(t[1]) {
					return "a scenario name is [A-Za-z_][A-Za-z0-9_]*"
				}
				if names[t[1]] {
					return "scenario '" + t[1] + "' is already defined in this file"
				}
				names[t[1]] = true
				out = append(out, scnScenario{name: t[1], line: line})
				tickets = map[string]bool{}
				return ""
			}
			if len(out) == 0 {
				return "a step before the first 'scenario' line"
			}
			s := &out[len(out)-1]
			st := scnStep{line: line}
			switch t[0] {
			case "config":
				if len(s.steps) != 0 {
					return "'config' must come first in a scenario, once"
				}
				if len(t) < 2 {
					return "'config' needs at least one key=value"
				}
				fields, w := parseFields(t, scnConfig)
				if w != "" {
					return w
				}
				st.op, st.fields = "config", fields
			case "allow":
				if len(t) < 3 || t[1] != "->" {
					return "expected 'allow -> ok TICKET' or 'allow -> rejected'"
				}
				switch t[2] {
				case "rejected":
					if w := arity(3); w != "" {
						return w
					}
					st.op = "allow_rejected"
				case "ok":
					if w := arity(4); w != "" {
						return w
					}
					if !scnIdent.MatchString(t[3]) {
						return "a ticket name is [A-Za-z_][A-Za-z0-9_]*"
					}
					if tickets[t[3]] {
						return "ticket '" + t[3] + "' is already bound in this scenario"
					}
					tickets[t[3]] = true
					st.op, st.name = "allow_ok", t[3]
				default:
					return "allow expects 'ok' or 'rejected', got '" + t[2] + "'"
				}
			case "done":
				if w := arity(3); w != "" {
					return w
				}
				if !tickets[t[1]] {
					return "ticket '" + t[1] + "' is not bound by an earlier 'allow -> ok'"
				}
				o, ok := scnOutcomes[t[2]]
				if !ok {
					return "outcome must be success, failure or ignored, got '" + t[2] + "'"
				}
				st.op, st.name, st.value = "done", t[1], uint64(o)
			case "advance", "trip":
				if w := arity(2); w != "" {
					return w
				}
				v, ok := parseU64(t[1])
				if !ok {
					return t[0] + " takes nanoseconds as a plain decimal, got '" + t[1] + "'"
				}
				st.op, st.value = t[0], v
			case "state":
				if w := arity(2); w != "" {
					return w
				}
				v, ok := scnStates[t[1]]
				if !ok {
					return "unknown state '" + t[1] + "'"
				}
				st.op, st.value = "state", uint64(v)
			case "retry_after":
				if w := arity(2); w != "" {
					return w
				}
				v, ok := uint64(math.MaxUint64), t[1] == "max"
				if !ok {
					v, ok = parseU64(t[1])
				}
				if !ok {
					return "retry_after takes nanoseconds or 'max', got '" + t[1] + "'"
				}
				st.op, st.value = "retry_after", v
			case "force_open", "disable", "reset":
				if w := arity(1); w != "" {
					return w
				}
				st.op = t[0]
			case "stats":
				if len(t) < 2 {
					return "'stats' needs at least one key=value"
				}
				fields, w := parseFields(t, scnStats)
				if w != "" {
					return w
				}
				st.op, st.fields = "stats", fields
			default:
				return "unknown step '" + t[0] + "'"
			}
			s.steps = append(s.steps, st)
			return ""
		}()
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s:%d: malformed: %s", path, line, why))
		}
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, fmt.Sprintf("%s: cannot read: %v", path, err))
	}
	if len(out) == 0 {
		bad = append(bad, path+": malformed: no scenario in the file")
	}
	for _, s := range out {
		if len(s.steps) == 0 || (len(s.steps) == 1 && s.steps[0].op == "config") {
			bad = append(bad, fmt.Sprintf("%s:%d: malformed: scenario '%s' has no steps", path, s.line, s.name))
		}
	}
	return out, bad
}

func parseFields(t []string, keys map[string]scnKind) ([]scnField, string) {
	seen := map[string]bool{}
	var fields []scnField
	for _, tok := range t[1:] {
		eq := strings.IndexByte(tok, '=')
		if eq < 0 {
			return nil, "expected key=value, got '" + tok + "'"
		}
		key, val := tok[:eq], tok[eq+1:]
		kind, ok := keys[key]
		if !ok {
			return nil, "unknown key '" + key + "'"
		}
		if seen[key] {
			return nil, "key '" + key + "' given twice"
		}
		seen[key] = true
		f := scnField{key: key, kind: kind}
		switch kind {
		case kindU32, kindU64:
			if f.u, ok = parseU64(val); !ok {
				return nil, "value of '" + key + "' must be a plain integer, got '" + val + "'"
			}
		case kindDecimal:
			if f.d, ok = parseDecimal(val); !ok {
				return nil, "value of '" + key + "' must be digits or digits.digits, got '" + val + "'"
			}
		case kindPolicy:
			p, ok := scnPolicies[val]
			if !ok {
				return nil, "policy must be consecutive, count_window or time_window, got '" + val + "'"
			}
			f.u = uint64(p)
		}
		fields = append(fields, f)
	}
	return fields, ""
}

// scnSettings maps the config keys to Settings, the fields a user sets. A
// value Settings cannot say (an explicit 0, which Settings reads as "the
// default", or a duration over time.Duration's range) goes into the
// cb_config directly, so the library judges exactly what the file says.
func scnSettings(name string, fields []scnField) (Settings, func(lbswig.Cb_config), error) {
	s := Settings{Name: name}
	var raw []func(lbswig.Cb_config)
	for _, f := range fields {
		f := f
		if f.kind == kindU32 && f.u > math.MaxUint32 {
			return s, nil, fmt.Errorf("%s=%d: out of range", f.key, f.u)
		}
		u32, dur := uint32(f.u), time.Duration(f.u)
		fitsDuration := f.u <= math.MaxInt64
		set := map[string]func(){
			"failure_threshold":           func() { s.FailureThreshold = u32 },
			"half_open_max_calls":         func() { s.MaxRequests = u32 },
			"half_open_success_threshold": func() { s.HalfOpenSuccessThreshold = u32 },
			"window_size":                 func() { s.WindowSize = u32 },
			"window_buckets":              func() { s.WindowBuckets = u32 },
			"minimum_calls":               func() { s.MinimumCalls = u32 },
			"open_duration_ns":            func() { s.Timeout = dur },
			"half_open_timeout_ns":        func() { s.HalfOpenTimeout = dur },
			"window_duration_ns":          func() { s.WindowDuration = dur },
			"slow_call_ns":                func() { s.SlowCallDuration = dur },
			"open_duration_max_ns":        func() { s.MaxTimeout = dur },
			"policy":                      func() { s.Policy = Policy(f.u) },
			"failure_rate_threshold":      func() { s.FailureRateThreshold = f.d },
			"slow_call_rate_threshold":    func() { s.SlowCallRateThreshold = f.d },
			"open_backoff_multiplier":     func() { s.BackoffMultiplier = f.d },
			"open_jitter":                 func() { s.Jitter = f.d },
		}
		direct := map[string]func(lbswig.Cb_config){
			"failure_threshold":           func(c lbswig.Cb_config) { c.SetFailure_threshold(uint(u32)) },
			"half_open_max_calls":         func(c lbswig.Cb_config) { c.SetHalf_open_max_calls(uint(u32)) },
			"half_open_success_threshold": func(c lbswig.Cb_config) { c.SetHalf_open_success_threshold(uint(u32)) },
			"window_size":                 func(c lbswig.Cb_config) { c.SetWindow_size(uint(u32)) },
			"window_buckets":              func(c lbswig.Cb_config) { c.SetWindow_buckets(uint(u32)) },
			"minimum_calls":               func(c lbswig.Cb_config) { c.SetMinimum_calls(uint(u32)) },
			"open_duration_ns":            func(c lbswig.Cb_config) { c.SetOpen_duration_ns(f.u) },
			"half_open_timeout_ns":        func(c lbswig.Cb_config) { c.SetHalf_open_timeout_ns(f.u) },
			"window_duration_ns":          func(c lbswig.Cb_config) { c.SetWindow_duration_ns(f.u) },
			"slow_call_ns":                func(c lbswig.Cb_config) { c.SetSlow_call_ns(f.u) },
			"open_duration_max_ns":        func(c lbswig.Cb_config) { c.SetOpen_duration_max_ns(f.u) },
			"policy":                      func(c lbswig.Cb_config) { c.SetPolicy(int(f.u)) },
			"failure_rate_threshold":      func(c lbswig.Cb_config) { c.SetFailure_rate_threshold(f.d) },
			"slow_call_rate_threshold":    func(c lbswig.Cb_config) { c.SetSlow_call_rate_threshold(f.d) },
			"open_backoff_multiplier":     func(c lbswig.Cb_config) { c.SetOpen_backoff_multiplier(f.d) },
			"open_jitter":                 func(c lbswig.Cb_config) { c.SetOpen_jitter(f.d) },
		}
		zero := (f.kind == kindDecimal && f.d == 0) || (f.kind != kindDecimal && f.kind != kindPolicy && f.u == 0)
		if zero || !fitsDuration {
			raw = append(raw, direct[f.key])
		} else {
			set[f.key]()
		}
	}
	return s, func(c lbswig.Cb_config) {
		for _, r := range raw {
			r(c)
		}
	}, nil
}

type scnRunner struct {
	file        string
	clockOffset uint64
}

// run runs one scenario; "" when every step matched, else the mismatch.
func (r scnRunner) run(sc scnScenario) string {
	fail := func(line int, format string, args ...any) string {
		return fmt.Sprintf("%s:%d: mismatch: %s", r.file, line, fmt.Sprintf(format, args...))
	}
	reg, err := OpenRegistry(RegistryOptions{Capacity: 1, ManualClock: true})
	if err != nil {
		return fail(sc.line, "OpenRegistry: %v", err)
	}
	defer reg.Close()
	steps := sc.steps
	var fields []scnField
	configLine := sc.line
	if len(steps) > 0 && steps[0].op == "config" {
		fields, configLine, steps = steps[0].fields, steps[0].line, steps[1:]
	}
	settings, raw, err := scnSettings(sc.name, fields)
	if err != nil {
		return fail(configLine, "%v", err)
	}
	if r.clockOffset != 0 {
		// Time-window buckets start at multiples of their width: an offset
		// that is not one would move the boundaries the scenario relies on.
		probe := lbswig.NewCb_config()
		_ = settings.fill(probe)
		raw(probe)
		policy, width := probe.GetPolicy(), probe.GetWindow_duration_ns()/uint64(max1(probe.GetWindow_buckets()))
		lbswig.DeleteCb_config(probe)
		if policy == int(PolicyTimeWindow) && r.clockOffset%max1u64(width) != 0 {
			return fail(sc.line, "the time window's bucket width does not divide the clock offset %d", r.clockOffset)
		}
		if err := advance(reg, r.clockOffset); err != nil {
			return fail(sc.line, "advance by the clock offset: %v", err)
		}
	}
	cb, err := reg.newCircuitBreaker(settings, raw)
	if err != nil {
		return fail(configLine, "NewCircuitBreaker: %v", err)
	}
	tickets := map[string]Ticket{}
	stateOf := func() string {
		s, err := cb.State()
		if err != nil {
			return err.Error()
		}
		return scnStateName(s)
	}
	for _, s := range steps {
		switch s.op {
		case "allow_ok", "allow_rejected":
			t, err := cb.Acquire()
			got := "ok"
			if err == ErrOpenState || err == ErrTooManyRequests {
				got = "rejected"
			} else if err != nil {
				got = err.Error()
			}
			want := strings.TrimPrefix(s.op, "allow_")
			if got != want {
				return fail(s.line, "allow: expected %s, got %s (state %s)", want, got, stateOf())
			}
			if err == nil {
				tickets[s.name] = t
			}
		case "done":
			if err := cb.Done(tickets[s.name], Outcome(s.value)); err != nil {
				return fail(s.line, "done: expected success, got %v", err)
			}
		case "advance":
			if err := advance(reg, s.value); err != nil {
				return fail(s.line, "advance: %v", err)
			}
		case "state":
			if got := stateOf(); got != scnStateName(State(s.value)) {
				return fail(s.line, "state: expected %s, got %s", scnStateName(State(s.value)), got)
			}
		case "retry_after":
			d, err := cb.RetryAfter()
			if err != nil {
				return fail(s.line, "retry_after: %v", err)
			}
			got := uint64(d)
			if d == Forever {
				got = math.MaxUint64
			}
			if got != s.value {
				return fail(s.line, "retry_after: expected %d, got %d (state %s)", s.value, got, stateOf())
			}
		case "force_open", "disable", "reset":
			f := map[string]func() error{"force_open": cb.ForceOpen, "disable": cb.Disable, "reset": cb.Reset}[s.op]
			if err := f(); err != nil {
				return fail(s.line, "%s: %v", s.op, err)
			}
		case "trip":
			if s.value > math.MaxInt64 {
				return fail(s.line, "trip: %d ns is beyond time.Duration (and any open duration)", s.value)
			}
			if err := cb.Trip(time.Duration(s.value)); err != nil {
				return fail(s.line, "trip: expected success, got %v", err)
			}
		case "stats":
			c, err := cb.Counts()
			if err != nil {
				return fail(s.line, "stats: %v", err)
			}
			for _, f := range s.fields {
				if f.kind == kindDecimal {
					v := map[string]float64{"failure_rate": c.FailureRate, "slow_rate": c.SlowRate}[f.key]
					if !(math.Abs(v-f.d) <= scnRateTolerance) {
						return fail(s.line, "stats: expected %s=%.17g, got %.17g", f.key, f.d, v)
					}
					continue
				}
				v := map[string]uint64{
					"admitted": c.Requests, "rejected": c.Rejections, "successes": c.TotalSuccesses,
					"failures": c.TotalFailures, "ignored": c.TotalExclusions, "trips": c.Trips,
					"consecutive_failures": uint64(c.ConsecutiveFailures), "slow": c.Slow, "state_ns": uint64(c.InState),
				}[f.key]
				if v != f.u {
					return fail(s.line, "stats: expected %s=%d, got %d", f.key, f.u, v)
				}
			}
		default:
			return fail(s.line, "runner bug: unexpected step %q", s.op)
		}
	}
	return ""
}

// advance moves the clock by ns, in steps time.Duration can hold.
func advance(reg *Registry, ns uint64) error {
	for ns > math.MaxInt64 {
		if err := reg.Advance(time.Duration(math.MaxInt64)); err != nil {
			return err
		}
		ns -= math.MaxInt64
	}
	return reg.Advance(time.Duration(ns))
}

func max1(v uint) uint {
	if v == 0 {
		return 1
	}
	return v
}

func max1u64(v uint64) uint64 {
	if v == 0 {
		return 1
	}
	return v
}

func scnStateName(s State) string {
	for name, v := range scnStates {
		if v == s {
			return name
		}
	}
	return s.String()
}

// Exit kinds, as the C++ runner's exit status.
const (
	scnPass = iota
	scnMismatch
	scnMalformed
)

// runFile parses the whole file, then runs every scenario; it returns the
// worst result and what it found.
func runFile(path string, clockOffset uint64) (int, []string) {
	scenarios, bad := parseScenarios(path)
	if len(bad) > 0 {
		return scnMalformed, bad
	}
	result, report := scnPass, []string(nil)
	for _, sc := range scenarios {
		if why := (scnRunner{file: path, clockOffset: clockOffset}).run(sc); why != "" {
			result = scnMismatch
			report = append(report, why)
		}
	}
	return result, report
}

func conformanceDir(t *testing.T) string {
	dir := os.Getenv("LB_CONFORMANCE_DIR")
	if dir == "" {
		t.Skip("LB_CONFORMANCE_DIR is not set (CTest sets it to tests/conformance)")
	}
	return dir
}

func glob(t *testing.T, pattern string) []string {
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func TestConformanceEveryScenarioPasses(t *testing.T) {
	dir := conformanceDir(t)
	files := glob(t, filepath.Join(dir, "*.scn"))
	if len(files) == 0 {
		t.Fatalf("no scenario in %s", dir)
	}
	for _, offset := range []uint64{0, clockOffset(t)} {
		for _, file := range files {
			name := strings.TrimSuffix(filepath.Base(file), ".scn")
			if offset != 0 {
				name += ".late_clock"
			}
			file, offset := file, offset
			t.Run(name, func(t *testing.T) {
				if result, report := runFile(file, offset); result != scnPass {
					t.Error(strings.Join(report, "\n"))
				}
			})
		}
	}
}

// The runner checks itself (README, "Runner self-tests"): it must find each
// malformed file malformed and each mismatching one mismatching, so it skips
// nothing it does not understand; a clock_offset file passes on a clock
// that starts at 0 and mismatches under the offset. known_bugs/ states
// specified behaviour the library gets wrong today: a mismatch is expected
// there.
func TestConformanceRunnerRejectsWhatItMust(t *testing.T) {
	dir := conformanceDir(t)
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{filepath.Join(dir, "selftest", "malformed", "*.scn"), scnMalformed},
		{filepath.Join(dir, "selftest", "mismatch", "*.scn"), scnMismatch},
		{filepath.Join(dir, "known_bugs", "*.scn"), scnMismatch},
	} {
		for _, file := range glob(t, c.pattern) {
			file, want := file, c.want
			t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
				if got, report := runFile(file, 0); got != want {
					t.Errorf("expected result %d, got %d: %s", want, got, strings.Join(report, "\n"))
				}
			})
		}
	}
	offset := clockOffset(t)
	for _, file := range glob(t, filepath.Join(dir, "selftest", "clock_offset", "*.scn")) {
		file := file
		t.Run("clock_offset/"+filepath.Base(file), func(t *testing.T) {
			if got, report := runFile(file, 0); got != scnPass {
				t.Errorf("on a clock that starts at 0: expected a pass, got %d: %s", got, strings.Join(report, "\n"))
			}
			if got, report := runFile(file, offset); got != scnMismatch {
				t.Errorf("at the clock offset: expected a mismatch, got %d: %s", got, strings.Join(report, "\n"))
			}
		})
	}
	if len(glob(t, filepath.Join(dir, "selftest", "*", "*.scn"))) == 0 {
		t.Fatalf("no self-test in %s/selftest", dir)
	}
}
