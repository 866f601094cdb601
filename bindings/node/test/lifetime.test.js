'use strict';
// Lifetimes: a process with 10,000 breakers exits by itself (nothing keeps
// it alive), and what a program drops is given back when it is collected:
// an anonymous breaker's slot, an unclosed registry; over 100,000 breakers
// made and dropped, neither the registry nor the process keeps growing.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { CircuitBreaker, Registry } = require('..');
const native = require('../lib/native');

assert.ok(global.gc, 'run with --expose-gc (cmake/node.cmake does)');

// FinalizationRegistry callbacks run in a later task than the collection.
async function collect(rounds = 3) {
  for (let i = 0; i < rounds; i++) {
    global.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// The registry's live breakers: its metrics' lazybreaker_breakers gauge.
function liveBreakers(registry) {
  return Number(/^lazybreaker_breakers (\d+)$/m.exec(registry.metrics())[1]);
}

test('a script with 10,000 breakers exits by itself', () => {
  const script = path.join(__dirname, 'ten_thousand.js');
  const run = spawnSync(process.execPath, [script], { env: process.env, encoding: 'utf8', timeout: 60000 });
  assert.strictEqual(run.error, undefined, 'it did not exit within 60 s');
  assert.strictEqual(run.status, 0, run.stderr);
  assert.strictEqual(run.stdout.trim(), '10000 breakers, 10000 calls');
});

test('dropped anonymous breakers give their slots back', async () => {
  const registry = Registry.manualClock({ capacity: 100 });
  const make = () => { for (let i = 0; i < 100; i++) new CircuitBreaker(() => i, { registry }); };
  make();
  assert.throws(() => new CircuitBreaker(() => 0, { registry }), (e) => e.code === 'CB_EFULL');
  await collect();
  make(); // 100 more fit: the first were destroyed when collected
  registry.close();
});

test('a named breaker stays in its registry when its object is dropped', async () => {
  const registry = Registry.manualClock({ capacity: 1 });
  registry.getOrCreate('kept', { failureThreshold: 1 }).tryAcquire().failure();
  await collect();
  assert.strictEqual(registry.getOrCreate('kept', { failureThreshold: 1 }).state, 'open');
  registry.close();
});

test('dropped registries are closed when collected', async () => {
  await collect();
  const before = native.openRegistries();
  (() => { for (let i = 0; i < 200; i++) Registry.manualClock({ capacity: 4 }).getOrCreate('x').tryAcquire().success(); })();
  assert.ok(native.openRegistries() >= before + 1);
  await collect();
  assert.strictEqual(native.openRegistries(), before);
});

test('100,000 breakers made and dropped leave no breaker, registry or memory behind', { timeout: 120000 }, async () => {
  const BATCH = 10000;
  const NAMED = 1000;
  // The anonymous breakers' registry holds one batch: a batch whose slots
  // were not given back would leave no room for the next (CB_EFULL).
  const registry = Registry.open({ capacity: BATCH });
  await collect();
  const registries = native.openRegistries();
  const batch = () => {
    for (let i = 0; i < BATCH; i++) new CircuitBreaker(null, { registry, failureThreshold: 3 }).tryAcquire().success();
    const named = Registry.manualClock({ capacity: NAMED });
    for (let i = 0; i < NAMED; i++) named.getOrCreate(`named-${i}`, { failureThreshold: 1 }).tryAcquire().failure();
    named.close();
  };
  // V8's heap and the allocator's arenas grow to their working size over
  // the first batches; RSS is compared from then on.
  const WARM_UP = 5;
  const BATCHES = WARM_UP + 100000 / BATCH;
  let first;
  let warm;
  for (let made = 1; made <= BATCHES; made++) {
    batch();
    await collect(6);
    assert.strictEqual(liveBreakers(registry), 0, `after ${made * BATCH} breakers`);
    assert.strictEqual(native.openRegistries(), registries);
    if (made === 1) first = process.memoryUsage();
    if (made === WARM_UP) warm = process.memoryUsage();
  }
  const last = process.memoryUsage();
  const MB = 1e6;
  // A leak of 100 bytes a breaker would be 9 MB of heap and 10 MB of RSS.
  assert.ok(last.heapUsed - first.heapUsed < 2 * MB,
    `heapUsed grew from ${first.heapUsed / MB} MB to ${last.heapUsed / MB} MB`);
  // Under a sanitizer (LB_SANITIZE, build-asan) RSS is the sanitizer's:
  // ASan keeps freed memory in quarantine, so only the heap is compared.
  if (!process.env.LB_SANITIZE) {
    assert.ok(last.rss - warm.rss < 6 * MB, `rss grew from ${warm.rss / MB} MB to ${last.rss / MB} MB`);
  }
  registry.close();
});
