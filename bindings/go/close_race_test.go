package lazybreaker

// Registry.Close at a random moment 0-400 µs after 8 goroutines on new
// threads start calling its 16 breakers (Acquire, Done, State, Counts):
// every call in flight returns what it would have before the close or
// ErrClosed, every call begun after Close returned fails with ErrClosed,
// and the test binary survives, for private and shared registries (a file
// made anew each round, in /dev/shm and in /tmp) and every policy.
// tests/capi/test_close_race.cpp through the binding.
//
// Goroutines are not threads: each locks itself to its thread and exits
// locked, so the runtime ends the thread with it and every round's
// goroutines run on new threads, some of which take their counter stripe
// in the library (their thread's first crossing) while the close runs. On a
// library that closes a shared registry without waiting for stripes being
// taken (before 139fdff) the binary dies of SIGSEGV in a cgo call. They wait
// at a gate that the main goroutine opens just before its random wait, so
// that their first calls come together around the close, not spread over
// the time the runtime takes to start 8 threads. Once through it they never
// yield or sleep (the race is inside calls, and a thread the scheduler
// preempts there is what it needs), so each has a P of its own: GOMAXPROCS
// is raised while the test runs, and the OS schedules them as it schedules
// the C test's threads. LB_CLOSE_RACE_ROUNDS sets the rounds per policy and
// registry kind (20).

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	anyMomentGoroutines = 8
	anyMomentBreakers   = 16
	anyMomentRounds     = 20
	anyMomentCallsAfter = 4 // calls each goroutine must make after the close
	// How long a round waits for them (a goroutine the scheduler has not run
	// yet gets its turn), and for the goroutines to stop.
	anyMomentGiveUp   = 10 * time.Second
	anyMomentDeadline = 60 * time.Second
)

func TestClosingAPrivateRegistryAtAnyMomentUnderCallsFromNewThreads(t *testing.T) {
	closeAtAnyMoment(t, "")
}

func TestClosingASharedRegistryInDevShmAtAnyMomentUnderCallsFromNewThreads(t *testing.T) {
	closeAtAnyMoment(t, "/dev/shm")
}

func TestClosingASharedRegistryInTmpAtAnyMomentUnderCallsFromNewThreads(t *testing.T) {
	closeAtAnyMoment(t, "/tmp")
}

func anyMomentRoundCount() int {
	if n, err := strconv.Atoi(os.Getenv("LB_CLOSE_RACE_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return anyMomentRounds
}

func spinFor(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// anyMomentRound is what a round's goroutines share.
type anyMomentRound struct {
	breakers []*CircuitBreaker
	gate     chan struct{} // closed when the goroutines are to start calling
	closing  atomic.Bool   // set just before Close
	closed   atomic.Bool   // set once Close returned
	stop     atomic.Bool
	mu       sync.Mutex
	wrong    []string
}

func (r *anyMomentRound) note(format string, args ...any) {
	r.mu.Lock()
	if len(r.wrong) < 10 {
		r.wrong = append(r.wrong, fmt.Sprintf(format, args...))
	}
	r.mu.Unlock()
}

// anyMomentWorker is what one goroutine saw: callsAfter while it runs, the
// rest once it has returned.
type anyMomentWorker struct {
	callsAfter atomic.Int64 // begun once Close had returned
	bad        int          // a result no call may give
	afterBad   int          // a call begun after the close that did not fail with ErrClosed
}

func (w *anyMomentWorker) run(r *anyMomentRound, seed int64) {
	// Never unlocked: the thread ends with the goroutine, and the next
	// round's goroutines make their first calls on new ones.
	runtime.LockOSThread()
	<-r.gate
	type admitted struct {
		cb *CircuitBreaker
		t  Ticket
	}
	var held []admitted // not yet reported
	rng := rand.New(rand.NewSource(seed))
	for n := 0; !r.stop.Load(); n++ {
		// Read before the call: a call that starts once closed is seen began
		// after Close returned.
		after := r.closed.Load()
		x := uint32(rng.Int63())
		cb := r.breakers[(x>>16)%anyMomentBreakers]
		var what string
		var err error
		switch {
		case n%64 == 63:
			what = "Counts"
			_, err = cb.Counts()
		case x%5 < 2:
			what = "Acquire"
			var t Ticket
			if t, err = cb.Acquire(); err == nil {
				held = append(held, admitted{cb, t})
			}
		case x%5 < 4 && len(held) == 0:
			what = "State"
			_, err = cb.State()
		case x%5 < 4:
			h := held[len(held)-1]
			held = held[:len(held)-1]
			cb = h.cb
			what = "Done(Success)"
			o := Success
			if (x>>8)%3 == 0 {
				what, o = "Done(Failure)", Failure
			}
			err = cb.Done(h.t, o)
		default:
			what = "Acquire and Done(Ignored)"
			var t Ticket
			if t, err = cb.Acquire(); err == nil {
				err = cb.Done(t, Ignored)
			}
		}
		switch {
		case errors.Is(err, ErrClosed):
			if !r.closing.Load() {
				// It returned before the close began: the close is not why.
				w.bad++
				r.note("%s: %s failed with ErrClosed before the registry's Close began", cb.Name(), what)
			}
		case after:
			w.afterBad++
			r.note("%s: a %s begun after Close returned gave %v, not ErrClosed", cb.Name(), what, err)
		case err != nil && !errors.Is(err, ErrOpenState) && !errors.Is(err, ErrTooManyRequests):
			w.bad++
			r.note("%s: %s gave %v", cb.Name(), what, err)
		}
		if after {
			w.callsAfter.Add(1)
		}
	}
}

// closeAtAnyMoment runs the rounds of every policy; dir is where a shared
// registry's file goes ("": a private registry).
func closeAtAnyMoment(t *testing.T, dir string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(anyMomentGoroutines + 1))
	for _, p := range closeRacePolicies {
		p := p
		t.Run(p.String(), func(t *testing.T) {
			path := ""
			if dir != "" {
				path = filepath.Join(dir, fmt.Sprintf("lb-close-race-go-%d-%v.lbr", os.Getpid(), p))
				t.Cleanup(func() { _ = os.Remove(path) })
			}
			rng := rand.New(rand.NewSource(int64(p)*7919 + int64(len(dir))))
			for n, rounds := 0, anyMomentRoundCount(); n < rounds; n++ {
				closeAtAnyMomentRound(t, p, path, n, rng)
			}
		})
	}
}

func closeAtAnyMomentRound(t *testing.T, p Policy, path string, n int, rng *rand.Rand) {
	o := RegistryOptions{Capacity: 64}
	if n%2 == 1 {
		o.Capacity = 1024
	}
	if path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		o.Path, o.Create = path, true
	}
	reg, err := OpenRegistry(o)
	if err != nil {
		t.Fatalf("round %d: %v", n, err)
	}
	r := &anyMomentRound{gate: make(chan struct{})}
	for i := 0; i < anyMomentBreakers; i++ {
		cb, err := reg.GetOrCreate(closeRaceSettings(fmt.Sprintf("b%d.%d", n, i), p))
		if err != nil {
			t.Fatalf("round %d: %v", n, err)
		}
		r.breakers = append(r.breakers, cb)
	}
	var workers [anyMomentGoroutines]anyMomentWorker
	var running sync.WaitGroup
	for g := range workers {
		running.Add(1)
		go func(w *anyMomentWorker, seed int64) {
			defer running.Done()
			w.run(r, seed)
		}(&workers[g], rng.Int63())
	}
	// The close comes soon after the gate opens, at a moment that moves from
	// round to round: some goroutines have made many calls, some none yet.
	close(r.gate)
	spinFor(time.Duration(rng.Intn(400)) * time.Microsecond)
	r.closing.Store(true)
	closeErr := reg.Close()
	r.closed.Store(true)
	spinFor(300 * time.Microsecond)
	giveUp := time.Now().Add(anyMomentGiveUp)
	for g := range workers {
		for workers[g].callsAfter.Load() < anyMomentCallsAfter && time.Now().Before(giveUp) {
			runtime.Gosched()
		}
	}
	r.stop.Store(true)
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(anyMomentDeadline):
		t.Fatalf("round %d: the goroutines did not stop", n)
	}
	if closeErr != nil {
		t.Fatalf("round %d: Close: %v", n, closeErr)
	}
	for g := range workers {
		w := &workers[g]
		if after := w.callsAfter.Load(); after < anyMomentCallsAfter {
			t.Errorf("round %d, goroutine %d: %d calls after the close", n, g, after)
		}
		if w.bad != 0 || w.afterBad != 0 {
			t.Errorf("round %d, goroutine %d: %d wrong results, %d calls after Close returned that did not fail with ErrClosed: %v",
				n, g, w.bad, w.afterBad, r.wrong)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// A second Close is refused, not a double free.
	if err := reg.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("round %d: a second Close: want ErrClosed, got %v", n, err)
	}
}
