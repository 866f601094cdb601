'use strict';
// docs/node.md, "Coming from opossum or cockatiel": each row of its table.
const test = require('node:test');
const assert = require('node:assert');
const { CircuitBreaker, Registry, CircuitOpenError } = require('..');
const native = require('../lib/native');
const { kHandle } = require('../lib/internal');
const { POLICY_NAMES } = require('../lib/config');

const configOf = (b) => native.config(b[kHandle]);
const policyOf = (b) => POLICY_NAMES.get(configOf(b).policy);
const failing = async () => { throw new Error('down'); };

test('opossum: new CircuitBreaker(action, options) and fire(...args)', async () => {
  const b = new CircuitBreaker(async (a, c) => a * c, { registry: Registry.manualClock() });
  assert.strictEqual(await b.fire(6, 7), 42);
});

test('opossum: resetTimeout is the open duration in ms', () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock(), resetTimeout: 2500 });
  assert.strictEqual(configOf(b).open_duration_ns, 2500000000n);
});

test('opossum: errorThresholdPercentage, volumeThreshold, rollingCountTimeout, rollingCountBuckets: a time window', () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock(), errorThresholdPercentage: 50,
    volumeThreshold: 10, rollingCountTimeout: 10000, rollingCountBuckets: 10 });
  const c = configOf(b);
  assert.strictEqual(policyOf(b), 'time_window');
  assert.deepStrictEqual([c.failure_rate_threshold, c.minimum_calls, c.window_duration_ns, c.window_buckets],
    [0.5, 10, 10000000000n, 10]);
});

test('opossum: errorThresholdPercentage without rollingCountTimeout: a count window', () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock(), errorThresholdPercentage: 50, volumeThreshold: 4 });
  assert.strictEqual(policyOf(b), 'count_window');
});

test('opossum: no settings: 5 failures in a row trip it (not a rate)', async () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock() });
  assert.strictEqual(policyOf(b), 'consecutive');
  for (let i = 0; i < 4; i++) await b.fire().catch(() => {});
  assert.strictEqual(b.state, 'closed');
  await b.fire().catch(() => {});
  assert.strictEqual(b.state, 'open');
});

test('opossum: errorFilter: a filtered error counts nowhere', async () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock(), failureThreshold: 1, errorFilter: () => true });
  await assert.rejects(b.fire());
  assert.strictEqual(b.state, 'closed');
  assert.strictEqual(b.stats().ignored, 1);
});

test('opossum: rejected calls reject with code EOPENBREAKER', async () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock(), failureThreshold: 1 });
  await b.fire().catch(() => {});
  await assert.rejects(b.fire(), { code: 'EOPENBREAKER' });
});

test('opossum: open() and close() are forceOpen() and reset(); opened, halfOpen, closed', () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock() });
  b.forceOpen();
  assert.ok(!b.opened && !b.closed && b.state === 'forced_open');
  b.reset();
  assert.ok(b.closed);
});

test('opossum: events open, halfOpen, close, fire, reject, success, failure', async () => {
  const registry = Registry.manualClock();
  let ok = false;
  const b = new CircuitBreaker(async () => { if (!ok) throw new Error('x'); }, { registry, failureThreshold: 1, resetTimeout: 1 });
  const seen = [];
  for (const e of ['open', 'halfOpen', 'close', 'fire', 'reject', 'success', 'failure']) b.on(e, () => seen.push(e));
  await b.fire().catch(() => {});
  await b.fire().catch(() => {});
  registry.advance(1);
  ok = true;
  await b.fire();
  assert.deepStrictEqual(seen, ['fire', 'failure', 'open', 'fire', 'reject', 'fire', 'halfOpen', 'success', 'close']);
});

test('cockatiel: ConsecutiveBreaker(5) with halfOpenAfter: failureThreshold and resetTimeout', () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock(), failureThreshold: 5, resetTimeout: 10000 });
  assert.strictEqual(policyOf(b), 'consecutive');
  assert.strictEqual(configOf(b).failure_threshold, 5);
});

test('cockatiel: CountBreaker({ threshold, size, minimumNumberOfCalls })', () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock(), errorThresholdPercentage: 20, windowSize: 100, volumeThreshold: 50 });
  assert.strictEqual(policyOf(b), 'count_window');
  assert.deepStrictEqual([configOf(b).window_size, configOf(b).minimum_calls], [100, 50]);
});

test('cockatiel: SamplingBreaker({ threshold, duration }): rollingCountTimeout', () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock(), errorThresholdPercentage: 20, rollingCountTimeout: 30000 });
  assert.strictEqual(policyOf(b), 'time_window');
});

test('cockatiel: execute(fn, signal), BrokenCircuitError is CircuitOpenError', async () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock(), failureThreshold: 1 });
  const controller = new AbortController();
  assert.strictEqual(await b.execute(({ signal }) => signal === controller.signal, controller.signal), true);
  await b.execute(failing).catch(() => {});
  await assert.rejects(b.execute(async () => 1), CircuitOpenError);
});

test('cockatiel: isolate() is forceOpen(); onBreak, onReset, onHalfOpen are open, close, halfOpen', () => {
  const registry = Registry.manualClock();
  const b = registry.getOrCreate('iso', { failureThreshold: 1, resetTimeout: 1 });
  const seen = [];
  b.on('open', () => seen.push('break')).on('close', () => seen.push('reset')).on('halfOpen', () => seen.push('halfOpen'));
  b.tryAcquire().failure();
  registry.advance(1);
  b.tryAcquire().success();
  assert.deepStrictEqual(seen, ['break', 'halfOpen', 'reset']);
  b.forceOpen();
  assert.strictEqual(b.tryAcquire(), null);
  assert.strictEqual(b.retryAfter, Infinity);
});
