package lazybreaker

// Shared registries through the Go API: the options pass through to
// cb_registry_open, GetOrCreate's breakers are shared (Close destroys
// nothing), and a second OS process (this test binary, run again) sees a
// breaker this one tripped. The file's own behaviour is pinned in
// tests/capi/test_shared.cpp.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

var oneFailureTrips = Settings{Name: "payments", FailureThreshold: 1, Timeout: 5 * time.Minute}

func openShared(t *testing.T, o RegistryOptions) *Registry {
	t.Helper()
	o.ManualClock = true
	r, err := OpenRegistry(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func getOrCreate(t *testing.T, r *Registry, s Settings) *CircuitBreaker {
	t.Helper()
	cb, err := r.GetOrCreate(s)
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

func TestABreakerTrippedThroughOneRegistryValueIsOpenThroughASecondOnTheSameFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "breakers.lbr")
	first := openShared(t, RegistryOptions{Path: path, Create: true})
	second := openShared(t, RegistryOptions{Path: path})
	fail(getOrCreate(t, first, oneFailureTrips), 1)

	seen := getOrCreate(t, second, oneFailureTrips)
	mustState(t, seen, StateOpen)
	if _, err := seen.Acquire(); !errors.Is(err, ErrOpenState) {
		t.Fatalf("the second registry's breaker: want ErrOpenState, got %v", err)
	}
}

func TestClosingASharedBreakerLeavesItInTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept.lbr")
	r := openShared(t, RegistryOptions{Path: path, Create: true})
	cb := getOrCreate(t, r, oneFailureTrips)
	if err := cb.Trip(time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := cb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("a second Close: want ErrClosed, got %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	again := openShared(t, RegistryOptions{Path: path})
	found, err := again.Lookup("payments")
	if err != nil {
		t.Fatalf("the shared breaker is gone after Close: %v", err)
	}
	mustState(t, found, StateOpen)
	// What Lookup finds in a shared registry is other processes' too: its
	// Close destroys nothing either.
	if err := found.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Lookup("payments"); err != nil {
		t.Fatalf("Close of a looked-up shared breaker destroyed it: %v", err)
	}
}

func TestAMissingFileWithoutCreateIsNotFoundAndFsErrNotExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.lbr")
	_, err := OpenRegistry(RegistryOptions{Path: path})
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("want ErrNotFound and fs.ErrNotExist, got %v", err)
	}
	if !strings.Contains(err.Error(), "missing.lbr") {
		t.Fatalf("the message does not name the file: %v", err)
	}
	if _, statErr := os.Stat(path); !errors.Is(statErr, fs.ErrNotExist) {
		t.Fatalf("the failed open created the file: %v", statErr)
	}
}

func TestAnExistingFileWithCreateExclusiveIsFsErrExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "taken.lbr")
	openShared(t, RegistryOptions{Path: path, Create: true})
	_, err := OpenRegistry(RegistryOptions{Path: path, Create: true, Exclusive: true, ManualClock: true})
	if !errors.Is(err, ErrNameTaken) || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("want ErrNameTaken and fs.ErrExist, got %v", err)
	}
}

func TestACreateRefusesAFileOthersMayWriteUnlessAnyOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writable.lbr")
	openShared(t, RegistryOptions{Path: path, Create: true, Mode: 0o666})
	_, err := OpenRegistry(RegistryOptions{Path: path, Create: true, ManualClock: true})
	if !errors.Is(err, ErrPermission) || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("want ErrPermission and fs.ErrPermission, got %v", err)
	}
	if !strings.Contains(err.Error(), "mode 0666") {
		t.Fatalf("the message does not name the mode: %v", err)
	}
	r := openShared(t, RegistryOptions{Path: path, Create: true, AnyOwner: true})
	getOrCreate(t, r, oneFailureTrips)
	if _, err := OpenRegistry(RegistryOptions{Path: path, AnyOwner: true, ManualClock: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("AnyOwner without Create: want ErrInvalidArgument, got %v", err)
	}
}

func TestAFileLockedByAnotherProcessIsErrBusy(t *testing.T) {
	// The 5 s wait itself is pinned once, in tests/shared/test_trust.cpp.
	if statusEBusy != lbswig.CB_EBUSY {
		t.Fatalf("statusEBusy is %d, the header's CB_EBUSY %d", statusEBusy, lbswig.CB_EBUSY)
	}
	err := newError(openRegistryOp, lbswig.CB_EBUSY, "f: a process holds the registry file's lock")
	if !errors.Is(err, ErrBusy) || errors.Is(err, ErrIO) {
		t.Fatalf("want ErrBusy (and not ErrIO), got %v", err)
	}
}

func TestGetOrCreateWithAnotherConfigurationIsNameTaken(t *testing.T) {
	r := openShared(t, RegistryOptions{Path: filepath.Join(t.TempDir(), "cfg.lbr"), Create: true})
	getOrCreate(t, r, oneFailureTrips)
	other := oneFailureTrips
	other.FailureThreshold = 7
	if _, err := r.GetOrCreate(other); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("another configuration: want ErrNameTaken, got %v", err)
	}
	getOrCreate(t, r, oneFailureTrips) // the same one again is no error
}

func TestAFileThatIsNoRegistryIsErrVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a registry\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegistry(RegistryOptions{Path: path}); !errors.Is(err, ErrVersion) {
		t.Fatalf("want ErrVersion, got %v", err)
	}
}

func TestModeGivesTheCreatedFileItsPermissionBits(t *testing.T) {
	dir := t.TempDir()
	group := filepath.Join(dir, "group.lbr")
	openShared(t, RegistryOptions{Path: group, Create: true, Mode: 0o640})
	private := filepath.Join(dir, "private.lbr")
	openShared(t, RegistryOptions{Path: private, Create: true})
	for path, want := range map[string]fs.FileMode{group: 0o640, private: 0o600} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: want mode %v, got %v", filepath.Base(path), want, got)
		}
	}
}

// The child's side of the cross-process test: it runs only when the
// parent sets LAZYBREAKER_SHARED_CHILD to the file, as a second OS process.
func TestSharedRegistryChildProcess(t *testing.T) {
	path := os.Getenv("LAZYBREAKER_SHARED_CHILD")
	if path == "" {
		t.Skip("run by TestASecondProcessSeesTheBreakerThisOneTripped")
	}
	r := openShared(t, RegistryOptions{Path: path})
	cb := getOrCreate(t, r, oneFailureTrips)
	mustState(t, cb, StateOpen)
	if _, err := cb.Acquire(); !errors.Is(err, ErrOpenState) {
		t.Fatalf("the child: want ErrOpenState, got %v", err)
	}
	if err := cb.Reset(); err != nil { // the parent sees this
		t.Fatal(err)
	}
}

func TestASecondProcessSeesTheBreakerThisOneTripped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two-processes.lbr")
	r := openShared(t, RegistryOptions{Path: path, Create: true})
	cb := getOrCreate(t, r, oneFailureTrips)
	fail(cb, 1)
	mustState(t, cb, StateOpen)

	child := exec.Command(os.Args[0], "-test.run=^TestSharedRegistryChildProcess$", "-test.v")
	child.Env = append(os.Environ(), "LAZYBREAKER_SHARED_CHILD="+path)
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSharedRegistryChildProcess") {
		t.Fatalf("the child process: %v\n%s", err, out)
	}
	mustState(t, cb, StateClosed) // the child's Reset
}

// The Go half of tests/cross_language, run by its check.sh as its own
// process: the registry file a C program made and tripped "payments" in is
// opened here, "payments" is open and rejects, and "tripped-by-go" is
// tripped for the C program to see. The settings equal the C program's
// configuration field for field, or GetOrCreate would refuse them.
func TestCrossLanguageChecker(t *testing.T) {
	path, language := os.Getenv("LB_CROSS_LANGUAGE_FILE"), os.Getenv("LB_CROSS_LANGUAGE")
	if path == "" || language == "" {
		t.Skip("run by tests/cross_language/check.sh")
	}
	r := openShared(t, RegistryOptions{Path: path})
	settings := Settings{Name: "payments", FailureThreshold: 1, Timeout: 300 * time.Second}
	payments := getOrCreate(t, r, settings)
	mustState(t, payments, StateOpen)
	_, err := payments.Execute(func() (any, error) { return "never", nil })
	var rejected *RejectedError
	if !errors.As(err, &rejected) || !errors.Is(err, ErrOpenState) {
		t.Fatalf("payments: want a rejection (ErrOpenState), got %v", err)
	}
	t.Logf("%s: payments rejects, retry after %v", language, rejected.RetryAfter())
	settings.Name = "tripped-by-" + language
	mine := getOrCreate(t, r, settings)
	fail(mine, 1)
	mustState(t, mine, StateOpen)
}
