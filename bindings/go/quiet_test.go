package lazybreaker

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func monotonicRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := OpenRegistry(RegistryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestQuietPathIsOnAgainstThisLibrary(t *testing.T) {
	q := quietOn()
	if q == nil || len(q.stripes) == 0 {
		t.Fatal("the library publishes layout 1, but the quiet path is off")
	}
}

// Past two folds of each counter (2 x 32768): the counts are exact and the
// library's reader sees them.
func TestQuietCallsCountExactlyThroughFolds(t *testing.T) {
	cb := newBreaker(t, monotonicRegistry(t), Settings{})
	const calls = 70000
	for i := 0; i < calls; i++ {
		tk, err := cb.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		if err := cb.Done(tk, Success); err != nil {
			t.Fatal(err)
		}
	}
	c := mustCounts(t, cb)
	if c.Requests != calls || c.TotalSuccesses != calls {
		t.Fatalf("counts: %+v, want %d requests and successes", c, calls)
	}
}

func TestQuietCallsFromManyGoroutinesCountExactly(t *testing.T) {
	cb := newBreaker(t, monotonicRegistry(t), Settings{})
	const goroutines, calls = 4, 20000
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				tk, err := cb.Acquire()
				if err == nil {
					err = cb.Done(tk, Success)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	c := mustCounts(t, cb)
	if c.Requests != goroutines*calls || c.TotalSuccesses != goroutines*calls {
		t.Fatalf("counts: %+v, want %d", c, goroutines*calls)
	}
}

// A failure crosses and trips; the OPEN period then rejects on the quiet
// path, counted, with the sentinel and the wait on asking.
func TestQuietRejectionsAreCountedAndCarryTheWait(t *testing.T) {
	cb := newBreaker(t, monotonicRegistry(t), Settings{FailureThreshold: 1, Timeout: time.Minute})
	tk, err := cb.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Done(tk, Failure); err != nil {
		t.Fatal(err)
	}
	mustState(t, cb, StateOpen)
	for i := 0; i < 40000; i++ {
		if _, err := cb.Acquire(); !errors.Is(err, ErrOpenState) {
			t.Fatalf("rejection %d: %v", i, err)
		}
	}
	_, err = cb.Execute(func() (any, error) { return nil, nil })
	var rejected *RejectedError
	if !errors.As(err, &rejected) || rejected.RetryAfter() < 59*time.Second {
		t.Fatalf("Execute: %v", err)
	}
	if c := mustCounts(t, cb); c.Rejections != 40001 {
		t.Fatalf("rejections: %d, want 40001", c.Rejections)
	}
	if err := cb.ForceOpen(); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Acquire(); !errors.Is(err, ErrOpenState) {
		t.Fatalf("FORCED_OPEN: %v", err)
	}
}

func TestQuietPathRefusesAClosedRegistrysBreakers(t *testing.T) {
	r, err := OpenRegistry(RegistryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cb := newBreaker(t, r, Settings{})
	tk, err := cb.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.Acquire(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if err := cb.Done(tk, Success); !errors.Is(err, ErrClosed) {
		t.Fatalf("Done after Close: %v", err)
	}
}

func TestQuietAcquireDoneAllocatesNothing(t *testing.T) {
	cb := newBreaker(t, monotonicRegistry(t), Settings{})
	allocs := testing.AllocsPerRun(1000, func() {
		tk, _ := cb.Acquire()
		_ = cb.Done(tk, Success)
	})
	if allocs != 0 {
		t.Fatalf("Acquire+Done: %v allocations", allocs)
	}
}
