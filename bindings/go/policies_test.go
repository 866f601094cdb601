package lazybreaker

// The table of which settings a policy reads is the library's
// (cb_policy_reads), and the policy inferred from the options set follows
// from it.

import (
	"runtime"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

func TestThePolicyTableIsTheLibrarys(t *testing.T) {
	table, err := thePolicyTable()
	if err != nil {
		t.Fatal(err)
	}
	if len(configFields) != 16 {
		t.Fatalf("want the 16 fields of CB_CONFIG_FIELDS, got %q", configFields)
	}
	for p, policy := range policies {
		for i, field := range configFields {
			if _, ok := settingFields[field]; !ok {
				t.Errorf("%s maps onto no Settings option", field)
			}
			if got := lbswig.Cb_policy_reads(int(policy), field); got != int(table.reads[p][i]) {
				t.Errorf("%v reads %s as %d here, as %d in the library", policy, field, table.reads[p][i], got)
			}
		}
	}
	// The answers differ between the policies: a table of one answer
	// everywhere would pass the comparison above on its own.
	if table.reads[0][0] == table.reads[1][0] {
		t.Errorf("failure_threshold is read alike by %v and %v", policies[0], policies[1])
	}
	runtime.LockOSThread() // the field of the last error is per thread
	defer runtime.UnlockOSThread()
	for _, c := range []struct {
		policy      int
		field, want string
	}{{int(PolicyConsecutive), "no_such_field", "field"}, {3, "window_size", "policy"}, {-1, "window_size", "policy"}} {
		if st := lbswig.Cb_policy_reads(c.policy, c.field); st != statusEInval {
			t.Errorf("cb_policy_reads(%d, %q): want CB_EINVAL, got %d", c.policy, c.field, st)
		} else if f := lbswig.Cb_last_error_field(); f != c.want {
			t.Errorf("cb_policy_reads(%d, %q): want the field %q named, got %q", c.policy, c.field, c.want, f)
		}
	}
}

func TestOptionsEveryPolicyReadsChooseNoPolicy(t *testing.T) {
	r := manualRegistry(t)
	_, err := r.NewCircuitBreaker(Settings{Timeout: time.Second, WindowDuration: time.Second, WindowSize: 10})
	mustRefuse(t, err, ErrInvalidArgument, "WindowDuration", "lazybreaker: NewCircuitBreaker: "+
		"WindowDuration is ignored by PolicyCountWindow, which WindowSize chooses: set Policy, or leave one of them 0")
	cb, err := r.NewCircuitBreaker(Settings{Timeout: time.Second, MaxRequests: 2, Jitter: 0.1, MinimumCalls: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := cb.Config(); err != nil || got.Policy != PolicyCountWindow {
		t.Errorf("want %v, got %v (%v)", PolicyCountWindow, got.Policy, err)
	}
}

func TestASlowCallWindowKeepsTheConsecutivePolicyOfFailureThreshold(t *testing.T) {
	r := manualRegistry(t)
	s := Settings{FailureThreshold: 3, SlowCallDuration: time.Second, MinimumCalls: 4}
	cb, err := r.NewCircuitBreaker(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cb.Config()
	if err != nil || got.Policy != PolicyConsecutive || got.MinimumCalls != 4 {
		t.Fatalf("want %v reading MinimumCalls 4, got %+v (%v)", PolicyConsecutive, got, err)
	}
	// Without slow calls the same window is an error naming what it lacks.
	s.SlowCallDuration = 0
	_, err = r.NewCircuitBreaker(s)
	mustRefuse(t, err, ErrInvalidArgument, "MinimumCalls", "lazybreaker: NewCircuitBreaker: "+
		"MinimumCalls is ignored by PolicyConsecutive without SlowCallDuration, which FailureThreshold chooses: set Policy, or leave one of them 0")
}
