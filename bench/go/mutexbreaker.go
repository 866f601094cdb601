// Package gobench benchmarks the Go binding against its floor and a
// baseline (bench_test.go; `make bench` prints the table).
package gobench

import (
	"errors"
	"sync"
	"time"
)

// mutexBreaker is the baseline: a consecutive-failures breaker written as
// gobreaker v2 writes its CircuitBreaker, one sync.Mutex around the state, a
// generation and the counts, and time.Now() read under it on every call,
// before and after the request. Lazy recovery as gobreaker's: OPEN becomes
// HALF_OPEN when a call finds the expiry passed.
type mutexBreaker struct {
	maxRequests uint32
	threshold   uint32
	timeout     time.Duration
	// ratio: trip on the failure ratio of the generation's requests, as a
	// gobreaker ReadyToTrip of counts.TotalFailures / counts.Requests, once
	// threshold requests were made (the count window's baseline); else on
	// threshold consecutive failures.
	ratio float64

	mu         sync.Mutex
	state      int
	generation uint64
	counts     mutexCounts
	expiry     time.Time
}

type mutexCounts struct {
	Requests             uint32
	TotalSuccesses       uint32
	TotalFailures        uint32
	ConsecutiveSuccesses uint32
	ConsecutiveFailures  uint32
}

const (
	mutexClosed = iota
	mutexHalfOpen
	mutexOpen
)

var (
	errMutexOpen       = errors.New("circuit breaker is open")
	errMutexTooManyReq = errors.New("too many requests")
)

func newMutexBreaker(threshold uint32, timeout time.Duration) *mutexBreaker {
	cb := &mutexBreaker{maxRequests: 1, threshold: threshold, timeout: timeout}
	cb.toNewGeneration(time.Now())
	return cb
}

// Execute runs req if admitted, as gobreaker's (a panic reports a failure
// and panics on).
func (cb *mutexBreaker) Execute(req func() (any, error)) (any, error) {
	generation, err := cb.beforeRequest()
	if err != nil {
		return nil, err
	}
	defer func() {
		if e := recover(); e != nil {
			cb.afterRequest(generation, false)
			panic(e)
		}
	}()
	result, err := req()
	cb.afterRequest(generation, err == nil)
	return result, err
}

// Allow is gobreaker's TwoStepCircuitBreaker.Allow.
func (cb *mutexBreaker) Allow() (done func(success bool), err error) {
	generation, err := cb.beforeRequest()
	if err != nil {
		return nil, err
	}
	return func(success bool) { cb.afterRequest(generation, success) }, nil
}

func (cb *mutexBreaker) beforeRequest() (uint64, error) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	now := time.Now()
	state, generation := cb.currentState(now)
	if state == mutexOpen {
		return generation, errMutexOpen
	} else if state == mutexHalfOpen && cb.counts.Requests >= cb.maxRequests {
		return generation, errMutexTooManyReq
	}
	cb.counts.Requests++
	return generation, nil
}

func (cb *mutexBreaker) afterRequest(before uint64, success bool) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	now := time.Now()
	state, generation := cb.currentState(now)
	if generation != before {
		return
	}
	if success {
		cb.onSuccess(state, now)
	} else {
		cb.onFailure(state, now)
	}
}

func (cb *mutexBreaker) onSuccess(state int, now time.Time) {
	cb.counts.TotalSuccesses++
	cb.counts.ConsecutiveSuccesses++
	cb.counts.ConsecutiveFailures = 0
	if state == mutexHalfOpen && cb.counts.ConsecutiveSuccesses >= cb.maxRequests {
		cb.setState(mutexClosed, now)
	}
}

func (cb *mutexBreaker) onFailure(state int, now time.Time) {
	cb.counts.TotalFailures++
	cb.counts.ConsecutiveFailures++
	cb.counts.ConsecutiveSuccesses = 0
	switch state {
	case mutexClosed:
		if cb.readyToTrip() {
			cb.setState(mutexOpen, now)
		}
	case mutexHalfOpen:
		cb.setState(mutexOpen, now)
	}
}

func (cb *mutexBreaker) readyToTrip() bool {
	if cb.ratio == 0 {
		return cb.counts.ConsecutiveFailures >= cb.threshold
	}
	return cb.counts.Requests >= cb.threshold && float64(cb.counts.TotalFailures)/float64(cb.counts.Requests) >= cb.ratio
}

func (cb *mutexBreaker) currentState(now time.Time) (int, uint64) {
	switch cb.state {
	case mutexClosed:
		if !cb.expiry.IsZero() && cb.expiry.Before(now) {
			cb.toNewGeneration(now)
		}
	case mutexOpen:
		if cb.expiry.Before(now) {
			cb.setState(mutexHalfOpen, now)
		}
	}
	return cb.state, cb.generation
}

func (cb *mutexBreaker) setState(state int, now time.Time) {
	if cb.state == state {
		return
	}
	cb.state = state
	cb.toNewGeneration(now)
}

func (cb *mutexBreaker) toNewGeneration(now time.Time) {
	cb.generation++
	cb.counts = mutexCounts{}
	var zero time.Time
	switch cb.state {
	case mutexClosed:
		cb.expiry = zero // no Interval: counts are cleared only by transitions
	case mutexOpen:
		cb.expiry = now.Add(cb.timeout)
	default:
		cb.expiry = zero
	}
}
