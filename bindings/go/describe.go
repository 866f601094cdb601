package lazybreaker

// Errors in this package's words. The library says which field failed
// (cb_last_error_field) and lists.h says what every cb_config field's unit
// and bounds are (CB_CONFIG_FIELDS, expanded below into a table this file
// reads); this file adds only what Go calls each field, and renders the
// rule with Go's types: a time.Duration for nanoseconds, a Policy for the
// policy. Nothing here reads the library's message.

/*
#include <stdlib.h>
#include <string.h>
#include <lazybreaker/lazybreaker.h>

typedef struct lb_go_field {
  const char *field, *type, *unit, *bounds;
  uint64_t lo_u, hi_u;  // the bounds of an integer field
  double lo_d, hi_d;    // the bounds of a double field
} lb_go_field;

#define LB_GO_FIELD(field, type, since, unit, bounds, lo, hi, def) \
  {#field, #type, #unit, #bounds, (uint64_t)(lo), (uint64_t)(hi), (double)(lo), (double)(hi)},
static const lb_go_field lb_go_fields[] = {CB_CONFIG_FIELDS(LB_GO_FIELD)};
#undef LB_GO_FIELD

static size_t lb_go_field_count(void) { return sizeof lb_go_fields / sizeof lb_go_fields[0]; }
static lb_go_field lb_go_field_at(size_t i) { return lb_go_fields[i]; }

// A field's value in a cb_config (SWIG's, as uintptr_t), both ways.
typedef struct lb_go_value {
  uint64_t u;
  double d;
} lb_go_value;
#define LB_GO_VALUE(field, type, since, unit, bounds, lo, hi, def) \
  if (strcmp(name, #field) == 0) {                                  \
    v.u = (uint64_t)c->field;                                       \
    v.d = (double)c->field;                                         \
  }
static lb_go_value lb_go_config_value(uintptr_t cfg, const char *name) {
  const cb_config *c = (const cb_config *)cfg;
  lb_go_value v = {0, 0.0};
  CB_CONFIG_FIELDS(LB_GO_VALUE)
  return v;
}
#undef LB_GO_VALUE
*/
import "C"

import (
	"fmt"
	"io/fs"
	"strconv"
	"time"
	"unsafe"
)

// optionNames: the Settings field for each cb_config field (and the
// parameters cb_create and cb_trip name), and the RegistryOptions field
// for each cb_registry_options field.
var optionNames = map[string]string{
	"failure_threshold":           "FailureThreshold",
	"open_duration_ns":            "Timeout",
	"half_open_max_calls":         "MaxRequests",
	"half_open_success_threshold": "HalfOpenSuccessThreshold",
	"half_open_timeout_ns":        "HalfOpenTimeout",
	"policy":                      "Policy",
	"window_size":                 "WindowSize",
	"window_duration_ns":          "WindowDuration",
	"window_buckets":              "WindowBuckets",
	"minimum_calls":               "MinimumCalls",
	"failure_rate_threshold":      "FailureRateThreshold",
	"slow_call_ns":                "SlowCallDuration",
	"slow_call_rate_threshold":    "SlowCallRateThreshold",
	"open_backoff_multiplier":     "BackoffMultiplier",
	"open_duration_max_ns":        "MaxTimeout",
	"open_jitter":                 "Jitter",
	"name":                        "Name",
	"open_for_ns":                 "Trip's duration",
	"capacity":                    "Capacity",
	"clock":                       "ManualClock",
	"event_capacity":              "EventCapacity",
	"flags":                       "Create",
	"mode":                        "Mode",
	"path":                        "Path",
}

// fieldRule is one cb_config field's unit and bounds, from lists.h.
type fieldRule struct {
	isDouble bool
	unit     string // count, ns, ratio, factor, policy
	bounds   string // closed, above, below, zero_or
	loU, hiU uint64
	loD, hiD float64
}

// configFields: the names of CB_CONFIG_FIELDS, in its order.
var configFields = func() []string {
	names := make([]string, int(C.lb_go_field_count()))
	for i := range names {
		names[i] = C.GoString(C.lb_go_field_at(C.size_t(i)).field)
	}
	return names
}()

var fieldRules = func() map[string]fieldRule {
	rules := map[string]fieldRule{}
	for i := 0; i < int(C.lb_go_field_count()); i++ {
		f := C.lb_go_field_at(C.size_t(i))
		rules[C.GoString(f.field)] = fieldRule{
			isDouble: C.GoString(f._type) == "double", unit: C.GoString(f.unit), bounds: C.GoString(f.bounds),
			loU: uint64(f.lo_u), hiU: uint64(f.hi_u), loD: float64(f.lo_d), hiD: float64(f.hi_d),
		}
	}
	return rules
}()

// configValue reads a field of SWIG's cb_config (by its Swigcptr).
func configValue(cfg uintptr, field string) (uint64, float64) {
	name := C.CString(field)
	defer C.free(unsafe.Pointer(name))
	v := C.lb_go_config_value(C.uintptr_t(cfg), name)
	return uint64(v.u), float64(v.d)
}

// render is how a field's value reads in Go.
func (r fieldRule) render(u uint64, d float64) string {
	switch {
	case r.unit == "ns":
		if u > uint64(Forever) {
			return strconv.FormatUint(u, 10) + "ns"
		}
		return time.Duration(u).String()
	case r.unit == "policy":
		return Policy(int(int32(u))).String()
	case r.isDouble:
		return strconv.FormatFloat(d, 'g', -1, 64)
	}
	return strconv.FormatUint(u, 10)
}

// rule says what the field must be, given its value (which side it broke).
func (r fieldRule) rule(u uint64, d float64) string {
	lo, hi := r.render(r.loU, r.loD), r.render(r.hiU, r.hiD)
	if r.unit == "policy" {
		return fmt.Sprintf("must be %v, %v or %v", PolicyConsecutive, PolicyCountWindow, PolicyTimeWindow)
	}
	low, high := u < r.loU, u > r.hiU
	if r.isDouble {
		low, high = d < r.loD, d > r.hiD
		if r.bounds == "above" && d == r.loD {
			low = true
		}
		if r.bounds == "below" && d == r.hiD {
			high = true
		}
	}
	switch {
	case r.bounds == "zero_or" && (low || high):
		return fmt.Sprintf("must be 0 or from %s to %s", lo, hi)
	case r.bounds == "above" && low:
		return "must be above " + lo
	case r.bounds == "below" && high:
		return "must be below " + hi
	case low:
		return "must be at least " + lo
	case high:
		return "must be at most " + hi
	}
	return ""
}

// explainConfig renders a refused configuration: the field at fault, its
// value in cfg and the rule it broke. An error without a config field (a
// name, a full registry) gets its option's name and keeps the message.
func (e *Error) explainConfig(cfg uintptr, s *Settings) *Error {
	if e == nil {
		return nil
	}
	e.Option = optionNames[e.field]
	r, ok := fieldRules[e.field]
	switch {
	case e.Status == statusEExist:
		e.Option, e.text = "Name", fmt.Sprintf("a breaker named %q is in this registry", s.Name)
	case e.Status == statusEFull:
		e.text = "the registry holds its Capacity of breakers"
	case e.field == "name":
		e.text = nameProblem(s.Name)
	case ok && e.Status == statusEInval:
		u, d := configValue(cfg, e.field)
		if rule := r.rule(u, d); rule != "" {
			e.text = fmt.Sprintf("%s %s, got %s", e.Option, rule, r.render(u, d))
		} else if e.field == "open_duration_max_ns" {
			to, _ := configValue(cfg, "open_duration_ns")
			e.text = fmt.Sprintf("MaxTimeout must be 0 or at least Timeout (%v), got %v",
				time.Duration(to), time.Duration(u))
		} else {
			e.text = fmt.Sprintf("%s is refused, got %s", e.Option, r.render(u, d))
		}
	}
	return e
}

// explainExisting renders a GetOrCreate that found the name with another
// configuration: the first setting that differs, and both values.
func (e *Error) explainExisting(reg uintptr, s *Settings, cfg uintptr) *Error {
	if e == nil || e.Status != statusEExist || e.field == "" {
		return e.explainConfig(cfg, s)
	}
	r, ok := fieldRules[e.field]
	if !ok {
		return e // destroyed meanwhile: no field to name
	}
	e.Option = optionNames[e.field]
	mine := r.render(configValue(cfg, e.field))
	e.text = fmt.Sprintf("breaker %q exists with another %s (these settings: %s)", s.Name, e.Option, mine)
	if h, err := cgoLookup(reg, s.Name); err == nil {
		theirs, free := newConfig()
		defer free()
		if cgoConfigGet(h, theirs) == nil {
			e.text = fmt.Sprintf("breaker %q exists with %s %s (these settings: %s)", s.Name, e.Option,
				r.render(configValue(theirs, e.field)), mine)
		}
	}
	return e
}

// explainRegistry renders a refused RegistryOptions, and a registry file
// that is missing or exists where the options say it must not. Other
// failures of a file (permissions, I/O, layout, and a Capacity or clock
// that disagrees with an existing file's, for which the library names no
// field) keep the library's message, which names the file.
func (e *Error) explainRegistry(o RegistryOptions) *Error {
	if e == nil {
		return nil
	}
	e.Option = optionNames[e.field]
	switch {
	case e.Status == statusENoEnt:
		e.Option, e.text = "Path", fmt.Sprintf("Path %q: no such file (set Create to create it)", o.Path)
	case e.Status == statusEExist:
		e.Option, e.text = "Exclusive", fmt.Sprintf("Path %q: the file exists (Exclusive)", o.Path)
	case e.field == "capacity":
		e.text = fmt.Sprintf("Capacity must be at most %d, got %d", C.CB_MAX_CAPACITY, o.Capacity)
	case e.field == "event_capacity":
		e.text = fmt.Sprintf("EventCapacity must be at most %d, got %d", C.CB_MAX_EVENT_CAPACITY, o.EventCapacity)
	case e.field == "mode":
		e.text = fmt.Sprintf("Mode must be permission bits (0 to %#o), got %#o", uint32(fs.ModePerm), uint32(o.Mode))
	case e.field == "flags" && o.Exclusive:
		e.Option, e.text = "Exclusive", "Exclusive needs Create"
	case e.field == "flags":
		e.Option, e.text = "AnyOwner", "AnyOwner needs Create"
	}
	return e
}

// nameProblem says what is wrong with a name the library refused.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "Name is required"
	case len(name) > C.CB_MAX_NAME_BYTES:
		return fmt.Sprintf("Name must be at most %d bytes, got %d", C.CB_MAX_NAME_BYTES, len(name))
	}
	return fmt.Sprintf("Name must be UTF-8, got %q", name)
}
