package lazybreaker

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
// from Acquire (no allocation), or wrapped in a *RejectedError (which also
// carries the retry-after) from Allow, Execute and ExecuteContext: test them
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
	// *Error's Message is the library's and names the field.
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

// Statuses of the C ABI (include/lazybreaker/lazybreaker.h), pinned there.
const (
	statusOK        = 0
	statusRejected  = 1
	statusEInval    = -1
	statusEHandle   = -2
	statusENoMem    = -3
	statusEExist    = -4
	statusENoEnt    = -5
	statusEFull     = -6
	statusECorrupt  = -7
	statusEVersion  = -8
	statusEIO       = -9
	statusEPerm     = -10
	statusEState    = -11
	statusEInternal = -12
	statusERange    = -13
	statusEBusy     = -14
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

// Error is a failed call: the operation, the library's status and its
// message for this call (e.g. "cb_config: failure_threshold must be
// 1..65535, got 70000"). errors.Is(err, ErrInvalidArgument) and the other
// sentinels match it by status.
type Error struct {
	Op      string // the Go call, e.g. "NewCircuitBreaker"
	Status  int    // the C status, e.g. -1 (CB_EINVAL)
	Message string // the library's message; may be empty
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("lazybreaker: %s: %v", e.Op, strings.TrimPrefix(sentinel(e.Status).Error(), "lazybreaker: "))
	}
	return fmt.Sprintf("lazybreaker: %s: %s", e.Op, e.Message)
}

// Unwrap gives the status's sentinel, for errors.Is.
func (e *Error) Unwrap() error { return sentinel(e.Status) }

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

// newError builds the error of a status that carries no message (the fast
// path's, whose message could only be read on the thread that failed).
func newError(op string, status int, message string) *Error {
	return &Error{Op: op, Status: status, Message: message}
}

// RejectedError is the error of a call the breaker failed fast, from Allow,
// Execute and ExecuteContext. errors.Is matches it against ErrOpenState (an
// OPEN or FORCED_OPEN breaker) or ErrTooManyRequests (HALF_OPEN, every
// probe slot taken); errors.As gives it, with the wait.
type RejectedError struct {
	Breaker string // the breaker's name ("" if anonymous)
	State   State  // the state that rejected the call
	wait    time.Duration
}

// Forever is the retry-after of a FORCED_OPEN breaker: it admits nothing
// until Reset. (The C library reports UINT64_MAX nanoseconds.)
const Forever = time.Duration(math.MaxInt64)

// RetryAfter is how long until the breaker could admit a call, on its
// registry's clock, as it was when the call was rejected: the rest of the
// open duration, 0 when a probe slot may be free, Forever when FORCED_OPEN.
func (e *RejectedError) RetryAfter() time.Duration { return e.wait }

func (e *RejectedError) Error() string {
	what := "circuit breaker is open"
	if e.State == StateHalfOpen {
		what = "too many requests"
	}
	name := ""
	if e.Breaker != "" {
		name = " " + strconv.Quote(e.Breaker)
	}
	if e.wait == Forever {
		return fmt.Sprintf("lazybreaker:%s %s (%s)", name, what, e.State)
	}
	return fmt.Sprintf("lazybreaker:%s %s (%s), retry after %v", name, what, e.State, e.wait)
}

// Unwrap gives ErrTooManyRequests in HALF_OPEN, else ErrOpenState.
func (e *RejectedError) Unwrap() error { return rejection(e.State) }

func rejection(s State) error {
	if s == StateHalfOpen {
		return ErrTooManyRequests
	}
	return ErrOpenState
}

// The SWIG layer (internal/lbswig, bindings/swig/go.i) panics on a negative
// status with this prefix, the status and the library's message, read on
// the thread that failed.
const swigPanicPrefix = "lazybreaker status "

// recoverStatus turns a panic of the SWIG layer into *err; any other panic
// goes on. Use as `defer recoverStatus("Op", &err)`.
func recoverStatus(op string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if text, ok := r.(string); ok && strings.HasPrefix(text, swigPanicPrefix) {
		rest := strings.TrimPrefix(text, swigPanicPrefix)
		if colon := strings.IndexByte(rest, ':'); colon > 0 {
			if status, convErr := strconv.Atoi(rest[:colon]); convErr == nil {
				*err = newError(op, status, strings.TrimSpace(rest[colon+1:]))
				return
			}
		}
	}
	panic(r)
}
