package lazybreaker_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
)

func Example() {
	reg, _ := lazybreaker.NewManualClockRegistry() // deterministic: the clock moves by Advance only
	defer reg.Close()
	cb, _ := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "payments", FailureThreshold: 2, Timeout: 10 * time.Second})

	charge := func() (string, error) { return "", errors.New("503") }
	for i := 0; i < 3; i++ {
		_, err := lazybreaker.Execute(cb, charge)
		var rejected *lazybreaker.RejectedError
		if errors.As(err, &rejected) {
			fmt.Println("fail fast, retry after", rejected.RetryAfter())
		} else {
			fmt.Println("called:", err)
		}
	}
	reg.Advance(10 * time.Second)
	receipt, err := lazybreaker.Execute(cb, func() (string, error) { return "receipt 42", nil })
	state, _ := cb.State()
	fmt.Println(receipt, err, state)
	// Output:
	// called: 503
	// called: 503
	// fail fast, retry after 10s
	// receipt 42 <nil> closed
}

func ExampleCircuitBreaker_Acquire() {
	reg, _ := lazybreaker.NewManualClockRegistry()
	defer reg.Close()
	cb, _ := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "proxy/upstream"})

	ticket, err := cb.Acquire() // no allocation, admitted or rejected
	if err != nil {
		fmt.Println("rejected:", err) // ErrOpenState or ErrTooManyRequests; cb.RetryAfter() gives the wait
		return
	}
	status := 200 // forward the request ...
	outcome := lazybreaker.Success
	if status >= 500 {
		outcome = lazybreaker.Failure
	}
	cb.Done(ticket, outcome)
	counts, _ := cb.Counts()
	fmt.Println(counts.Requests, counts.TotalSuccesses)
	// Output: 1 1
}

func ExampleRegistry_PollEvents() {
	reg, _ := lazybreaker.NewManualClockRegistry()
	defer reg.Close()
	cb, _ := reg.NewCircuitBreaker(lazybreaker.Settings{Name: "search"})
	cb.Trip(20 * time.Second) // e.g. "429 Too Many Requests, Retry-After: 20"
	cb.Reset()
	events, _ := reg.PollEvents(10)
	for _, e := range events {
		fmt.Println(e.Breaker, e.From, "->", e.To, "by", e.Reason)
	}
	// Output:
	// search closed -> open by tripped
	// search open -> closed by manual
}

// Two registries on one file, as two processes (a service and its sidecar,
// two workers of a pool) would open it: a trip through one is seen at once
// through the other.
func ExampleRegistry_GetOrCreate() {
	dir, _ := os.MkdirTemp("", "lazybreaker-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "checkout.lbr") // in production e.g. /dev/shm/checkout.lbr

	service, err := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Path: path, Create: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer service.Close()
	sidecar, _ := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Path: path})
	defer sidecar.Close()

	settings := lazybreaker.Settings{Name: "payments", FailureThreshold: 1, Timeout: time.Minute}
	here, _ := service.GetOrCreate(settings)
	there, _ := sidecar.GetOrCreate(settings) // the same breaker
	_, _ = here.Execute(func() (any, error) { return nil, errors.New("503") })

	_, err = there.Execute(func() (any, error) { return "never called", nil })
	fmt.Println(errors.Is(err, lazybreaker.ErrOpenState))
	// Output: true
}
