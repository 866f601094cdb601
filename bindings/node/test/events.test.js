'use strict';
// Events: opossum's names, this process's transitions and outcomes, in
// order, delivered before the call returns (no timer); and
// diagnostics_channel `lazybreaker:transition`.
const test = require('node:test');
const assert = require('node:assert');
const diagnostics = require('node:diagnostics_channel');
const { CircuitBreaker, Registry } = require('..');

const NAMES = ['fire', 'reject', 'success', 'failure', 'open', 'halfOpen', 'close', 'forcedOpen', 'disabled'];

function record(breaker) {
  const seen = [];
  for (const name of NAMES) breaker.on(name, () => seen.push(name));
  return seen;
}

test('a whole cycle, in order', async () => {
  const registry = Registry.manualClock();
  let fail = true;
  const b = new CircuitBreaker(async () => { if (fail) throw new Error('down'); return 'up'; },
    { registry, failureThreshold: 2, resetTimeout: 100 });
  const seen = record(b);
  await b.fire().catch(() => {});
  await b.fire().catch(() => {});
  await b.fire().catch(() => {});
  registry.advance(100);
  fail = false;
  await b.fire();
  assert.deepStrictEqual(seen, ['fire', 'failure', 'fire', 'failure', 'open', 'fire', 'reject',
    'fire', 'halfOpen', 'success', 'close']);
});

test('transitions arrive synchronously, with what the library recorded', () => {
  const registry = Registry.manualClock();
  const b = registry.getOrCreate('sync', { failureThreshold: 1 });
  const transitions = [];
  b.on('open', (t) => transitions.push(t));
  registry.advance(5);
  b.tryAcquire().failure();
  assert.deepStrictEqual(transitions, [{ name: 'sync', from: 'closed', to: 'open', reason: 'consecutive_failures', atNs: 5000000n }]);
});

test('manual transitions are events too; rejects in the two-step form', () => {
  const b = Registry.manualClock().getOrCreate('manual');
  const seen = record(b);
  b.forceOpen();
  assert.strictEqual(b.tryAcquire(), null);
  b.disable();
  b.reset();
  b.trip(10);
  assert.deepStrictEqual(seen, ['forcedOpen', 'reject', 'disabled', 'close', 'open']);
});

test('each breaker hears its own transitions, every CircuitBreaker of a name hears them', () => {
  const registry = Registry.manualClock();
  const a = registry.getOrCreate('a', { failureThreshold: 1 });
  const a2 = registry.getOrCreate('a', { failureThreshold: 1 });
  const other = registry.getOrCreate('other', { failureThreshold: 1 });
  const [seenA, seenA2, seenOther] = [record(a), record(a2), record(other)];
  a.tryAcquire().failure();
  assert.deepStrictEqual(seenA, ['failure', 'open']);
  assert.deepStrictEqual(seenA2, ['open']);
  assert.deepStrictEqual(seenOther, []);
});

test('diagnostics_channel lazybreaker:transition', () => {
  const registry = Registry.manualClock();
  const published = [];
  const listener = (message) => published.push(`${message.name}:${message.from}->${message.to}:${message.reason}`);
  diagnostics.subscribe('lazybreaker:transition', listener);
  try {
    const b = registry.getOrCreate('dc', { failureThreshold: 1, resetTimeout: 1 });
    b.tryAcquire().failure();
    registry.advance(1);
    b.tryAcquire().success();
  } finally {
    diagnostics.unsubscribe('lazybreaker:transition', listener);
  }
  assert.deepStrictEqual(published, ['dc:closed->open:consecutive_failures', 'dc:open->half_open:open_elapsed',
    'dc:half_open->closed:probes_succeeded']);
});
