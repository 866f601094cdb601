package lazybreaker

// Registry.Close while 8 goroutines call its breakers (Acquire, Done,
// Allow and its done, Execute, State, Counts): the runtime survives; a call
// in flight when the close begins returns as it would have before it or
// ErrClosed (never before the close began); every call begun after Close
// returned fails with ErrClosed. The race of tests/capi/test_close_race.cpp:
// 100 rounds for each registry kind (private, a shared file), each over
// breakers of all three policies, created and from GetOrCreate. On a
// library whose close unmaps under its calls the test binary dies instead
// ("fatal error: unexpected signal during runtime execution", SIGSEGV in a
// cgo call).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	closeRaceGoroutines = 8
	closeRaceRounds     = 100
	closeRaceAfter      = 10 // calls each goroutine makes after the close
	closeRaceDeadline   = 60 * time.Second
)

var closeRacePolicies = []Policy{PolicyConsecutive, PolicyCountWindow, PolicyTimeWindow}

func TestClosingAPrivateRegistryUnderCallsOnBreakersOfEveryPolicyCrashesNothing(t *testing.T) {
	closeRace(t, "")
}

func TestClosingASharedRegistryUnderCallsOnBreakersOfEveryPolicyCrashesNothing(t *testing.T) {
	closeRace(t, filepath.Join(t.TempDir(), "close-race.lbr"))
}

// closeRaceSettings trips after a few failures, and OPEN lasts 1 µs: every
// state comes up under the calls.
// closeRaceSettings sets each policy's own options only (an option the
// policy ignores is refused).
func closeRaceSettings(name string, p Policy) Settings {
	s := Settings{Name: name, Policy: p, MinimumCalls: 4, Timeout: time.Microsecond}
	switch p {
	case PolicyConsecutive:
		s.FailureThreshold, s.WindowSize, s.SlowCallDuration = 3, 16, time.Second
	case PolicyCountWindow:
		s.WindowSize = 16
	case PolicyTimeWindow:
		s.WindowDuration, s.WindowBuckets, s.SlowCallDuration = time.Second, 8, time.Second
	}
	return s
}

var errCloseRaceCall = errors.New("the call failed")

// closeRound is what a round's goroutines share.
type closeRound struct {
	breakers     []*CircuitBreaker
	before       int         // calls each goroutine makes before the close
	closing      atomic.Bool // set just before Close
	closed       atomic.Bool // set once Close returned
	stop         atomic.Bool // the test has failed: stop calling
	calledBefore sync.WaitGroup
	calledAfter  sync.WaitGroup
	mu           sync.Mutex
	wrong        []string
}

func (r *closeRound) note(format string, args ...any) {
	r.mu.Lock()
	if len(r.wrong) < 10 {
		r.wrong = append(r.wrong, fmt.Sprintf(format, args...))
	}
	r.mu.Unlock()
}

// held is an admitted call not yet reported: a ticket, or Allow's done.
type held struct {
	cb   *CircuitBreaker
	t    Ticket
	done func(bool)
}

// call makes one goroutine's calls until it has made its calls after the
// close (each further call could only fail again).
func (r *closeRound) call(seed uint32) {
	var pending []held
	calls, after := 0, 0
	for after < closeRaceAfter && !r.stop.Load() {
		// Read before the call: a call begun once closed is seen began
		// after Close returned.
		afterClose := r.closed.Load()
		seed = seed*1103515245 + 12345
		cb := r.breakers[(seed>>8)%uint32(len(r.breakers))]
		var what string
		var err error
		checked := true // Allow's done returns nothing to check
		switch (seed >> 16) % 6 {
		case 0:
			what = "Acquire"
			var t Ticket
			if t, err = cb.Acquire(); err == nil {
				pending = append(pending, held{cb: cb, t: t})
			}
		case 1:
			what = "Allow"
			var done func(bool)
			if done, err = cb.Allow(); err == nil {
				pending = append(pending, held{cb: cb, done: done})
			}
		case 2, 3:
			if len(pending) == 0 {
				what = "State"
				_, err = cb.State()
				break
			}
			h := pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			success := (seed>>24)%3 != 0
			if h.done != nil {
				what, checked = "done", false
				h.done(success)
				break
			}
			what = "Done"
			o := Failure
			if success {
				o = Success
			}
			err = h.cb.Done(h.t, o)
		case 4:
			what = "Execute"
			_, err = cb.Execute(func() (any, error) {
				if (seed>>24)%3 == 0 {
					return nil, errCloseRaceCall
				}
				return nil, nil
			})
			if errors.Is(err, errCloseRaceCall) {
				err = nil
			}
		default:
			what = "Counts"
			_, err = cb.Counts()
		}
		switch {
		case errors.Is(err, ErrClosed):
			if !r.closing.Load() {
				// It returned before the close began: the close is not why.
				r.note("%s: %s failed with ErrClosed before the registry's Close began", cb.Name(), what)
			}
		case !checked:
		case afterClose:
			r.note("%s: a %s begun after Close returned gave %v, not ErrClosed", cb.Name(), what, err)
		case err != nil && !errors.Is(err, ErrOpenState) && !errors.Is(err, ErrTooManyRequests):
			r.note("%s: %s gave %v", cb.Name(), what, err)
		}
		calls++
		if calls == r.before {
			r.calledBefore.Done()
		}
		if afterClose && checked {
			after++
		}
		// 8 goroutines on fewer threads: each gets its turn every thousand
		// calls or so rather than a time slice apart, and between turns it
		// is mostly inside a call (yielding often makes every switch fall
		// between calls, and the race never hits).
		if calls%1024 == 0 {
			runtime.Gosched()
		}
	}
	if calls < r.before { // closed before this goroutine got that far
		r.calledBefore.Done()
	}
	r.calledAfter.Done()
}

func waitOrFail(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeRaceDeadline):
		t.Fatalf("a goroutine made no calls %s", what)
	}
}

func closeRace(t *testing.T, path string) {
	for n := 0; n < closeRaceRounds; n++ {
		closeRaceRound(t, path, n)
	}
}

func closeRaceRound(t *testing.T, path string, n int) {
	o := RegistryOptions{Capacity: 64}
	if path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err) // a fresh file: each round's names would fill it
		}
		o.Path, o.Create = path, true
	}
	reg, err := OpenRegistry(o)
	if err != nil {
		t.Fatal(err)
	}
	var breakers []*CircuitBreaker
	for _, p := range closeRacePolicies {
		name := fmt.Sprintf("b%d.%d", n, p)
		created, err := reg.NewCircuitBreaker(closeRaceSettings(name+".created", p))
		if err != nil {
			t.Fatal(err)
		}
		shared, err := reg.GetOrCreate(closeRaceSettings(name+".shared", p))
		if err != nil {
			t.Fatal(err)
		}
		breakers = append(breakers, created, shared)
	}
	r := &closeRound{breakers: breakers, before: (1 + n%7) * 10}
	defer r.stop.Store(true)
	r.calledBefore.Add(closeRaceGoroutines)
	r.calledAfter.Add(closeRaceGoroutines)
	var running sync.WaitGroup
	for g := 0; g < closeRaceGoroutines; g++ {
		running.Add(1)
		go func(seed uint32) {
			defer running.Done()
			r.call(seed)
		}(uint32(n*closeRaceGoroutines + g + 1))
	}
	// Closed while every goroutine is calling, at a point that moves
	// from round to round.
	waitOrFail(t, &r.calledBefore, "before the close")
	r.closing.Store(true)
	if err := reg.Close(); err != nil {
		t.Fatalf("round %d: Close: %v", n, err)
	}
	r.closed.Store(true)
	waitOrFail(t, &r.calledAfter, "after the close")
	running.Wait()
	if len(r.wrong) > 0 {
		t.Fatalf("round %d: %v", n, r.wrong)
	}
	if _, err := reg.NewCircuitBreaker(Settings{Name: "late"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("round %d: NewCircuitBreaker after Close: want ErrClosed, got %v", n, err)
	}
	if err := reg.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("round %d: a second Close: want ErrClosed, got %v", n, err)
	}
	for _, cb := range breakers {
		if _, err := cb.Acquire(); !errors.Is(err, ErrClosed) {
			t.Fatalf("round %d: %s: Acquire after Close: want ErrClosed, got %v", n, cb.Name(), err)
		}
		if _, err := cb.Counts(); !errors.Is(err, ErrClosed) {
			t.Fatalf("round %d: %s: Counts after Close: want ErrClosed, got %v", n, cb.Name(), err)
		}
		if err := cb.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("round %d: %s: Close after the registry's: %v", n, cb.Name(), err)
		}
	}
}
