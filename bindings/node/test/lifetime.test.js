'use strict';
// Lifetimes: a process with 10,000 breakers exits by itself (nothing keeps
// it alive), and what a program drops is given back when it is collected:
// an anonymous breaker's slot, an unclosed registry.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { CircuitBreaker, Registry } = require('..');
const native = require('../lib/native');

assert.ok(global.gc, 'run with --expose-gc (cmake/node.cmake does)');

// FinalizationRegistry callbacks run in a later task than the collection.
async function collect() {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
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
