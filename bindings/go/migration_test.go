package lazybreaker

// The rows of docs/go.md's "For users of gobreaker" table that no other
// test pins: each test is named in the table's last column.

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestMigrationNewCircuitBreakerReturnsAnError(t *testing.T) {
	r := manualRegistry(t)
	// gobreaker's NewCircuitBreaker never fails (a bad Timeout becomes 60 s);
	// this one says what is wrong and creates nothing.
	cb, err := r.NewCircuitBreaker(Settings{Timeout: -time.Second})
	if cb != nil || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("want nil and ErrInvalidArgument, got %v, %v", cb, err)
	}
	cb, err = r.NewCircuitBreaker(Settings{})
	if cb == nil || err != nil {
		t.Fatalf("want a breaker, got %v, %v", cb, err)
	}
}

func TestMigrationNamesAreUniqueInTheirRegistry(t *testing.T) {
	r := manualRegistry(t)
	newBreaker(t, r, Settings{Name: "payments"})
	if _, err := r.NewCircuitBreaker(Settings{Name: "payments"}); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("a second breaker of one name: want ErrNameTaken, got %v", err)
	}
	newBreaker(t, r, Settings{}) // "" is anonymous: any number of them
	newBreaker(t, r, Settings{})
}

func TestMigrationMaxRequestsIsProbesAtOnceNotTheSuccessesThatClose(t *testing.T) {
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{FailureThreshold: 1, Timeout: time.Second, MaxRequests: 3})
	fail(cb, 1)
	_ = r.Advance(time.Second)
	var tickets []Ticket
	for i := 0; i < 3; i++ {
		ticket, err := cb.Acquire()
		if err != nil {
			t.Fatalf("probe %d of MaxRequests 3: %v", i+1, err)
		}
		tickets = append(tickets, ticket)
	}
	if _, err := cb.Acquire(); err != ErrTooManyRequests {
		t.Fatalf("a fourth probe: want ErrTooManyRequests, got %v", err)
	}
	// gobreaker would wait for 3 successes; HalfOpenSuccessThreshold (1) closes.
	_ = cb.Done(tickets[0], Success)
	mustState(t, cb, StateClosed)
}

func TestMigrationSettingsHaveNoIntervalAndCountsAreNeverCleared(t *testing.T) {
	if _, ok := reflect.TypeOf(Settings{}).FieldByName("Interval"); ok {
		t.Fatal("Settings has an Interval")
	}
	for _, f := range []string{"Requests", "TotalSuccesses", "TotalFailures", "ConsecutiveFailures"} {
		if _, ok := reflect.TypeOf(Counts{}).FieldByName(f); !ok {
			t.Fatalf("Counts has no %s", f)
		}
	}
	if _, ok := reflect.TypeOf(Counts{}).FieldByName("ConsecutiveSuccesses"); ok {
		t.Fatal("Counts has a ConsecutiveSuccesses")
	}
	r := manualRegistry(t)
	cb := newBreaker(t, r, Settings{FailureThreshold: 2, Timeout: time.Second})
	fail(cb, 2)
	_ = r.Advance(time.Hour)
	_, _ = cb.Execute(func() (any, error) { return nil, nil })
	mustState(t, cb, StateClosed)
	// gobreaker clears its counts at each transition; these are since creation.
	if c := mustCounts(t, cb); c.Requests != 3 || c.TotalFailures != 2 || c.TotalSuccesses != 1 || c.Trips != 1 {
		t.Fatalf("want 3 requests, 2 failures, 1 success, 1 trip; got %+v", c)
	}
}

func TestMigrationARateReadyToTripIsACountWindow(t *testing.T) {
	// ReadyToTrip: 10 requests and a failure ratio of at least 0.5. Never two
	// failures in a row, so a consecutive breaker (what these settings gave
	// before 1.3) would never trip.
	cb := newBreaker(t, manualRegistry(t), Settings{FailureRateThreshold: 0.5, WindowSize: 10, MinimumCalls: 10})
	for i := 0; i < 9; i++ {
		if i%2 == 0 {
			_, _ = cb.Execute(func() (any, error) { return nil, nil })
		} else {
			fail(cb, 1)
		}
	}
	mustState(t, cb, StateClosed) // 4 failures of 9 calls
	fail(cb, 1)
	mustState(t, cb, StateOpen) // 5 of 10
}

func TestMigrationRejectionsAreMatchedWithErrorsIs(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{})
	_ = cb.ForceOpen()
	_, err := cb.Execute(func() (any, error) { return nil, nil })
	if err == ErrOpenState || !errors.Is(err, ErrOpenState) {
		t.Fatalf("Execute: want a *RejectedError that errors.Is matches, got %v", err)
	}
	if _, err := cb.Acquire(); err != ErrOpenState {
		t.Fatalf("Acquire: want the bare sentinel, got %v", err)
	}
}

func TestMigrationStatesAreTheLibrarysValuesAndNames(t *testing.T) {
	// gobreaker: StateClosed 0, StateHalfOpen 1, StateOpen 2, "half-open".
	got := []any{int(StateClosed), int(StateOpen), int(StateHalfOpen), int(StateForcedOpen), int(StateDisabled),
		StateHalfOpen.String(), StateForcedOpen.String()}
	want := []any{0, 1, 2, 3, 4, "half_open", "forced_open"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("want %v, got %v", want, got)
	}
}
