package lazybreaker

import (
	"context"
	"errors"
	"sync/atomic"
)

// Execute runs req if the breaker admits a call, and reports its outcome:
// the error req returns is classified by Settings.IsExcluded (Ignored),
// then Settings.IsSuccessful (default: nil is a success). A rejected call
// returns a *RejectedError (errors.Is ErrOpenState or ErrTooManyRequests)
// and does not run req. A panic in req reports a failure and goes on
// panicking. As gobreaker's Execute.
func (cb *CircuitBreaker) Execute(req func() (any, error)) (any, error) {
	return Execute(cb, req)
}

// Execute is (*CircuitBreaker).Execute for a request of any result type.
func Execute[T any](cb *CircuitBreaker, req func() (T, error)) (T, error) {
	t, err := cb.admit("Execute")
	if err != nil {
		var zero T
		return zero, err
	}
	reported := false
	defer func() {
		if !reported { // req panicked (or called runtime.Goexit)
			_ = cb.Done(t, Failure)
		}
	}()
	res, err := req()
	o := cb.core.outcome(err)
	reported = true
	_ = cb.Done(t, o)
	return res, err
}

// ExecuteContext is Execute with the caller's context, passed to req. If
// ctx is done before the call, it returns ctx.Err() and asks the breaker
// nothing. If req fails with context.Canceled while ctx itself has been
// canceled, the caller gave up: the outcome is Ignored (neither a success
// nor a failure of the dependency). Any other error, context.DeadlineExceeded
// included, is classified as by Execute.
func (cb *CircuitBreaker) ExecuteContext(ctx context.Context, req func(context.Context) (any, error)) (any, error) {
	return ExecuteContext(ctx, cb, req)
}

// ExecuteContext is (*CircuitBreaker).ExecuteContext for a request of any
// result type.
func ExecuteContext[T any](ctx context.Context, cb *CircuitBreaker, req func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	t, err := cb.admit("ExecuteContext")
	if err != nil {
		return zero, err
	}
	reported := false
	defer func() {
		if !reported {
			_ = cb.Done(t, Failure)
		}
	}()
	res, err := req(ctx)
	var o Outcome
	if err != nil && errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled) {
		o = Ignored
	} else {
		o = cb.core.outcome(err)
	}
	reported = true
	_ = cb.Done(t, o)
	return res, err
}

// Allow is the two-step form, as gobreaker's TwoStepCircuitBreaker: if the
// breaker admits a call, make it and call done with its result (true:
// success, false: failure). Only done's first call reports; later calls,
// from any goroutine, do nothing (as a context.CancelFunc's), so
// "defer done(false)" reports a failure only if nothing else reported. A
// rejected call returns a *RejectedError and a nil done. The done function
// costs two small allocations (the closure and its once-flag); Acquire and
// Done cost none, and their tickets are the caller's to report once.
func (cb *CircuitBreaker) Allow() (done func(success bool), err error) {
	t, err := cb.admit("Allow")
	if err != nil {
		return nil, err
	}
	var reported atomic.Bool
	return func(success bool) {
		if reported.Swap(true) {
			return
		}
		o := Failure
		if success {
			o = Success
		}
		_ = cb.Done(t, o)
	}, nil
}
