package lazybreaker

// The binding's own behaviour: idioms, ownership, errors. The state
// machine's behaviour is pinned by the conformance runner
// (conformance_test.go); these tests use the manual clock, never a sleep.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

func manualRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := NewManualClockRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func newBreaker(t *testing.T, r *Registry, s Settings) *CircuitBreaker {
	t.Helper()
	cb, err := r.NewCircuitBreaker(s)
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

func mustState(t *testing.T, cb *CircuitBreaker, want State) {
	t.Helper()
	got, err := cb.State()
	if err != nil || got != want {
		t.Fatalf("state: want %v, got %v (%v)", want, got, err)
	}
}

func mustCounts(t *testing.T, cb *CircuitBreaker) Counts {
	t.Helper()
	c, err := cb.Counts()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fail(cb *CircuitBreaker, n int) {
	for i := 0; i < n; i++ {
		_, _ = cb.Execute(func() (any, error) { return nil, errors.New("boom") })
	}
}

func TestTheDefaultsAreTheLibrarysFiveInARowAndThirtySeconds(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{})
	fail(cb, 4)
	mustState(t, cb, StateClosed)
	fail(cb, 1)
	mustState(t, cb, StateOpen)
	if d, err := cb.RetryAfter(); err != nil || d != 30*time.Second {
		t.Fatalf("retry after: want 30s, got %v (%v)", d, err)
	}
}

func TestRecoveryIsLazyOnTheManualClock(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: "lazy", FailureThreshold: 2, Timeout: 10 * time.Second})
	fail(cb, 2)
	mustState(t, cb, StateOpen)
	if err := r.Advance(10*time.Second - 1); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Acquire(); err != ErrOpenState {
		t.Fatalf("1 ns before the timeout: want ErrOpenState, got %v", err)
	}
	if err := r.Advance(1); err != nil {
		t.Fatal(err)
	}
	// Nothing moved on its own: the breaker is OPEN until a call arrives.
	mustState(t, cb, StateOpen)
	if d, _ := cb.RetryAfter(); d != 0 {
		t.Fatalf("retry after at the timeout: want 0, got %v", d)
	}
	probe, err := cb.Acquire()
	if err != nil {
		t.Fatalf("the first call after the timeout is the probe, got %v", err)
	}
	mustState(t, cb, StateHalfOpen)
	if _, err := cb.Acquire(); err != ErrTooManyRequests {
		t.Fatalf("a second call while the probe runs: want ErrTooManyRequests, got %v", err)
	}
	if err := cb.Done(probe, Success); err != nil {
		t.Fatal(err)
	}
	mustState(t, cb, StateClosed)
}

// Exactly MaxRequests probes, however many goroutines arrive at once, in
// every one of 300 half-open periods.
func TestExactlyMaxRequestsProbesUnder64Goroutines(t *testing.T) {
	const goroutines, rounds, probes = 64, 300, 3
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{MaxRequests: probes, HalfOpenSuccessThreshold: probes, Timeout: time.Millisecond})
	for round := 0; round < rounds; round++ {
		if err := cb.Trip(time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := r.Advance(time.Millisecond); err != nil {
			t.Fatal(err)
		}
		var admitted, rejected atomic.Int64
		tickets := make(chan Ticket, goroutines)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				t, err := cb.Acquire()
				switch {
				case err == nil:
					admitted.Add(1)
					tickets <- t
				case errors.Is(err, ErrOpenState), errors.Is(err, ErrTooManyRequests):
					rejected.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		close(tickets)
		if admitted.Load() != probes || rejected.Load() != goroutines-probes {
			t.Fatalf("round %d: %d admitted, %d rejected; want exactly %d probes", round, admitted.Load(), rejected.Load(), probes)
		}
		for ticket := range tickets {
			if err := cb.Done(ticket, Success); err != nil {
				t.Fatal(err)
			}
		}
		mustState(t, cb, StateClosed)
	}
}

func TestAPanicInExecuteReportsAFailureAndPanicsOn(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{})
	type marker struct{}
	func() {
		defer func() {
			if r := recover(); r != (marker{}) {
				t.Fatalf("want the request's own panic value, got %v", r)
			}
		}()
		_, _ = Execute(cb, func() (int, error) { panic(marker{}) })
		t.Fatal("Execute returned after a panic")
	}()
	if c := mustCounts(t, cb); c.TotalFailures != 1 || c.Requests != 1 {
		t.Fatalf("want one failure reported, got %+v", c)
	}
}

func TestExecuteIsGenericAndClassifiesBySettings(t *testing.T) {
	errNotFound, errBadRequest := errors.New("404"), errors.New("400")
	cb := newBreaker(t, manualRegistry(t), Settings{
		IsSuccessful: func(err error) bool { return err == nil || err == errNotFound },
		IsExcluded:   func(err error) bool { return err == errBadRequest },
	})
	n, err := Execute(cb, func() (int, error) { return 42, nil })
	if n != 42 || err != nil {
		t.Fatalf("want 42, nil; got %v, %v", n, err)
	}
	if _, err := Execute(cb, func() (string, error) { return "", errNotFound }); err != errNotFound {
		t.Fatalf("the request's error comes back as it is, got %v", err)
	}
	_, _ = cb.Execute(func() (any, error) { return nil, errBadRequest })
	_, _ = cb.Execute(func() (any, error) { return nil, errors.New("500") })
	c := mustCounts(t, cb)
	if c.TotalSuccesses != 2 || c.TotalExclusions != 1 || c.TotalFailures != 1 {
		t.Fatalf("want 2 successes, 1 exclusion, 1 failure; got %+v", c)
	}
}

func TestExecuteContextReportsTheCallersCancellationAsIgnored(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 1})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := ExecuteContext(ctx, cb, func(ctx context.Context) (int, error) {
		cancel() // the caller gives up while the call runs
		<-ctx.Done()
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if c := mustCounts(t, cb); c.TotalExclusions != 1 || c.TotalFailures != 0 {
		t.Fatalf("want the cancellation ignored, got %+v", c)
	}
	mustState(t, cb, StateClosed)
	// A context done before the call asks the breaker nothing.
	if _, err := cb.ExecuteContext(ctx, func(context.Context) (any, error) { t.Fatal("ran"); return nil, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if c := mustCounts(t, cb); c.Requests != 1 {
		t.Fatalf("want no second request, got %+v", c)
	}
	// context.Canceled that is not the caller's (the dependency's own) counts.
	_, _ = cb.ExecuteContext(context.Background(), func(context.Context) (any, error) { return nil, context.Canceled })
	mustState(t, cb, StateOpen)
}

func TestExecuteContextCountsADeadlineAsAFailure(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 1})
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	_, _ = ExecuteContext(context.Background(), cb, func(context.Context) (int, error) { return 0, ctx.Err() })
	mustState(t, cb, StateOpen)
}

func TestRejectionsCarryTheSentinelAndTheRetryAfter(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: "payments"})
	if err := cb.Trip(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Advance(3 * time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := cb.Execute(func() (any, error) { t.Fatal("ran"); return nil, nil })
	var rejected *RejectedError
	if !errors.Is(err, ErrOpenState) || !errors.As(err, &rejected) {
		t.Fatalf("want a *RejectedError matching ErrOpenState, got %v", err)
	}
	if rejected.RetryAfter() != 7*time.Second || rejected.Breaker != "payments" || rejected.State != StateOpen {
		t.Fatalf("want payments, open, 7s; got %q, %v, %v", rejected.Breaker, rejected.State, rejected.RetryAfter())
	}
	var waiter interface{ RetryAfter() time.Duration }
	if !errors.As(err, &waiter) {
		t.Fatal("errors.As to an interface with RetryAfter() fails")
	}
	if !strings.Contains(err.Error(), "payments") || !strings.Contains(err.Error(), "7s") {
		t.Fatalf("the message names the breaker and the wait: %q", err)
	}
	// The wait is read when asked, and a later rejection is the same error.
	if err := r.Advance(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	_, again := cb.Execute(func() (any, error) { t.Fatal("ran"); return nil, nil })
	if again != err || rejected.RetryAfter() != 5*time.Second {
		t.Fatalf("want the same error, now 5s; got %p vs %p, %v", again, err, rejected.RetryAfter())
	}

	if err := cb.ForceOpen(); err != nil {
		t.Fatal(err)
	}
	done, err := cb.Allow()
	if done != nil || !errors.As(err, &rejected) || !errors.Is(err, ErrOpenState) || rejected.RetryAfter() != Forever {
		t.Fatalf("forced open: want ErrOpenState and Forever, got %v", err)
	}
	if d, _ := cb.RetryAfter(); d != Forever {
		t.Fatalf("forced open: RetryAfter want Forever, got %v", d)
	}
}

func TestAllowIsTheTwoStepForm(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 2})
	for _, success := range []bool{true, false, false} {
		done, err := cb.Allow()
		if err != nil {
			t.Fatal(err)
		}
		done(success)
	}
	mustState(t, cb, StateOpen)
	if c := mustCounts(t, cb); c.TotalSuccesses != 1 || c.TotalFailures != 2 {
		t.Fatalf("want 1 success, 2 failures, got %+v", c)
	}
	if _, err := cb.Allow(); !errors.Is(err, ErrOpenState) {
		t.Fatalf("want ErrOpenState, got %v", err)
	}
}

func TestAllowsDoneCountsOnlyItsFirstCall(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 2})
	done, err := cb.Allow()
	if err != nil {
		t.Fatal(err)
	}
	done(false)
	done(false) // a second call: counted nowhere, no trip
	done(true)
	mustState(t, cb, StateClosed)
	if c := mustCounts(t, cb); c.Requests != 1 || c.TotalFailures != 1 || c.TotalSuccesses != 0 {
		t.Fatalf("want 1 request, 1 failure, 0 successes, got %+v", c)
	}
	// Racing calls of one done: exactly one counts.
	done, err = cb.Allow()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); done(true) }()
	}
	wg.Wait()
	if c := mustCounts(t, cb); c.TotalSuccesses != 1 {
		t.Fatalf("16 racing calls of one done: want 1 success, got %+v", c)
	}
}

func TestAllowsDoneDeferredAsAFailureAfterTheVerdictCountsNothing(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 1})
	for i := 0; i < 3; i++ {
		func() {
			done, err := cb.Allow()
			if err != nil {
				t.Fatal(err)
			}
			defer done(false) // reports a failure only if nothing else did
			done(true)
		}()
	}
	mustState(t, cb, StateClosed)
	if c := mustCounts(t, cb); c.TotalSuccesses != 3 || c.TotalFailures != 0 {
		t.Fatalf("want 3 successes, 0 failures, got %+v", c)
	}
}

func TestAcquireAndDoneAllocateNothing(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{})
	if n := testing.AllocsPerRun(1000, func() {
		ticket, _ := cb.Acquire()
		_ = cb.Done(ticket, Success)
	}); n != 0 {
		t.Fatalf("CLOSED: %v allocations per Acquire+Done", n)
	}
	if err := cb.Trip(time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := cb.Acquire(); err != ErrOpenState {
			panic(err)
		}
	}); n != 0 {
		t.Fatalf("OPEN: %v allocations per rejected Acquire", n)
	}
}

func TestOutcomesAfterATransitionCountButMoveNothing(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 1})
	old, err := cb.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Trip(time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := cb.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Done(old, Failure); err != nil {
		t.Fatal(err)
	}
	mustState(t, cb, StateClosed)
	if err := cb.Done(0, Success); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a ticket Acquire never issues: want ErrInvalidArgument, got %v", err)
	}
	ticket, _ := cb.Acquire()
	if err := cb.Done(ticket, Outcome(7)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an unknown outcome: want ErrInvalidArgument, got %v", err)
	}
}

func TestManualStates(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{FailureThreshold: 1})
	if err := cb.Disable(); err != nil {
		t.Fatal(err)
	}
	fail(cb, 3)
	mustState(t, cb, StateDisabled)
	if err := cb.Reset(); err != nil {
		t.Fatal(err)
	}
	mustState(t, cb, StateClosed)
	if err := cb.ForceOpen(); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Acquire(); err != ErrOpenState {
		t.Fatalf("forced open: want ErrOpenState, got %v", err)
	}
}

func TestBadSettingsFailInGosWords(t *testing.T) {
	r := manualRegistry(t)
	for _, c := range []struct {
		s            Settings
		option, want string
	}{
		{Settings{FailureThreshold: 70000}, "FailureThreshold", "FailureThreshold must be at most 65535, got 70000"},
		{Settings{MaxRequests: 33}, "MaxRequests", "MaxRequests must be at most 32, got 33"},
		{Settings{HalfOpenSuccessThreshold: 256}, "HalfOpenSuccessThreshold", "HalfOpenSuccessThreshold must be at most 255, got 256"},
		{Settings{Timeout: time.Nanosecond}, "Timeout", "Timeout must be at least 1µs, got 1ns"},
		{Settings{Timeout: 367 * 24 * time.Hour}, "Timeout", "Timeout must be at most 8784h0m0s, got 8808h0m0s"},
		{Settings{Timeout: -time.Second}, "Timeout", "Timeout must not be negative, got -1s"},
		{Settings{Policy: 7}, "Policy", "Policy must be PolicyConsecutive, PolicyCountWindow or PolicyTimeWindow, got Policy(7)"},
		{Settings{Policy: 7, WindowSize: 10}, "Policy", "Policy must be PolicyConsecutive, PolicyCountWindow or PolicyTimeWindow, got Policy(7)"},
		{Settings{Policy: PolicyCountWindow, FailureRateThreshold: 1.5}, "FailureRateThreshold", "FailureRateThreshold must be at most 1, got 1.5"},
		{Settings{Policy: PolicyTimeWindow, WindowBuckets: 33}, "WindowBuckets", "WindowBuckets must be at most 32, got 33"},
		{Settings{Policy: PolicyTimeWindow, WindowDuration: time.Microsecond}, "WindowDuration", "WindowDuration must be at least 1ms, got 1µs"},
		{Settings{Jitter: 1}, "Jitter", "Jitter must be below 1, got 1"},
		{Settings{BackoffMultiplier: 0.5}, "BackoffMultiplier", "BackoffMultiplier must be at least 1, got 0.5"},
		{Settings{MaxTimeout: time.Nanosecond}, "MaxTimeout", "MaxTimeout must be 0 or from 1µs to 8784h0m0s, got 1ns"},
		{Settings{Timeout: time.Minute, MaxTimeout: time.Second}, "MaxTimeout", "MaxTimeout must be 0 or at least Timeout (1m0s), got 1s"},
		{Settings{Name: strings.Repeat("n", 256)}, "Name", "Name must be at most 255 bytes, got 256"},
		{Settings{Name: "\xff"}, "Name", `Name must be UTF-8, got "\xff"`},
		{Settings{Name: "a\x00b"}, "Name", `Name must not hold a NUL byte, got "a\x00b"`},
	} {
		_, err := r.NewCircuitBreaker(c.s)
		var e *Error
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &e) || e.Option != c.option ||
			err.Error() != "lazybreaker: NewCircuitBreaker: "+c.want {
			t.Errorf("%+v: want ErrInvalidArgument with Option %s saying %q, got %v", c.s, c.option, c.want, err)
		}
	}
	breakers, err := r.Breakers()
	if err != nil || len(breakers) != 0 {
		t.Fatalf("a failed creation leaves nothing behind: %d breakers (%v)", len(breakers), err)
	}
	newBreaker(t, r, Settings{Name: "taken"})
	if _, err := r.NewCircuitBreaker(Settings{Name: "taken"}); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("want ErrNameTaken, got %v", err)
	}
	full, err := OpenRegistry(RegistryOptions{Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	newBreaker(t, full, Settings{})
	if _, err := full.NewCircuitBreaker(Settings{}); !errors.Is(err, ErrRegistryFull) {
		t.Fatalf("want ErrRegistryFull, got %v", err)
	}
	if _, err := OpenRegistry(RegistryOptions{Capacity: 1 << 30}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("capacity over the maximum: want ErrInvalidArgument, got %v", err)
	}
}

func TestCallsAfterCloseReturnErrClosed(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: "closing"})
	ticket, _ := cb.Acquire()
	if err := cb.Close(); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{"Close": cb.Close(), "Done": cb.Done(ticket, Success),
		"ForceOpen": cb.ForceOpen(), "Reset": cb.Reset(), "Disable": cb.Disable(), "Trip": cb.Trip(time.Second)}
	_, checks["Acquire"] = cb.Acquire()
	_, checks["Allow"] = cb.Allow()
	_, checks["Execute"] = cb.Execute(func() (any, error) { t.Fatal("ran"); return nil, nil })
	_, checks["State"] = cb.State()
	_, checks["Counts"] = cb.Counts()
	_, checks["RetryAfter"] = cb.RetryAfter()
	for call, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: want ErrClosed, got %v", call, err)
		}
	}
	if _, err := r.Lookup("closing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a closed breaker's name is free: want ErrNotFound, got %v", err)
	}
	newBreaker(t, r, Settings{Name: "closing"})
}

func TestCallsAfterTheRegistryClosesReturnErrClosed(t *testing.T) {
	r, err := NewManualClockRegistry()
	if err != nil {
		t.Fatal(err)
	}
	cb := newBreaker(t, r, Settings{Name: "in a closed registry"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, acquireErr := cb.Acquire()
	_, stateErr := cb.State()
	_, newErr := r.NewCircuitBreaker(Settings{})
	_, lookupErr := r.Lookup("in a closed registry")
	_, listErr := r.Breakers()
	_, eventsErr := r.PollEvents(1)
	_, textErr := r.Prometheus()
	for i, err := range []error{acquireErr, stateErr, newErr, lookupErr, listErr, eventsErr, textErr,
		r.Advance(time.Second), r.Close(), cb.Close()} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("call %d after the registry closed: want ErrClosed, got %v", i, err)
		}
	}
	d, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("the default registry never closes: want ErrInvalidArgument, got %v", err)
	}
	if err := d.Advance(time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("the default registry's clock is not manual: want ErrInvalidArgument, got %v", err)
	}
}

// collectUntil runs the collector until cond holds (finalizers run on a
// goroutine of their own after a cycle); false after many cycles.
func collectUntil(cond func() bool) bool {
	for i := 0; i < 500; i++ {
		runtime.GC()
		runtime.Gosched()
		if cond() {
			return true
		}
	}
	return false
}

func liveBreakers(t *testing.T, r *Registry) int {
	list, err := r.Breakers()
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func TestTheFinalizerDestroysADroppedAnonymousBreaker(t *testing.T) {
	r := manualRegistry(t)
	func() {
		cb := newBreaker(t, r, Settings{})
		_, _ = cb.Acquire()
	}()
	if !collectUntil(func() bool { return liveBreakers(t, r) == 0 }) {
		t.Fatal("a dropped anonymous breaker is still in its registry after 500 collections")
	}
}

func TestANamedBreakerOutlivesItsValue(t *testing.T) {
	r := manualRegistry(t)
	excluded := errors.New("excluded")
	func() {
		newBreaker(t, r, Settings{Name: "kept", IsExcluded: func(err error) bool { return err == excluded }})
	}()
	for i := 0; i < 5; i++ {
		runtime.GC()
	}
	cb, err := r.Lookup("kept")
	if err != nil {
		t.Fatalf("a named breaker is held by its registry: %v", err)
	}
	_, _ = cb.Execute(func() (any, error) { return nil, excluded })
	if c := mustCounts(t, cb); c.TotalExclusions != 1 {
		t.Fatalf("Lookup gives back the breaker's settings (IsExcluded): %+v", c)
	}
}

func TestLookupFindsABreakerCreatedElsewhere(t *testing.T) {
	r := manualRegistry(t)
	// As another language in the process would: straight through the C ABI.
	cfg := lbswig.NewCb_config()
	defer lbswig.DeleteCb_config(cfg)
	h := lbswig.Cb_create(lbswig.SwigcptrStruct_SS_cb_registry(r.reg), "from C", cfg)
	cb, err := r.Lookup("from C")
	if err != nil || cb.Name() != "from C" || cb.h != h {
		t.Fatalf("want the breaker created through the C ABI, got %v (%v)", cb, err)
	}
	list, err := r.Breakers()
	if err != nil || len(list) != 1 || list[0].Name() != "from C" {
		t.Fatalf("Breakers: want [from C], got %v (%v)", list, err)
	}
	// A view is never destroyed by the collector: the breaker stays.
	cb, list = nil, nil
	for i := 0; i < 5; i++ {
		runtime.GC()
	}
	if _, err := r.Lookup("from C"); err != nil {
		t.Fatal(err)
	}
}

func TestEventsArriveInOrder(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: "evented", FailureThreshold: 1, Timeout: time.Second})
	fail(cb, 1)
	if err := r.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	done, err := cb.Allow()
	if err != nil {
		t.Fatal(err)
	}
	done(true)
	if err := cb.ForceOpen(); err != nil {
		t.Fatal(err)
	}
	events, err := r.PollEvents(10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		from, to State
		reason   Reason
		at       time.Duration
	}{
		{StateClosed, StateOpen, ReasonConsecutiveFailures, 0},
		{StateOpen, StateHalfOpen, ReasonOpenElapsed, time.Second},
		{StateHalfOpen, StateClosed, ReasonProbesSucceeded, time.Second},
		{StateClosed, StateForcedOpen, ReasonManual, time.Second},
	}
	if len(events) != len(want) {
		t.Fatalf("want %d events, got %v", len(want), events)
	}
	for i, e := range events {
		w := want[i]
		if e.Breaker != "evented" || e.From != w.from || e.To != w.to || e.Reason != w.reason || e.At != w.at ||
			(i > 0 && e.Sequence <= events[i-1].Sequence) {
			t.Errorf("event %d: want %v -> %v (%v) at %v, got %v", i, w.from, w.to, w.reason, w.at, e)
		}
	}
	if more, err := r.PollEvents(10); err != nil || len(more) != 0 {
		t.Fatalf("the queue is drained: %v (%v)", more, err)
	}
	if err := r.SelectEvents(EventTransitions | EventRejections); err != nil {
		t.Fatal(err)
	}
	_, _ = cb.Acquire()
	if events, _ := r.PollEvents(10); len(events) != 1 || events[0].Reason != ReasonRejected {
		t.Fatalf("want one rejection event, got %v", events)
	}
	if _, err := r.PollEvents(0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("PollEvents(0): want ErrInvalidArgument, got %v", err)
	}
}

// The Prometheus text exposition format 0.0.4: comment lines, and samples
// `name{label="value",...} number`.
var (
	promComment = regexp.MustCompile(`^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*$`)
	promSample  = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*)?\})? (\S+)$`)
)

func TestThePrometheusTextParses(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: `quote " and \ backslash`, FailureThreshold: 1})
	newBreaker(t, r, Settings{})
	fail(cb, 1)
	text, err := r.Prometheus()
	if err != nil {
		t.Fatal(err)
	}
	samples := 0
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			if !promComment.MatchString(line) {
				t.Errorf("line %d: a bad comment: %q", i+1, line)
			}
			continue
		}
		m := promSample.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("line %d: not a sample: %q", i+1, line)
			continue
		}
		if _, err := strconv.ParseFloat(m[len(m)-1], 64); err != nil {
			t.Errorf("line %d: value %q: %v", i+1, m[len(m)-1], err)
		}
		samples++
	}
	if samples == 0 || !strings.Contains(text, `breaker="quote \" and \\ backslash"`) {
		t.Fatalf("want samples labelled with the escaped name, got:\n%s", text)
	}
}

func TestCountsAndNames(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: "counted", SlowCallDuration: time.Second})
	ticket, _ := cb.Acquire()
	if err := r.Advance(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	_ = cb.Done(ticket, Success)
	c := mustCounts(t, cb)
	if c.Requests != 1 || c.TotalSuccesses != 1 || c.Slow != 1 || c.InState != 2*time.Second {
		t.Fatalf("want 1 request, 1 slow success, 2s in state; got %+v", c)
	}
	if cb.Name() != "counted" || cb.Registry() != r {
		t.Fatal("Name and Registry")
	}
	if now, err := r.Now(); err != nil || now != 2*time.Second {
		t.Fatalf("Now: want 2s, got %v (%v)", now, err)
	}
	if s := fmt.Sprint(StateHalfOpen, Reason(6), State(9)); s != "half_open probe_lease_expired unknown state 9" {
		t.Fatalf("names: %q", s)
	}
}

func TestTheDefaultRegistry(t *testing.T) {
	cb, err := NewCircuitBreaker(Settings{Name: "go-default-registry-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	d, _ := DefaultRegistry()
	found, err := d.Lookup("go-default-registry-test")
	if err != nil || found.h != cb.h {
		t.Fatalf("Lookup in the default registry: %v", err)
	}
}

// Close racing with calls on the breaker: calls fail with ErrClosed or
// succeed, never crash (the library keeps a destroyed slot's memory).
func TestCloseRacingWithCalls(t *testing.T) {
	r := manualRegistry(t)
	for round := 0; round < 50; round++ {
		cb := newBreaker(t, r, Settings{})
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					ticket, err := cb.Acquire()
					if err == nil {
						_ = cb.Done(ticket, Success)
					} else if !errors.Is(err, ErrClosed) {
						t.Errorf("want nil or ErrClosed, got %v", err)
						return
					}
				}
			}()
		}
		_ = cb.Close()
		wg.Wait()
	}
}

func TestRejectionsAllocateNothingInEveryForm(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{Name: "payments"})
	if err := cb.Trip(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	req := func() (any, error) { return nil, nil }
	ctxReq := func(context.Context) (any, error) { return nil, nil }
	ctx := context.Background()
	forms := map[string]func() error{
		"Execute":        func() error { _, err := cb.Execute(req); return err },
		"ExecuteContext": func() error { _, err := cb.ExecuteContext(ctx, ctxReq); return err },
		"Allow":          func() error { _, err := cb.Allow(); return err },
		"Acquire":        func() error { _, err := cb.Acquire(); return err },
	}
	for name, call := range forms {
		if err := call(); !errors.Is(err, ErrOpenState) {
			t.Fatalf("%s: want ErrOpenState, got %v", name, err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = call() }); n != 0 {
			t.Errorf("%s: a rejection allocates %v times", name, n)
		}
	}
	var rejected *RejectedError
	_, err := cb.Allow()
	if !errors.As(err, &rejected) || rejected.RetryAfter() != 10*time.Second {
		t.Fatalf("Allow: want a *RejectedError with 10s, got %v", err)
	}
}
