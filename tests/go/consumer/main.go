// The Go quick start of README.md and docs/go.md, as a user's program: it
// builds against the binding through pkg-config and runs.
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
)

func main() {
	cb, err := lazybreaker.NewCircuitBreaker(lazybreaker.Settings{Name: "consumer/payments", FailureThreshold: 2, Timeout: time.Minute})
	if err != nil {
		fail(err)
	}
	defer cb.Close()
	charge := func() (string, error) { return "", errors.New("503 from payments") }
	for i := 0; i < 3; i++ {
		_, err = lazybreaker.Execute(cb, charge)
	}
	var rejected *lazybreaker.RejectedError
	if !errors.Is(err, lazybreaker.ErrOpenState) || !errors.As(err, &rejected) || rejected.RetryAfter() <= 0 {
		fail(fmt.Errorf("the third call should fail fast, got %v", err))
	}
	fmt.Printf("consumer: %v\n", err)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "consumer:", err)
	os.Exit(1)
}
