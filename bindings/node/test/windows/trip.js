'use strict';
// Run by node.exe under Wine (trip_under_wine.sh): the package over the
// Windows addon (the one LAZYBREAKER_ADDON names, else the package's
// prebuilds/win32-x64/) trips a breaker, rejects while open, and lets one
// probe through once the open duration has passed on the manual clock.
const assert = require('node:assert');
const path = require('node:path');
const { CircuitBreaker, CircuitOpenError, Registry } = require('../..');

assert.strictEqual(process.platform, 'win32');
const registry = Registry.manualClock();
const breaker = new CircuitBreaker(async () => 'called', { registry, failureThreshold: 2, resetTimeout: 1000 });
breaker.tryAcquire().failure();
breaker.tryAcquire().failure();
assert.strictEqual(breaker.state, 'open');
assert.strictEqual(breaker.tryAcquire(), null);
breaker.fire().then(() => assert.fail('an open breaker admitted a call'), (error) => {
  assert.ok(error instanceof CircuitOpenError);
  registry.advance(1000);
  const probe = breaker.tryAcquire();
  assert.ok(probe, 'no probe after resetTimeout');
  probe.success();
  assert.strictEqual(breaker.state, 'closed');
  const addon = Object.keys(require.cache).find((file) => file.endsWith('.node'));
  if (!process.env.LAZYBREAKER_ADDON) {
    assert.strictEqual(addon, path.join(__dirname, '..', '..', 'prebuilds', 'win32-x64', 'lazybreaker.node'));
  }
  console.log(`node ${process.version} ${process.platform}-${process.arch}, ${process.execPath}, addon ${addon}: ` +
              'tripped, open, probed, closed');
});
