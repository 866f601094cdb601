'use strict';
// The call forms on a manual clock: fire, execute with an AbortSignal, the
// two-step form, errorFilter, timeout, CircuitOpenError; registries, metrics,
// the package's entry points and version.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { getEventListeners } = require('node:events');
const lazybreaker = require('..');
const { CircuitBreaker, Registry, CircuitOpenError, TimeoutError, Permit } = lazybreaker;

const failing = async () => { throw new Error('down'); };

test('fire passes the arguments and resolves with the result', async () => {
  const b = new CircuitBreaker(async (a, c) => a + c, { registry: Registry.manualClock() });
  assert.strictEqual(await b.fire(2, 3), 5);
  assert.strictEqual(await new CircuitBreaker((x) => x * 2, { registry: Registry.manualClock() }).fire(4), 8);
  assert.deepStrictEqual({ ...b.stats(), stateNs: 0n }, { admitted: 1, rejected: 0, successes: 1, failures: 0, ignored: 0,
    trips: 0, consecutiveFailures: 0, slow: 0, failureRate: 0, slowRate: 0, stateNs: 0n });
});

test('failures trip it; then it rejects with CircuitOpenError until resetTimeout, exactly', async () => {
  const registry = Registry.manualClock();
  const b = new CircuitBreaker(failing, { registry, failureThreshold: 2, resetTimeout: 1000 });
  await assert.rejects(b.fire(), /down/);
  assert.strictEqual(b.state, 'closed');
  await assert.rejects(b.fire(), /down/);
  assert.strictEqual(b.state, 'open');
  assert.ok(b.opened);
  registry.advance(999.999999);
  const error = await b.fire().catch((e) => e);
  assert.ok(error instanceof CircuitOpenError);
  assert.strictEqual(error.code, 'EOPENBREAKER');
  assert.strictEqual(error.retryAfterNs, 1n);
  assert.strictEqual(error.retryAfter, 0.000001);
  assert.strictEqual(error.state, 'open');
  registry.advance(1n);
  const ok = new CircuitBreaker(async () => 'up', { registry });
  assert.strictEqual(ok.state, 'closed'); // another, anonymous breaker
  await assert.rejects(b.fire(), /down/); // the probe is admitted, and fails
  assert.strictEqual(b.state, 'open');
  assert.strictEqual(b.stats().trips, 2);
});

test('a synchronous throw is a failure too', async () => {
  const b = new CircuitBreaker(() => { throw new TypeError('sync'); }, { registry: Registry.manualClock(), failureThreshold: 1 });
  await assert.rejects(b.fire(), TypeError);
  assert.strictEqual(b.state, 'open');
});

test('forced open rejects with retryAfter Infinity until reset', async () => {
  const b = new CircuitBreaker(async () => 1, { registry: Registry.manualClock() });
  b.forceOpen();
  const error = await b.fire().catch((e) => e);
  assert.strictEqual(error.retryAfter, Infinity);
  assert.strictEqual(b.state, 'forced_open');
  b.reset();
  assert.strictEqual(await b.fire(), 1);
  b.disable();
  assert.strictEqual(b.state, 'disabled');
});

test('the two-step form: a Permit or null, reported once', () => {
  const b = Registry.manualClock().getOrCreate('two', { failureThreshold: 1, halfOpenMaxCalls: 1 });
  const p = b.tryAcquire();
  assert.ok(p instanceof Permit);
  assert.strictEqual(p.reported, null);
  p.ignore();
  assert.strictEqual(p.reported, 'ignore');
  assert.throws(() => p.success(), /already reported \(ignore\)/);
  b.tryAcquire().success();
  b.tryAcquire().failure();
  assert.strictEqual(b.tryAcquire(), null);
  assert.deepStrictEqual([b.stats().successes, b.stats().failures, b.stats().ignored, b.stats().rejected], [1, 1, 1, 1]);
  assert.throws(() => new Permit(), TypeError);
});

test('errorFilter: a filtered error is reported as ignored and still rejects', async () => {
  const b = new CircuitBreaker(async (code) => { const e = new Error('http'); e.status = code; throw e; },
    { registry: Registry.manualClock(), failureThreshold: 1, errorFilter: (e) => e.status === 404 });
  await assert.rejects(b.fire(404), /http/);
  assert.strictEqual(b.state, 'closed');
  assert.strictEqual(b.stats().ignored, 1);
  await assert.rejects(b.fire(500), /http/);
  assert.strictEqual(b.state, 'open');
});

test('a throwing errorFilter fails the call with its error', async () => {
  const b = new CircuitBreaker(failing, { registry: Registry.manualClock(), failureThreshold: 1,
    errorFilter: () => { throw new Error('filter broke'); } });
  await assert.rejects(b.fire(), /filter broke/);
  assert.strictEqual(b.state, 'open');
});

test('a throwing listener does not hold back the transitions', async () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock(), failureThreshold: 1 });
  const opened = [];
  b.on('failure', () => { throw new Error('listener'); });
  b.on('open', (t) => opened.push(t.reason));
  assert.throws(() => b.tryAcquire().failure(), /listener/);
  assert.deepStrictEqual(opened, ['consecutive_failures']);
});

test('timeout: a call longer than it fails with TimeoutError', async () => {
  const b = new CircuitBreaker(() => new Promise(() => {}), { registry: Registry.manualClock(), timeout: 5, failureThreshold: 1 });
  const timeouts = [];
  b.on('timeout', (e) => timeouts.push(e));
  await assert.rejects(b.fire(), (e) => e instanceof TimeoutError && e.code === 'ETIMEDOUT');
  assert.strictEqual(timeouts.length, 1);
  assert.strictEqual(b.state, 'open');
});

test('execute with an AbortSignal: the listener is removed after the call', async () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock() });
  const controller = new AbortController();
  let seen;
  const result = b.execute(async ({ signal }) => { seen = signal; return 'done'; }, controller.signal);
  assert.strictEqual(getEventListeners(controller.signal, 'abort').length, 1);
  assert.strictEqual(await result, 'done');
  assert.strictEqual(seen, controller.signal);
  assert.strictEqual(getEventListeners(controller.signal, 'abort').length, 0);
  await assert.rejects(b.execute(failing, controller.signal), /down/);
  assert.strictEqual(getEventListeners(controller.signal, 'abort').length, 0);
});

test('an abort rejects with its reason and reports the call as ignored', async () => {
  const b = new CircuitBreaker(null, { registry: Registry.manualClock(), failureThreshold: 1 });
  const controller = new AbortController();
  const pending = b.execute(() => new Promise(() => {}), controller.signal);
  controller.abort(new Error('stop'));
  await assert.rejects(pending, /stop/);
  assert.strictEqual(b.stats().ignored, 1);
  assert.strictEqual(b.state, 'closed');
  assert.strictEqual(getEventListeners(controller.signal, 'abort').length, 0);
  // already aborted: not even admitted
  await assert.rejects(b.execute(async () => 1, controller.signal), /stop/);
  assert.strictEqual(b.stats().admitted, 1);
  await assert.rejects(b.execute(async () => 1, 'signal'), TypeError);
  await assert.rejects(b.execute('fn'), TypeError);
  await assert.rejects(b.fire(), /no action/);
});

test('getOrCreate: one breaker per name, its configuration checked', () => {
  const registry = Registry.manualClock();
  const a = registry.getOrCreate('db', { failureThreshold: 1 });
  const b = registry.getOrCreate('db', { failureThreshold: 1 });
  a.tryAcquire().failure();
  assert.strictEqual(b.state, 'open');
  assert.strictEqual(b.name, 'db');
  assert.throws(() => registry.getOrCreate('db', { failureThreshold: 2 }), (e) => e.code === 'CB_EEXIST' || e.code === 'CB_EINVAL');
});

test('a full registry says so', () => {
  const registry = Registry.manualClock({ capacity: 1 });
  registry.getOrCreate('one');
  assert.throws(() => registry.getOrCreate('two'), (e) => e.code === 'CB_EFULL');
});

test('metrics: Prometheus text with the breaker and its state', () => {
  const registry = Registry.manualClock();
  registry.getOrCreate('payments', { failureThreshold: 1 }).tryAcquire().failure();
  const text = registry.metrics();
  assert.match(text, /# TYPE lazybreaker_state gauge/);
  assert.match(text, /lazybreaker_state\{[^}]*breaker="payments",state="open"[^}]*\} 1/);
});

test('a registry file is shared by the registries that open it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lazybreaker-node-'));
  const file = path.join(dir, 'breakers.lbr');
  try {
    const first = Registry.open({ path: file, create: true });
    const second = Registry.open({ path: file });
    first.getOrCreate('shared', { failureThreshold: 1 }).tryAcquire().failure();
    assert.match(second.metrics(), /breaker="shared",state="open"\} 1/);
    assert.strictEqual(second.getOrCreate('shared', { failureThreshold: 1 }).state, 'open');
    first.close();
    second.close();
    assert.ok(first.closed);
    first.close(); // again: nothing
    assert.throws(() => Registry.open({ path: path.join(dir, 'missing.lbr') }), (e) => e.code === 'CB_ENOENT' || e.code === 'CB_EIO');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a breaker of a closed registry throws', () => {
  const registry = Registry.manualClock();
  const b = registry.getOrCreate('gone');
  registry.close();
  assert.throws(() => b.tryAcquire(), (e) => e.code === 'CB_EHANDLE');
});

test('the package: version is the header\'s, entry points agree', async () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  assert.strictEqual(pkg.version, lazybreaker.version);
  if (process.env.LB_VERSION) assert.strictEqual(pkg.version, process.env.LB_VERSION);
  assert.deepStrictEqual(Object.keys(pkg.exports['.']), ['types', 'import', 'require']);
  const esm = await import('../index.mjs');
  assert.strictEqual(esm.CircuitBreaker, CircuitBreaker);
  assert.strictEqual(esm.Registry, Registry);
  assert.strictEqual(esm.default, lazybreaker);
  assert.strictEqual(require('lazybreaker'), lazybreaker); // the package's own name, through exports
});

test('a rejection carries no stack frames and leaves Error.stackTraceLimit as it was', async () => {
  const registry = Registry.manualClock();
  const breaker = registry.getOrCreate('stackless', { failureThreshold: 1 });
  breaker.forceOpen();
  const before = Error.stackTraceLimit;
  const error = await breaker.execute(async () => 'never').catch((e) => e);
  assert.ok(error instanceof CircuitOpenError);
  assert.strictEqual(error.stack.split('\n').length, 1, error.stack);
  assert.match(error.stack, /^CircuitOpenError: lazybreaker: the breaker 'stackless' is forced_open/);
  assert.strictEqual(Error.stackTraceLimit, before);
  assert.ok(new Error('mine').stack.split('\n').length > 1, 'other errors keep their frames');
  registry.close();
});
