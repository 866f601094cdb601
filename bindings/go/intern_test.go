package lazybreaker

import (
	"errors"
	"testing"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// forgetInternedConfigs empties the table (a create copies its config, so
// nothing refers to them), for a test that needs room in it.
func forgetInternedConfigs(t *testing.T) {
	t.Helper()
	interned.Lock()
	defer interned.Unlock()
	lastConfig.Store(nil)
	for key, cfg := range interned.configs {
		lbswig.DeleteCb_config(cfg)
		delete(interned.configs, key)
	}
}

// A create reuses the cb_config of settings seen before: its one crossing
// is cb_create. What a breaker is made with must not change by it.

func TestCreatesWithEqualSettingsShareOneConfigAndKeepTheirOwn(t *testing.T) {
	r := manualRegistry(t)
	a := newBreaker(t, r, Settings{Name: "a", FailureThreshold: 7, Timeout: time.Minute})
	b := newBreaker(t, r, Settings{Name: "b", FailureThreshold: 7, Timeout: time.Minute})
	c := newBreaker(t, r, Settings{Name: "c", FailureThreshold: 8, Timeout: time.Minute})
	for _, w := range []struct {
		cb        *CircuitBreaker
		name      string
		threshold uint32
	}{{a, "a", 7}, {b, "b", 7}, {c, "c", 8}} {
		s, err := w.cb.Config()
		if err != nil || s.Name != w.name || s.FailureThreshold != w.threshold || s.Timeout != time.Minute {
			t.Fatalf("%s: %+v (%v)", w.name, s, err)
		}
	}
	interned.RLock()
	_, ok := interned.configs[keyOf(&Settings{FailureThreshold: 7, Timeout: time.Minute})]
	interned.RUnlock()
	if !ok {
		t.Fatal("the settings of a and b were not interned")
	}
}

func TestSettingsBeyondTheInternTableAreMadeAfresh(t *testing.T) {
	r := manualRegistry(t)
	t.Cleanup(func() { forgetInternedConfigs(t) })
	for i := 0; i < maxInternedConfigs+20; i++ {
		timeout := time.Duration(i+1) * time.Millisecond
		cb := newBreaker(t, r, Settings{Timeout: timeout, FailureThreshold: 3})
		s, err := cb.Config()
		if err != nil || s.Timeout != timeout || s.FailureThreshold != 3 {
			t.Fatalf("breaker %d: %+v (%v)", i, s, err)
		}
		_ = cb.Close()
	}
	interned.RLock()
	n := len(interned.configs)
	interned.RUnlock()
	if n > maxInternedConfigs {
		t.Fatalf("%d configurations interned, the bound is %d", n, maxInternedConfigs)
	}
}

func TestRefusedSettingsAreRefusedEveryTime(t *testing.T) {
	r := manualRegistry(t)
	for i := 0; i < 3; i++ {
		_, err := r.NewCircuitBreaker(Settings{Timeout: time.Nanosecond})
		var e *Error
		if !errors.As(err, &e) || e.Option != "Timeout" ||
			err.Error() != "lazybreaker: NewCircuitBreaker: Timeout must be at least 1µs, got 1ns" {
			t.Fatalf("attempt %d: %v", i, err)
		}
		if _, err := r.NewCircuitBreaker(Settings{Timeout: -time.Second}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("attempt %d, a negative Timeout: %v", i, err)
		}
	}
}

func TestACreateWithSettingsSeenBeforeAllocatesOnlyTheValue(t *testing.T) {
	r := manualRegistry(t)
	forgetInternedConfigs(t)
	s := Settings{Name: "alloc", WindowSize: 50}
	newBreaker(t, r, s).Close()
	// AllocsPerRun counts the whole process's allocations, and finalizers
	// of earlier tests' values may run meanwhile: the least of a few runs.
	least := -1.0
	for run := 0; run < 5; run++ {
		n := testing.AllocsPerRun(100, func() {
			cb, err := r.NewCircuitBreaker(s)
			if err != nil {
				panic(err)
			}
			_ = cb.Close()
		})
		if least < 0 || n < least {
			least = n
		}
	}
	// the breaker's two values (the shared core and the handle's value);
	// the registry's entry for a named breaker reuses its map's room, and
	// Close allocates none.
	if least > 2 {
		t.Fatalf("%v allocations per create and close", least)
	}
}
