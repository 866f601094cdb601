package lazybreaker

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazybreaker/lazybreaker/bindings/go/internal/lbswig"
)

// Interned configurations: a create with settings seen before reuses the
// cb_config they made, so it crosses into C once (cb_create) rather than
// once per setting and twice more for the struct. A cb_config is never
// written after it is interned; the library copies it at each create.

// configKey is what a cb_config is made of: every setting but the name and
// the Go functions.
type configKey struct {
	policy                                 Policy
	maxRequests, halfOpenSuccesses         uint32
	failureThreshold, windowSize           uint32
	windowBuckets, minimumCalls            uint32
	timeout, halfOpenTimeout, windowLength time.Duration
	slowCall, maxTimeout                   time.Duration
	failureRate, slowRate, backoff, jitter float64
}

func keyOf(s *Settings) configKey {
	return configKey{
		policy: s.Policy, maxRequests: s.MaxRequests, halfOpenSuccesses: s.HalfOpenSuccessThreshold,
		failureThreshold: s.FailureThreshold, windowSize: s.WindowSize,
		windowBuckets: s.WindowBuckets, minimumCalls: s.MinimumCalls,
		timeout: s.Timeout, halfOpenTimeout: s.HalfOpenTimeout, windowLength: s.WindowDuration,
		slowCall: s.SlowCallDuration, maxTimeout: s.MaxTimeout,
		failureRate: s.FailureRateThreshold, slowRate: s.SlowCallRateThreshold,
		backoff: s.BackoffMultiplier, jitter: s.Jitter,
	}
}

// maxInternedConfigs bounds the table: a program that makes more distinct
// configurations than this makes each one past it afresh, per create.
const maxInternedConfigs = 256

var interned = struct {
	sync.RWMutex
	configs map[configKey]lbswig.Cb_config
}{configs: map[configKey]lbswig.Cb_config{}}

// lastConfig is the table's entry a create used last: a loop of creates
// with one configuration compares its settings and does not hash them.
var lastConfig atomic.Pointer[internedConfig]

type internedConfig struct {
	key configKey
	cfg lbswig.Cb_config
}

func keepConfig(lbswig.Cb_config) {}

// configFor gives the cb_config of s and what to call when the create is
// done with it. raw (the conformance runner's edits) makes one of its own.
func configFor(op string, s *Settings, raw func(lbswig.Cb_config)) (lbswig.Cb_config, func(lbswig.Cb_config), *Error) {
	var key configKey
	if raw == nil {
		key = keyOf(s)
		if last := lastConfig.Load(); last != nil && last.key == key {
			return last.cfg, keepConfig, nil
		}
		interned.RLock()
		cfg, ok := interned.configs[key]
		interned.RUnlock()
		if ok {
			lastConfig.Store(&internedConfig{key, cfg})
			return cfg, keepConfig, nil
		}
	}
	cfg := lbswig.NewCb_config()
	if cfg.Swigcptr() == 0 {
		return nil, nil, newError(op, statusENoMem, "no memory for a cb_config")
	}
	if err := s.fill(cfg); err != nil {
		lbswig.DeleteCb_config(cfg)
		e := err.(*Error)
		e.Op = op
		return nil, nil, e
	}
	if raw != nil {
		raw(cfg)
		return cfg, lbswig.DeleteCb_config, nil
	}
	interned.Lock()
	defer interned.Unlock()
	if earlier, ok := interned.configs[key]; ok {
		lbswig.DeleteCb_config(cfg)
		return earlier, keepConfig, nil
	}
	if len(interned.configs) >= maxInternedConfigs {
		return cfg, lbswig.DeleteCb_config, nil
	}
	interned.configs[key] = cfg
	lastConfig.Store(&internedConfig{key, cfg})
	return cfg, keepConfig, nil
}
