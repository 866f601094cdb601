// Package lazybreaker is a circuit breaker in the shape of gobreaker, over
// the lazybreaker C library: the state machine is the library's (lock-free,
// lazy recovery: no goroutine, no timer), reached through cgo.
//
//	cb, err := lazybreaker.NewCircuitBreaker(lazybreaker.Settings{Name: "payments"})
//	if err != nil { ... }
//	body, err := lazybreaker.Execute(cb, func() ([]byte, error) { return fetch(url) })
//	if errors.Is(err, lazybreaker.ErrOpenState) { ... } // fail fast
//
// The forms of a call, from the simplest to the cheapest: Execute and
// ExecuteContext (run a function), Allow (gobreaker's two-step form), and
// Acquire with Done (no allocation: the request path of a proxy). Breakers
// live in a Registry: the process's default one, or a private one from
// OpenRegistry, whose manual clock (NewManualClockRegistry, Advance) makes
// tests deterministic. Transitions are events to poll (PollEvents), the
// counters a Prometheus text (Prometheus).
//
// Build: the package finds the library through pkg-config (`#cgo
// pkg-config: lazybreaker`): install liblazybreaker-dev, or point
// PKG_CONFIG_PATH at a lazybreaker.pc. See docs/go.md.
package lazybreaker
