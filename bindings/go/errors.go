package lazybreaker

// #include <lazybreaker/lazybreaker.h>
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rejections. A breaker that fails a call fast returns one of these, bare
// from Acquire, or wrapped in the breaker's *RejectedError (whose RetryAfter
// reads the wait) from Allow, Execute and ExecuteContext, allocating nothing: test them
// with errors.Is.
var (
	// ErrOpenState: the breaker is OPEN (or FORCED_OPEN). As gobreaker's.
	ErrOpenState = errors.New("lazybreaker: circuit breaker is open")
	// ErrTooManyRequests: the breaker is HALF_OPEN and every probe slot
	// (Settings.MaxRequests) is taken. As gobreaker's.
	ErrTooManyRequests = errors.New("lazybreaker: too many requests")
)

// Errors: every negative status of the C library has its sentinel, and
// every error this package returns for one is an *Error that errors.Is
// matches against it.
var (
	// ErrClosed: the breaker or its registry was closed (CB_EHANDLE: the
	// handle is stale), or the Go value was.
	ErrClosed = errors.New("lazybreaker: closed")
	// ErrInvalidArgument: a bad setting, name or argument (CB_EINVAL); the
	// *Error's Option names the setting and Error() says what it must be.
	ErrInvalidArgument = errors.New("lazybreaker: invalid argument")
	// ErrNoMemory: memory or address space ran out (CB_ENOMEM).
	ErrNoMemory = errors.New("lazybreaker: out of memory")
	// ErrNameTaken: a breaker of that name is in the registry, or, from
	// GetOrCreate, has another configuration (CB_EEXIST). From OpenRegistry
	// with Exclusive: the registry file exists (then fs.ErrExist matches too).
	ErrNameTaken = errors.New("lazybreaker: name taken")
	// ErrNotFound: no breaker has that name (CB_ENOENT). From OpenRegistry:
	// the registry file is missing and not to be created (then
	// fs.ErrNotExist matches too).
	ErrNotFound = errors.New("lazybreaker: not found")
	// ErrRegistryFull: the registry holds its capacity (CB_EFULL).
	ErrRegistryFull = errors.New("lazybreaker: registry full")
	// ErrCorrupt, ErrVersion, ErrIO, ErrPermission: shared registry files
	// (CB_ECORRUPT: a header or size that is wrong; CB_EVERSION: another
	// layout, or not a registry file; CB_EIO; CB_EPERM: a file the process
	// may not open or create, which fs.ErrPermission matches too).
	ErrCorrupt    = errors.New("lazybreaker: corrupt registry file")
	ErrVersion    = errors.New("lazybreaker: registry file of another layout")
	ErrIO         = errors.New("lazybreaker: I/O error")
	ErrPermission = errors.New("lazybreaker: permission denied")
	// ErrState: the call does not apply in the breaker's state (CB_ESTATE).
	ErrState = errors.New("lazybreaker: not in this state")
	// ErrRange: a buffer was too small (CB_ERANGE); the package retries, so
	// seeing it is a bug.
	ErrRange = errors.New("lazybreaker: buffer too small")
	// ErrInternal: a bug in lazybreaker (CB_EINTERNAL): please report it.
	ErrInternal = errors.New("lazybreaker: internal error")
	// ErrBusy: another process held the registry file's lock for 5 s, and
	// OpenRegistry gave up rather than wait on (CB_EBUSY); it may be retried.
	ErrBusy = errors.New("lazybreaker: a process holds the registry file's lock")
)

// Statuses of the C ABI, as cgo reads them from lazybreaker.h: compile-time
// constants, never re-typed here.
const (
	statusOK        = C.CB_OK
	statusRejected  = C.CB_REJECTED
	statusEInval    = C.CB_EINVAL
	statusEHandle   = C.CB_EHANDLE
	statusENoMem    = C.CB_ENOMEM
	statusEExist    = C.CB_EEXIST
	statusENoEnt    = C.CB_ENOENT
	statusEFull     = C.CB_EFULL
	statusECorrupt  = C.CB_ECORRUPT
	statusEVersion  = C.CB_EVERSION
	statusEIO       = C.CB_EIO
	statusEPerm     = C.CB_EPERM
	statusEState    = C.CB_ESTATE
	statusEInternal = C.CB_EINTERNAL
	statusERange    = C.CB_ERANGE
	statusEBusy     = C.CB_EBUSY
)

var sentinels = map[int]error{
	statusEInval: ErrInvalidArgument, statusEHandle: ErrClosed, statusENoMem: ErrNoMemory,
	statusEExist: ErrNameTaken, statusENoEnt: ErrNotFound, statusEFull: ErrRegistryFull,
	statusECorrupt: ErrCorrupt, statusEVersion: ErrVersion, statusEIO: ErrIO,
	statusEPerm: ErrPermission, statusEState: ErrState, statusEInternal: ErrInternal,
	statusERange: ErrRange, statusEBusy: ErrBusy,
}

// sentinel gives the sentinel of a negative status (ErrInternal for one
// this version does not know).
func sentinel(status int) error {
	if err, ok := sentinels[status]; ok {
		return err
	}
	return ErrInternal
}

// Error is a failed call: the operation, the library's status, the
// setting at fault (in this package's words) and the library's message.
// Error() says what went wrong in Go's terms, e.g. "lazybreaker:
// NewCircuitBreaker: Timeout must be at least 1µs, got 1ns".
// errors.Is(err, ErrInvalidArgument) and the other sentinels match it by
// status.
type Error struct {
	Op      string // the Go call, e.g. "NewCircuitBreaker"
	Status  int    // the C status, e.g. -1 (CB_EINVAL)
	Option  string // the setting at fault, e.g. "Timeout", "Capacity", "Name"; "" when none
	Message string // the library's message (in C's terms: "cb_config: open_duration_ns ..."); may be empty

	field string // cb_last_error_field(): the C field behind Option
	text  string // what Error() says after "Op: "; "" = Message
}

func (e *Error) Error() string {
	switch {
	case e.text != "":
		return fmt.Sprintf("lazybreaker: %s: %s", e.Op, e.text)
	case e.Message != "":
		return fmt.Sprintf("lazybreaker: %s: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("lazybreaker: %s: %s (%s)", e.Op,
		strings.TrimPrefix(sentinel(e.Status).Error(), "lazybreaker: "), statusName(e.Status))
}

// Unwrap gives the status's sentinel, for errors.Is.
func (e *Error) Unwrap() error { return sentinel(e.Status) }

// statusName is the C library's name of a status ("CB_EINVAL").
func statusName(status int) string {
	if p := C.cb_status_name(C.int(status)); p != nil {
		return C.GoString(p)
	}
	return fmt.Sprintf("status %d", status)
}

// openRegistryOp is OpenRegistry's Op: its CB_ENOENT, CB_EEXIST and
// CB_EPERM are about the registry file.
const openRegistryOp = "OpenRegistry"

// Is matches a registry file's errors from OpenRegistry against io/fs's
// sentinels, as an *fs.PathError would: errors.Is(err, fs.ErrNotExist).
func (e *Error) Is(target error) bool {
	if e.Op != openRegistryOp {
		return false
	}
	switch target {
	case fs.ErrNotExist:
		return e.Status == statusENoEnt
	case fs.ErrExist:
		return e.Status == statusEExist
	case fs.ErrPermission:
		return e.Status == statusEPerm
	}
	return false
}

// newError is an error the package finds itself, before any C call.
func newError(op string, status int, text string) *Error {
	return &Error{Op: op, Status: status, text: text}
}

// optionError is a bad setting the package finds itself.
func optionError(op, option, text string) *Error {
	return &Error{Op: op, Status: statusEInval, Option: option, text: text}
}

// orNil gives a nil error for a nil *Error (not an interface holding one).
func orNil(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

// RejectedError is the error of a call the breaker failed fast, from Allow,
// Execute and ExecuteContext. errors.Is matches it against ErrOpenState (an
// OPEN or FORCED_OPEN breaker) or ErrTooManyRequests (HALF_OPEN, every
// probe slot taken); errors.As gives it, and its RetryAfter the wait.
//
// A rejection allocates nothing: each breaker has one *RejectedError per
// rejecting state, made at its first rejection there, and returns that same
// value for every later rejection in that state. Treat it as read-only.
type RejectedError struct {
	Breaker string // the breaker's name ("" if anonymous)
	State   State  // the state that rejected the call
	h       uint64 // the breaker's handle, for RetryAfter
}

// Forever is the retry-after of a FORCED_OPEN breaker: it admits nothing
// until Reset. (The C library reports UINT64_MAX nanoseconds.)
const Forever = time.Duration(math.MaxInt64)

// RetryAfter is how long until the breaker could admit a call, on its
// registry's clock, read from the library when RetryAfter is called (not
// when the call was rejected: the rejection itself computes no wait): the
// rest of the open duration, 0 when a call would be admitted now, Forever
// when FORCED_OPEN. 0 if the breaker has been closed since.
func (e *RejectedError) RetryAfter() time.Duration {
	ns, err := cgoRetryAfter(e.h)
	if err != nil {
		return 0
	}
	return wait(ns)
}

func (e *RejectedError) Error() string {
	what := "circuit breaker is open"
	if e.State == StateHalfOpen {
		what = "too many requests"
	}
	name := ""
	if e.Breaker != "" {
		name = " " + strconv.Quote(e.Breaker)
	}
	d := e.RetryAfter()
	if d == Forever {
		return fmt.Sprintf("lazybreaker:%s %s (%s)", name, what, e.State)
	}
	return fmt.Sprintf("lazybreaker:%s %s (%s), retry after %v", name, what, e.State, d)
}

// Unwrap gives ErrTooManyRequests in HALF_OPEN, else ErrOpenState.
func (e *RejectedError) Unwrap() error { return rejection(e.State) }

func rejection(s State) error {
	if s == StateHalfOpen {
		return ErrTooManyRequests
	}
	return ErrOpenState
}
