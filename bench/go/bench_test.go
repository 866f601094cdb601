package gobench

// go test -bench . -benchmem -cpu 1,2: serial and b.RunParallel, at
// GOMAXPROCS 1 and 2, in CLOSED and OPEN. cmd/benchtable runs it with
// -count 10 and prints the medians (`make bench`).

import (
	"sync/atomic"
	"testing"
	"time"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
)

// run runs the benchmarked form of one call, serially or in parallel. Each
// goroutine keeps the calls' errors to itself (a shared sink would be a
// contended cache line) and publishes the last one once, so the compiler
// cannot drop the calls.
func run(b *testing.B, parallel bool, call func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		var last error
		for i := 0; i < b.N; i++ {
			last = call()
		}
		sink.Store(errBox{last})
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		var last error
		for pb.Next() {
			last = call()
		}
		sink.Store(errBox{last})
	})
}

type errBox struct{ error }

var sink atomic.Value

var modes = []struct {
	name     string
	parallel bool
}{{"serial", false}, {"parallel", true}}

// ours gives a breaker of a private registry (monotonic clock), CLOSED or
// tripped OPEN for an hour.
func ours(b *testing.B, open bool) *lazybreaker.CircuitBreaker {
	reg, err := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Capacity: 16})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = reg.Close() })
	cb, err := reg.NewCircuitBreaker(lazybreaker.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	if open {
		if err := cb.Trip(time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	return cb
}

func baseline(open bool) *mutexBreaker {
	cb := newMutexBreaker(5, time.Hour)
	if open {
		for i := 0; i < 5; i++ {
			generation, _ := cb.beforeRequest()
			cb.afterRequest(generation, false)
		}
	}
	return cb
}

// each runs f for CLOSED and OPEN, serial and parallel.
func each(b *testing.B, f func(b *testing.B, open, parallel bool)) {
	for _, state := range []string{"closed", "open"} {
		for _, m := range modes {
			open, parallel := state == "open", m.parallel
			b.Run(state+"/"+m.name, func(b *testing.B) { f(b, open, parallel) })
		}
	}
}

func nothing() (any, error) { return nil, nil }

// The floor: an empty cgo pair, crossing as Acquire and Done cross.
func BenchmarkFloor(b *testing.B) {
	for _, m := range modes {
		parallel := m.parallel
		b.Run(m.name, func(b *testing.B) {
			run(b, parallel, func() error {
				t, _ := floorAcquire(1)
				floorDone(1, t)
				return nil
			})
		})
	}
}

func BenchmarkAcquireDone(b *testing.B) {
	each(b, func(b *testing.B, open, parallel bool) {
		cb := ours(b, open)
		run(b, parallel, func() error {
			t, err := cb.Acquire()
			if err == nil {
				return cb.Done(t, lazybreaker.Success)
			}
			return err
		})
	})
}

func BenchmarkAllowDone(b *testing.B) {
	each(b, func(b *testing.B, open, parallel bool) {
		cb := ours(b, open)
		run(b, parallel, func() error {
			done, err := cb.Allow()
			if err == nil {
				done(true)
			}
			return err
		})
	})
}

func BenchmarkExecute(b *testing.B) {
	each(b, func(b *testing.B, open, parallel bool) {
		cb := ours(b, open)
		run(b, parallel, func() error { _, err := cb.Execute(nothing); return err })
	})
}

// The baseline's cheapest form: before and after the request, no closure.
func BenchmarkMutexAcquireDone(b *testing.B) {
	each(b, func(b *testing.B, open, parallel bool) {
		cb := baseline(open)
		run(b, parallel, func() error {
			generation, err := cb.beforeRequest()
			if err == nil {
				cb.afterRequest(generation, true)
			}
			return err
		})
	})
}

func BenchmarkMutexAllowDone(b *testing.B) {
	each(b, func(b *testing.B, open, parallel bool) {
		cb := baseline(open)
		run(b, parallel, func() error {
			done, err := cb.Allow()
			if err == nil {
				done(true)
			}
			return err
		})
	})
}

func BenchmarkMutexExecute(b *testing.B) {
	each(b, func(b *testing.B, open, parallel bool) {
		cb := baseline(open)
		run(b, parallel, func() error { _, err := cb.Execute(nothing); return err })
	})
}

// What the contenders are made of, to read the table by: one time.Now()
// (the baseline reads two per call) and one empty cgo crossing (ours make
// two).
func BenchmarkParts(b *testing.B) {
	b.Run("time_now", func(b *testing.B) {
		run(b, false, func() error {
			if time.Now().IsZero() {
				return errBox{}
			}
			return nil
		})
	})
	b.Run("cgo_crossing", func(b *testing.B) {
		run(b, false, func() error { floorDone(1, 0); return nil })
	})
}

// A pure-Go loop, serial and parallel: at GOMAXPROCS 2 the parallel one
// takes half the time per iteration only if the machine has a second core
// free. If it does not, no parallel figure of this run means anything.
func BenchmarkSpin(b *testing.B) {
	for _, m := range modes {
		parallel := m.parallel
		b.Run(m.name, func(b *testing.B) {
			run(b, parallel, func() error {
				x := 1
				for j := 0; j < 64; j++ {
					x = x*31 + j
				}
				if x == 0 {
					return errBox{}
				}
				return nil
			})
		})
	}
}

// The count window, two-step, CLOSED: ours with the default window of 100
// outcomes against the baseline tripping on the failure ratio of its
// counts (a gobreaker ReadyToTrip over counts.TotalFailures/Requests).
func BenchmarkWindowAcquireDone(b *testing.B) {
	for _, m := range modes {
		parallel := m.parallel
		b.Run(m.name, func(b *testing.B) {
			cb := windowBreaker(b)
			run(b, parallel, func() error {
				t, err := cb.Acquire()
				if err == nil {
					return cb.Done(t, lazybreaker.Success)
				}
				return err
			})
		})
	}
}

func BenchmarkWindowExecute(b *testing.B) {
	for _, m := range modes {
		parallel := m.parallel
		b.Run(m.name, func(b *testing.B) {
			cb := windowBreaker(b)
			run(b, parallel, func() error { _, err := cb.Execute(nothing); return err })
		})
	}
}

func BenchmarkMutexRatioExecute(b *testing.B) {
	for _, m := range modes {
		parallel := m.parallel
		b.Run(m.name, func(b *testing.B) {
			cb := newMutexBreaker(100, time.Hour)
			cb.ratio = 0.5
			run(b, parallel, func() error { _, err := cb.Execute(nothing); return err })
		})
	}
}

func windowBreaker(b *testing.B) *lazybreaker.CircuitBreaker {
	reg, err := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Capacity: 16})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = reg.Close() })
	cb, err := reg.NewCircuitBreaker(lazybreaker.Settings{Policy: lazybreaker.PolicyCountWindow, WindowSize: 100})
	if err != nil {
		b.Fatal(err)
	}
	return cb
}
