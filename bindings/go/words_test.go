package lazybreaker

// Errors in the binding's words (the option, Go's types), policies that
// follow from the options set, and the configuration read back.

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// mustRefuse checks an *Error matching sentinel, naming option, saying want.
func mustRefuse(t *testing.T, err error, sentinel error, option, want string) {
	t.Helper()
	var e *Error
	if !errors.Is(err, sentinel) || !errors.As(err, &e) || e.Option != option || err.Error() != want {
		t.Fatalf("want %v with Option %q saying %q, got %v", sentinel, option, want, err)
	}
}

func TestRegistryOptionsFailInGosWords(t *testing.T) {
	_, err := OpenRegistry(RegistryOptions{Capacity: 1 << 30})
	mustRefuse(t, err, ErrInvalidArgument, "Capacity", "lazybreaker: OpenRegistry: Capacity must be at most 4194304, got 1073741824")
	_, err = OpenRegistry(RegistryOptions{EventCapacity: 1 << 21})
	mustRefuse(t, err, ErrInvalidArgument, "EventCapacity", "lazybreaker: OpenRegistry: EventCapacity must be at most 1048576, got 2097152")
	path := filepath.Join(t.TempDir(), "r.lbr")
	_, err = OpenRegistry(RegistryOptions{Path: path, Create: true, Mode: fs.FileMode(0o1000)})
	mustRefuse(t, err, ErrInvalidArgument, "Mode", "lazybreaker: OpenRegistry: Mode must be permission bits (0 to 0777), got 01000")
	_, err = OpenRegistry(RegistryOptions{Path: "a\x00b"})
	mustRefuse(t, err, ErrInvalidArgument, "Path", `lazybreaker: OpenRegistry: Path must not hold a NUL byte, got "a\x00b"`)
}

func TestTripsDurationFailsInGosWords(t *testing.T) {
	cb := newBreaker(t, manualRegistry(t), Settings{})
	mustRefuse(t, cb.Trip(time.Nanosecond), ErrInvalidArgument, "Trip's duration",
		"lazybreaker: Trip: the open duration must be from 1µs to 8784h0m0s, got 1ns")
}

func TestGetOrCreateWithAnotherConfigurationNamesTheOptionAndBothValues(t *testing.T) {
	r := manualRegistry(t)
	if _, err := r.GetOrCreate(Settings{Name: "p", Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	_, err := r.GetOrCreate(Settings{Name: "p", Timeout: 20 * time.Second})
	mustRefuse(t, err, ErrNameTaken, "Timeout", `lazybreaker: GetOrCreate: breaker "p" exists with Timeout 10s (these settings: 20s)`)
	_, err = r.GetOrCreate(Settings{Name: "p", Timeout: 10 * time.Second, MaxRequests: 3})
	mustRefuse(t, err, ErrNameTaken, "MaxRequests", `lazybreaker: GetOrCreate: breaker "p" exists with MaxRequests 1 (these settings: 3)`)
	_, err = r.GetOrCreate(Settings{})
	mustRefuse(t, err, ErrInvalidArgument, "Name", "lazybreaker: GetOrCreate: Name is required")
}

func TestAnOptionThePolicyIgnoresIsAnErrorNamingBoth(t *testing.T) {
	r := manualRegistry(t)
	for _, c := range []struct {
		s            Settings
		option, want string
	}{
		{Settings{Policy: PolicyCountWindow, FailureThreshold: 3}, "FailureThreshold",
			"FailureThreshold is ignored by Policy PolicyCountWindow"},
		{Settings{Policy: PolicyCountWindow, WindowDuration: time.Second}, "WindowDuration",
			"WindowDuration is ignored by Policy PolicyCountWindow"},
		{Settings{Policy: PolicyTimeWindow, WindowSize: 10}, "WindowSize",
			"WindowSize is ignored by Policy PolicyTimeWindow"},
		{Settings{FailureThreshold: 3, FailureRateThreshold: 0.5}, "FailureRateThreshold",
			"FailureRateThreshold is ignored by PolicyConsecutive, which FailureThreshold chooses: set Policy, or leave one of them 0"},
		{Settings{FailureThreshold: 3, WindowSize: 10}, "WindowSize",
			"WindowSize is ignored by PolicyConsecutive without SlowCallDuration, which FailureThreshold chooses: set Policy, or leave one of them 0"},
		{Settings{WindowDuration: time.Second, WindowSize: 10}, "WindowDuration",
			"WindowDuration is ignored by PolicyCountWindow, which WindowSize chooses: set Policy, or leave one of them 0"},
	} {
		_, err := r.NewCircuitBreaker(c.s)
		mustRefuse(t, err, ErrInvalidArgument, c.option, "lazybreaker: NewCircuitBreaker: "+c.want)
		_, err = r.GetOrCreate(Settings{Name: "x", Policy: c.s.Policy, FailureThreshold: c.s.FailureThreshold,
			WindowSize: c.s.WindowSize, WindowDuration: c.s.WindowDuration, FailureRateThreshold: c.s.FailureRateThreshold})
		mustRefuse(t, err, ErrInvalidArgument, c.option, "lazybreaker: GetOrCreate: "+c.want)
	}
	// What each policy reads is accepted: consecutive with a slow-call
	// window, and each window with its own options.
	for _, s := range []Settings{
		{FailureThreshold: 3, SlowCallDuration: time.Second, WindowSize: 10, MinimumCalls: 5},
		{Policy: PolicyCountWindow, WindowSize: 10, MinimumCalls: 5, FailureRateThreshold: 0.5},
		{Policy: PolicyTimeWindow, WindowDuration: time.Second, WindowBuckets: 4, MinimumCalls: 5},
	} {
		if _, err := r.NewCircuitBreaker(s); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestThePolicyFollowsFromTheOptionsSet(t *testing.T) {
	r := manualRegistry(t)
	for _, c := range []struct {
		s    Settings
		want Policy
	}{
		{Settings{}, PolicyConsecutive},
		{Settings{FailureThreshold: 3}, PolicyConsecutive},
		{Settings{FailureThreshold: 3, SlowCallDuration: time.Second, WindowSize: 4}, PolicyConsecutive},
		{Settings{FailureRateThreshold: 0.5}, PolicyCountWindow},
		{Settings{MinimumCalls: 4}, PolicyCountWindow},
		{Settings{WindowSize: 10}, PolicyCountWindow},
		{Settings{WindowDuration: time.Second}, PolicyTimeWindow},
		{Settings{WindowBuckets: 4, MinimumCalls: 4}, PolicyTimeWindow},
	} {
		cb, err := r.NewCircuitBreaker(c.s)
		if err != nil {
			t.Fatalf("%+v: %v", c.s, err)
		}
		if got, err := cb.Config(); err != nil || got.Policy != c.want {
			t.Errorf("%+v: want %v, got %v (%v)", c.s, c.want, got.Policy, err)
		}
	}
}

func TestConfigReadsTheBreakersSettingsBack(t *testing.T) {
	r := manualRegistry(t)
	isSuccessful := func(err error) bool { return err == nil }
	want := Settings{Name: "read back", Policy: PolicyCountWindow, WindowSize: 20, MinimumCalls: 10,
		FailureRateThreshold: 0.25, Timeout: 5 * time.Second, MaxRequests: 2, HalfOpenSuccessThreshold: 2,
		SlowCallDuration: time.Second, SlowCallRateThreshold: 0.5, BackoffMultiplier: 2, MaxTimeout: time.Minute,
		Jitter: 0.1, IsSuccessful: isSuccessful}
	cb := newBreaker(t, r, want)
	got, err := cb.Config()
	if err != nil {
		t.Fatal(err)
	}
	if got.IsSuccessful == nil || got.IsExcluded != nil {
		t.Fatal("Config gives the value's classifiers")
	}
	got.IsSuccessful, want.IsSuccessful = nil, nil
	want.HalfOpenTimeout = want.Timeout // 0 reads as the open duration it stands for
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("want %+v,\ngot  %+v", want, got)
	}
	again, err := r.GetOrCreate(got)
	if err != nil || again.h != cb.h {
		t.Fatalf("GetOrCreate with what Config reads finds the breaker: %v", err)
	}
	_ = cb.Close()
	if _, err := cb.Config(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: want ErrClosed, got %v", err)
	}
}

func TestCreationAndFileErrorsSpeakGo(t *testing.T) {
	r := manualRegistry(t)
	newBreaker(t, r, Settings{Name: "taken"})
	_, err := r.NewCircuitBreaker(Settings{Name: "taken"})
	mustRefuse(t, err, ErrNameTaken, "Name", `lazybreaker: NewCircuitBreaker: a breaker named "taken" is in this registry`)
	full, err := OpenRegistry(RegistryOptions{Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	newBreaker(t, full, Settings{})
	_, err = full.NewCircuitBreaker(Settings{})
	mustRefuse(t, err, ErrRegistryFull, "", "lazybreaker: NewCircuitBreaker: the registry holds its Capacity of breakers")

	path := filepath.Join(t.TempDir(), "r.lbr")
	_, err = OpenRegistry(RegistryOptions{Path: path})
	mustRefuse(t, err, fs.ErrNotExist, "Path", `lazybreaker: OpenRegistry: Path "`+path+`": no such file (set Create to create it)`)
	_, err = OpenRegistry(RegistryOptions{Path: path, Exclusive: true})
	mustRefuse(t, err, ErrInvalidArgument, "Exclusive", "lazybreaker: OpenRegistry: Exclusive needs Create")
	_, err = OpenRegistry(RegistryOptions{Path: path, AnyOwner: true})
	mustRefuse(t, err, ErrInvalidArgument, "AnyOwner", "lazybreaker: OpenRegistry: AnyOwner needs Create")
	f, err := OpenRegistry(RegistryOptions{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = OpenRegistry(RegistryOptions{Path: path, Create: true, Exclusive: true})
	mustRefuse(t, err, fs.ErrExist, "Exclusive", `lazybreaker: OpenRegistry: Path "`+path+`": the file exists (Exclusive)`)

	cb := newBreaker(t, r, Settings{})
	_ = cb.Close()
	_, err = cb.State()
	mustRefuse(t, err, ErrClosed, "", "lazybreaker: State: the breaker or its registry is closed")
}
