package lazybreaker

// Which settings a policy reads, and the policy the settings given imply
// (docs/policies.md, "Which settings a policy reads"). The table is the
// library's: cb_policy_reads answers it for every field of
// CB_CONFIG_FIELDS, asked once per process. This file only maps the
// answers onto Settings and applies the rule.

/*
#include <stdlib.h>
#include <lazybreaker/lazybreaker.h>

typedef struct lb_go_policy_reading {
  int reads;          // a CB_FIELD_* when status is CB_OK
  int status;         // cb_policy_reads'
  const char *field;  // on failure: cb_last_error_field() (static)
} lb_go_policy_reading;

// The field name is read in the same crossing as the call that failed:
// cb_last_error_field() is per thread, and a goroutine may move between two.
static lb_go_policy_reading lb_go_policy_reads(int policy, const char *field) {
  lb_go_policy_reading r = {CB_FIELD_IGNORED, 0, NULL};
  r.status = cb_policy_reads(policy, field, &r.reads);
  if (r.status != CB_OK) r.field = cb_last_error_field();
  return r;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// fieldReading is how a policy reads a cb_config field (a CB_FIELD_*).
type fieldReading int8

const (
	fieldIgnored           fieldReading = C.CB_FIELD_IGNORED
	fieldRead              fieldReading = C.CB_FIELD_READ
	fieldReadWithSlowCalls fieldReading = C.CB_FIELD_READ_WITH_SLOW_CALLS
)

// policies, in the order the rule tries them when none is chosen.
var policies = [...]Policy{PolicyConsecutive, PolicyCountWindow, PolicyTimeWindow}

// ignores says whether a field read this way is ignored by a breaker whose
// slow-call tracking is on (slowCalls) or off.
func (r fieldReading) ignores(slowCalls bool) bool {
	return r == fieldIgnored || (r == fieldReadWithSlowCalls && !slowCalls)
}

// fieldSet is a set of cb_config fields, bit i for configFields[i].
type fieldSet uint32

// policyTable is the library's answer for each policy and each field of
// configFields.
type policyTable struct {
	reads [len(policies)][]fieldReading
	// contested: the fields some policy does not simply read. Only these
	// choose or exclude a policy.
	contested fieldSet
}

var (
	policyTableOnce sync.Once
	policyReads     policyTable
	policyReadsErr  *Error // the library refused a question: it and this package disagree on the fields
)

// askPolicyReads fills policyReads from cb_policy_reads.
func askPolicyReads() {
	if len(configFields) > 32 {
		policyReadsErr = newError("cb_policy_reads", statusEInval,
			fmt.Sprintf("%d cb_config fields do not fit a fieldSet", len(configFields)))
		return
	}
	for p, policy := range policies {
		policyReads.reads[p] = make([]fieldReading, len(configFields))
		for i, field := range configFields {
			name := C.CString(field)
			r := C.lb_go_policy_reads(C.int(policy), name)
			C.free(unsafe.Pointer(name))
			if r.status != statusOK {
				policyReadsErr = newError("cb_policy_reads", int(r.status),
					fmt.Sprintf("the library cannot say how %v reads %s (it refuses %s)", policy, field, C.GoString(r.field)))
				return
			}
			policyReads.reads[p][i] = fieldReading(r.reads)
			if fieldReading(r.reads) != fieldRead {
				policyReads.contested |= 1 << i
			}
		}
	}
}

// thePolicyTable is the library's table, asked once.
func thePolicyTable() (*policyTable, *Error) {
	policyTableOnce.Do(askPolicyReads)
	return &policyReads, policyReadsErr
}

// settingFields: for each cb_config field, whether Settings sets it (a
// zero option keeps the library's default) and how Config clears it when
// the policy does not read it. Policy is the choice itself, not a setting
// the rule checks.
var settingFields = map[string]struct {
	isSet func(*Settings) bool
	clear func(*Settings)
}{
	"failure_threshold": {func(s *Settings) bool { return s.FailureThreshold != 0 }, func(s *Settings) { s.FailureThreshold = 0 }},
	"open_duration_ns":  {func(s *Settings) bool { return s.Timeout != 0 }, func(s *Settings) { s.Timeout = 0 }},
	"half_open_max_calls": {func(s *Settings) bool { return s.MaxRequests != 0 },
		func(s *Settings) { s.MaxRequests = 0 }},
	"half_open_success_threshold": {func(s *Settings) bool { return s.HalfOpenSuccessThreshold != 0 },
		func(s *Settings) { s.HalfOpenSuccessThreshold = 0 }},
	"half_open_timeout_ns": {func(s *Settings) bool { return s.HalfOpenTimeout != 0 },
		func(s *Settings) { s.HalfOpenTimeout = 0 }},
	"policy":             {func(*Settings) bool { return false }, func(*Settings) {}},
	"window_size":        {func(s *Settings) bool { return s.WindowSize != 0 }, func(s *Settings) { s.WindowSize = 0 }},
	"window_duration_ns": {func(s *Settings) bool { return s.WindowDuration != 0 }, func(s *Settings) { s.WindowDuration = 0 }},
	"window_buckets":     {func(s *Settings) bool { return s.WindowBuckets != 0 }, func(s *Settings) { s.WindowBuckets = 0 }},
	"minimum_calls":      {func(s *Settings) bool { return s.MinimumCalls != 0 }, func(s *Settings) { s.MinimumCalls = 0 }},
	"failure_rate_threshold": {func(s *Settings) bool { return s.FailureRateThreshold != 0 },
		func(s *Settings) { s.FailureRateThreshold = 0 }},
	"slow_call_ns": {func(s *Settings) bool { return s.SlowCallDuration != 0 },
		func(s *Settings) { s.SlowCallDuration = 0 }},
	"slow_call_rate_threshold": {func(s *Settings) bool { return s.SlowCallRateThreshold != 0 },
		func(s *Settings) { s.SlowCallRateThreshold = 0 }},
	"open_backoff_multiplier": {func(s *Settings) bool { return s.BackoffMultiplier != 0 },
		func(s *Settings) { s.BackoffMultiplier = 0 }},
	"open_duration_max_ns": {func(s *Settings) bool { return s.MaxTimeout != 0 },
		func(s *Settings) { s.MaxTimeout = 0 }},
	"open_jitter": {func(s *Settings) bool { return s.Jitter != 0 }, func(s *Settings) { s.Jitter = 0 }},
}

// contestedSet is the set of the contested fields s sets.
func (t *policyTable) contestedSet(s *Settings) fieldSet {
	var set fieldSet
	for i, field := range configFields {
		if t.contested&(1<<i) != 0 && settingFields[field].isSet(s) {
			set |= 1 << i
		}
	}
	return set
}

// readsAll says whether policy p answers CB_FIELD_READ for every field of set.
func (t *policyTable) readsAll(p int, set fieldSet) bool {
	for i, r := range t.reads[p] {
		if set&(1<<i) != 0 && r != fieldRead {
			return false
		}
	}
	return true
}

// firstIgnored is the first field of set that policy p ignores, and how p
// reads it; ok is false when p reads them all.
func (t *policyTable) firstIgnored(p int, set fieldSet, slowCalls bool) (i int, r fieldReading, ok bool) {
	for i, r := range t.reads[p] {
		if set&(1<<i) != 0 && r.ignores(slowCalls) {
			return i, r, true
		}
	}
	return 0, 0, false
}

// policyIndex is p's row in the table; ok is false for a value that is no
// policy (the library refuses it, naming the field).
func policyIndex(p Policy) (int, bool) {
	for i, q := range policies {
		if q == p {
			return i, true
		}
	}
	return 0, false
}

// withoutSlowCalls is what an option read only with slow calls lacks.
func withoutSlowCalls(r fieldReading) string {
	if r == fieldReadWithSlowCalls {
		return " without SlowCallDuration"
	}
	return ""
}

// resolve gives the settings with their policy: the one chosen, or the one
// the settings given imply (Settings.Policy). An option the policy ignores
// is an error naming both. The conformance runner skips this (it hands the
// library exactly what its files say, ignored fields included).
func (s Settings) resolve(op string) (Settings, *Error) {
	t, err := thePolicyTable()
	if err != nil {
		return s, newError(op, err.Status, err.text)
	}
	set := t.contestedSet(&s)
	slowCalls := s.SlowCallDuration != 0
	if s.Policy != PolicyConsecutive {
		p, ok := policyIndex(s.Policy)
		if !ok {
			return s, nil
		}
		if i, r, ignored := t.firstIgnored(p, set, slowCalls); ignored {
			option := optionNames[configFields[i]]
			return s, optionError(op, option, fmt.Sprintf("%s is ignored by Policy %v%s", option, s.Policy, withoutSlowCalls(r)))
		}
		return s, nil
	}
	for p := range policies {
		if t.readsAll(p, set) {
			s.Policy = policies[p]
			return s, nil
		}
	}
	// No policy reads them all: the first option set chooses alone, and the
	// first later one its policy ignores is named with it.
	first := 0
	for set&(1<<first) == 0 {
		first++
	}
	chosen := 0
	for p := range policies {
		if t.reads[p][first] == fieldRead {
			chosen = p
			break
		}
	}
	s.Policy = policies[chosen]
	if i, r, ignored := t.firstIgnored(chosen, set&^(1<<(first+1)-1), slowCalls); ignored {
		option, chooser := optionNames[configFields[i]], optionNames[configFields[first]]
		return s, optionError(op, option, fmt.Sprintf("%s is ignored by %v%s, which %s chooses: set Policy, or leave one of them 0",
			option, s.Policy, withoutSlowCalls(r), chooser))
	}
	// Read only with slow calls, and slow calls are on: the first option's
	// policy reads every option set.
	return s, nil
}

// clearIgnored zeroes the options s.Policy does not read, so that the
// settings read back resolve to the same policy.
func (s *Settings) clearIgnored() {
	t, err := thePolicyTable()
	p, ok := policyIndex(s.Policy)
	if err != nil || !ok {
		return
	}
	slowCalls := s.SlowCallDuration != 0
	for i, field := range configFields {
		if t.reads[p][i].ignores(slowCalls) {
			settingFields[field].clear(s)
		}
	}
}

// The rule reads Policy's zero value as "not chosen": it must stay
// PolicyConsecutive, the policy chosen when no option says otherwise.
var _ = [1]struct{}{}[PolicyConsecutive]
