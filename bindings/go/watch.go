package lazybreaker

import (
	"context"
	"fmt"
	"time"
)

// WatchEvents drains the registry's event queue every `every` and calls fn
// with each event, oldest first, until ctx is done (it returns ctx.Err())
// or the registry closes (ErrClosed). It is gobreaker's OnStateChange, in a
// goroutine the caller starts:
//
//	go reg.WatchEvents(ctx, time.Second, func(e lazybreaker.Event) { log.Print(e) })
//
// fn runs on that goroutine, outside any lock of the library or of this
// package, so it may call any breaker (gobreaker's #37 deadlock cannot
// happen). The queue holds this process's transitions: another process's
// trip of a shared breaker is not an event here (docs/shared-registries.md).
func (r *Registry) WatchEvents(ctx context.Context, every time.Duration, fn func(Event)) error {
	if every <= 0 {
		return newError("WatchEvents", statusEInval, fmt.Sprintf("every must be positive, got %v", every))
	}
	if fn == nil {
		return newError("WatchEvents", statusEInval, "fn must not be nil")
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		if err := r.drainEvents(fn); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			_ = r.drainEvents(fn)
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

func (r *Registry) drainEvents(fn func(Event)) error {
	const batch = 256
	for {
		events, err := r.PollEvents(batch)
		if err != nil {
			return err
		}
		for _, e := range events {
			fn(e)
		}
		if len(events) < batch {
			return nil
		}
	}
}
