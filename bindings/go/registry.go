package lazybreaker

// #include <limits.h>
// #include <lazybreaker/lazybreaker.h>
import "C"

import (
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// Registry is a set of breakers sharing a clock, a capacity and an event
// queue. The default registry (DefaultRegistry, and NewCircuitBreaker) is
// the process's, shared with every language in the process, and never
// closes. A registry from OpenRegistry is private; Close it when done (a
// finalizer closes one dropped unclosed, once no breaker of it is
// reachable either).
//
// Every method may be called from any number of goroutines, Close too:
// calls on the registry's breakers in flight when it begins return what
// they would have or ErrClosed, and every call after Close fails with
// ErrClosed.
type Registry struct {
	mu        sync.RWMutex // Close (writer) against the registry's other methods
	reg       uintptr      // the C registry
	closed    bool
	isDefault bool
	// A registry file's: a breaker that Lookup or Breakers finds and this
	// value did not create is another process's too, and its Close lets go
	// of it without destroying it.
	sharedFile bool

	// The breakers created through this value with a name, so Lookup and
	// Breakers give back the same settings (IsSuccessful, IsExcluded) and a
	// named breaker is not destroyed by the garbage collector.
	named coreTable
}

// RegistryOptions opens a registry. Zero values keep the library's defaults.
//
// With Path set the registry is a shared one: the registry file at Path,
// which every process opening the same path maps, seeing the same
// breakers, states and counters (docs/shared-registries.md). An existing
// file's capacity and clock are the file's: a Capacity of 0 accepts the
// file's, one that disagrees (or a clock that does) is ErrInvalidArgument.
type RegistryOptions struct {
	// Capacity is the most breakers it may hold (default 65,536; at most
	// 4,194,304). Memory is reserved up front, touched as breakers come.
	Capacity uint32
	// ManualClock gives the registry a clock that starts at 0 and moves only
	// by Advance: for deterministic tests.
	ManualClock bool
	// EventCapacity is how many events the queue holds before it drops the
	// oldest (default 1,024).
	EventCapacity uint32

	// Path is the shared registry file ("" = a private registry in memory).
	// A missing file is ErrNotFound (and fs.ErrNotExist) unless Create.
	Path string
	// Create creates the file at Path if it is missing (CB_REGISTRY_CREATE).
	Create bool
	// Exclusive, with Create, fails with ErrNameTaken (and fs.ErrExist) if
	// the file exists (CB_REGISTRY_EXCLUSIVE).
	Exclusive bool
	// AnyOwner, with Create, uses an existing file whoever owns it and
	// whoever may write it (CB_REGISTRY_ANY_OWNER). Without it, a create
	// refuses with ErrPermission a file that another user than this
	// process's or root owns, or that others may write while Mode does not
	// grant them that; a symlink at Path is refused either way
	// (docs/shared-registries.md, "Permissions").
	AnyOwner bool
	// Mode is the permission bits of a file this open creates, before the
	// umask (e.g. 0o660 for a group); 0 is 0o600. The library refuses
	// anything but permission bits.
	Mode fs.FileMode
}

// OpenRegistry opens a private registry, or with o.Path a shared one.
// Closing a shared registry unmaps it; its breakers stay in the file. Its
// errors: ErrInvalidArgument for bad options; for a shared registry's file
// ErrNotFound, ErrNameTaken (Exclusive), ErrPermission, ErrVersion (not a
// registry of this layout), ErrCorrupt, ErrIO and ErrBusy (another process
// held the file's lock for 5 s), the first three also matching
// fs.ErrNotExist, fs.ErrExist and fs.ErrPermission.
func OpenRegistry(o RegistryOptions) (*Registry, error) {
	if o.Path != "" {
		if strings.IndexByte(o.Path, 0) >= 0 {
			return nil, optionError(openRegistryOp, "Path", fmt.Sprintf("Path must not hold a NUL byte, got %q", o.Path))
		}
		if len(o.Path) >= C.PATH_MAX {
			return nil, optionError(openRegistryOp, "Path", fmt.Sprintf("Path must be shorter than %d bytes, got %d", C.PATH_MAX, len(o.Path)))
		}
	}
	reg, err := cgoRegistryOpen(o)
	if err != nil {
		return nil, err.explainRegistry(o)
	}
	r := &Registry{reg: reg, sharedFile: o.Path != ""}
	runtime.SetFinalizer(r, (*Registry).finalize)
	return r, nil
}

// NewManualClockRegistry opens a private registry whose clock starts at 0
// and moves only by Advance.
func NewManualClockRegistry() (*Registry, error) {
	return OpenRegistry(RegistryOptions{ManualClock: true})
}

var defaultRegistry struct {
	sync.Mutex
	r *Registry
}

// DefaultRegistry is the process-wide registry (monotonic clock, capacity
// 1,048,576), created on first use. Creating it fails only if its memory
// cannot be reserved; a later call tries again.
func DefaultRegistry() (*Registry, error) {
	defaultRegistry.Lock()
	defer defaultRegistry.Unlock()
	if defaultRegistry.r != nil {
		return defaultRegistry.r, nil
	}
	reg, err := cgoDefaultRegistry()
	if err != nil {
		return nil, err
	}
	defaultRegistry.r = &Registry{reg: reg, isDefault: true}
	return defaultRegistry.r, nil
}

// NewCircuitBreaker creates a breaker, CLOSED, in the default registry.
func NewCircuitBreaker(s Settings) (*CircuitBreaker, error) {
	r, err := DefaultRegistry()
	if err != nil {
		return nil, err
	}
	return r.NewCircuitBreaker(s)
}

// NewCircuitBreaker creates a breaker, CLOSED, in this registry. Bad
// settings fail with an *Error matching ErrInvalidArgument (its Option
// names the setting; an option the policy ignores is one too); a taken
// name with ErrNameTaken; a full registry with ErrRegistryFull.
func (r *Registry) NewCircuitBreaker(s Settings) (*CircuitBreaker, error) {
	resolved, err := s.resolve("NewCircuitBreaker")
	if err != nil {
		return nil, err
	}
	return r.newCircuitBreaker(&resolved, nil)
}

// newCircuitBreaker: raw, when set, edits the config after the settings
// (the conformance runner sets values Settings cannot say, such as an
// explicit 0).
func (r *Registry) newCircuitBreaker(s *Settings, raw func(lbswig.Cb_config)) (*CircuitBreaker, error) {
	h, err := r.create("NewCircuitBreaker", s, raw, false)
	if err != nil {
		return nil, err
	}
	cb := newCircuitBreaker(r, h, s.Name, s, false, s.Name == "")
	if s.Name != "" {
		r.named.put(cb.core)
	}
	return cb, nil
}

// create makes the breaker s describes ("" is anonymous), or with
// getOrCreate finds it.
func (r *Registry) create(op string, s *Settings, raw func(lbswig.Cb_config), getOrCreate bool) (uint64, *Error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return 0, newError(op, statusEHandle, "the registry is closed")
	}
	if strings.IndexByte(s.Name, 0) >= 0 {
		return 0, optionError(op, "Name", fmt.Sprintf("Name must not hold a NUL byte, got %q", s.Name))
	}
	cfg, release, cerr := configFor(op, s, raw)
	if cerr != nil {
		return 0, cerr
	}
	defer release(cfg)
	h, err := cgoCreate(op, r.reg, s.Name, cfg.Swigcptr(), getOrCreate)
	return h, err.explainExisting(r.reg, s, cfg.Swigcptr())
}

func (r *Registry) forget(h uint64) {
	r.named.forget(h)
}

// breaker gives the value for a handle: the breaker created through this
// registry value, or a view with default settings of one created elsewhere
// (another value, another language). A view never destroys the breaker
// when collected; its Close does.
func (r *Registry) breaker(h uint64) (*CircuitBreaker, error) {
	if core := r.named.get(h); core != nil {
		return newView(r, core), nil
	}
	name, err := cgoName(h)
	if err != nil {
		return nil, err
	}
	return newCircuitBreaker(r, h, name, nil, r.sharedFile, false), nil
}

// GetOrCreate gives the breaker named s.Name if its configuration equals
// the one s describes, and creates it otherwise: what every worker of a
// pool, and every process sharing a registry file, calls at start. Of
// concurrent calls with one name, in any process, one creates and the
// others get its breaker. A breaker of that name with another
// configuration is ErrNameTaken; a name is required (ErrInvalidArgument).
//
// The breaker is shared: the value's Close lets go of it and destroys
// nothing (other processes use it), and so does the garbage collector.
func (r *Registry) GetOrCreate(s Settings) (*CircuitBreaker, error) {
	const op = "GetOrCreate"
	resolved, perr := s.resolve(op)
	if perr != nil {
		return nil, perr
	}
	h, err := r.create(op, &resolved, nil, true)
	if err != nil {
		return nil, err
	}
	return newCircuitBreaker(r, h, s.Name, &s, true, false), nil
}

// Lookup finds a breaker by name: ErrNotFound when none has it.
func (r *Registry) Lookup(name string) (*CircuitBreaker, error) {
	const op = "Lookup"
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, newError(op, statusEHandle, "the registry is closed")
	}
	if strings.IndexByte(name, 0) >= 0 || len(name) > C.CB_MAX_NAME_BYTES {
		return nil, newError(op, statusENoEnt, "no breaker is named "+strconv.Quote(name))
	}
	h, err := cgoLookup(r.reg, name)
	if err != nil {
		if err.Status == statusENoEnt {
			err.text = "no breaker is named " + strconv.Quote(name)
		} else if err.field == "name" {
			err.Option, err.text = "Name", nameProblem(name)
		}
		return nil, err
	}
	return r.breaker(h)
}

// Breakers lists the registry's live breakers (those created or destroyed
// meanwhile may or may not be listed).
func (r *Registry) Breakers() ([]*CircuitBreaker, error) {
	const op = "Breakers"
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, newError(op, statusEHandle, "the registry is closed")
	}
	handles, err := cgoList(r.reg)
	if err != nil {
		return nil, err
	}
	list := make([]*CircuitBreaker, 0, len(handles))
	for _, h := range handles {
		cb, err := r.breaker(h)
		if err != nil {
			continue // destroyed since the list was taken
		}
		list = append(list, cb)
	}
	return list, nil
}

// Advance moves a manual clock forward (ErrInvalidArgument unless the
// registry's clock is manual).
func (r *Registry) Advance(d time.Duration) error {
	const op = "Advance"
	if d < 0 {
		return newError(op, statusEInval, "the clock only moves forward, got "+d.String())
	}
	return r.status(op, func(reg uintptr) *Error {
		err := cgoClockAdvance(reg, uint64(d))
		if err != nil && err.Status == statusEInval {
			err.text = fmt.Sprintf("Advance(%v) needs a ManualClock registry whose clock does not overflow", d)
		}
		return err
	})
}

// Now reads the registry's clock: time since its start (manual clock) or
// since an arbitrary point (monotonic clock).
func (r *Registry) Now() (time.Duration, error) {
	var ns uint64
	err := r.status("Now", func(reg uintptr) (e *Error) { ns, e = cgoClockNow(reg); return e })
	return wait(ns), err
}

// Prometheus renders every breaker of the registry in the Prometheus text
// format 0.0.4 (docs/observability.md). It allocates: for a scrape
// endpoint, not the request path.
func (r *Registry) Prometheus() (string, error) {
	var text string
	err := r.status("Prometheus", func(reg uintptr) (e *Error) { text, e = cgoPrometheus(reg); return e })
	return text, err
}

// Close closes the registry: every breaker in it becomes stale (calls on
// them fail with ErrClosed). The default registry never closes
// (ErrInvalidArgument). A second Close returns ErrClosed.
func (r *Registry) Close() error {
	const op = "Close"
	if r.isDefault {
		return newError(op, statusEInval, "the default registry is never closed")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return newError(op, statusEHandle, "the registry is closed")
	}
	r.closed = true
	runtime.SetFinalizer(r, nil)
	return orNil(cgoRegistryClose(op, r.reg))
}

func (r *Registry) finalize() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		_ = cgoRegistryClose("finalizer", r.reg)
	}
}

// status runs a registry call under the read lock, refusing a closed one.
func (r *Registry) status(op string, f func(reg uintptr) *Error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return newError(op, statusEHandle, "the registry is closed")
	}
	return orNil(f(r.reg))
}
