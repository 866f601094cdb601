'use strict';
// worker_threads share the process's default registry: a breaker of one
// name taken from Registry.default in the main thread and in two workers is
// one breaker. One worker trips it; the main thread and the other worker
// then see it open. The threads wait on messages and on a shared flag with
// Atomics.wait, never on time. The transition event goes to the thread
// whose call drained the queue (the tripper); the main thread's watcher
// reports it as observed.
const test = require('node:test');
const assert = require('node:assert');
const { once } = require('node:events');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { Registry, CircuitOpenError } = require('..');

// Rejects when the worker throws (once() rejects on 'error').
async function next(worker) {
  const [message] = await once(worker, 'message');
  return message;
}

test('workers and the main thread share Registry.default by name', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const name = `threads-${process.pid}`;
  const options = { failureThreshold: 3, resetTimeout: 600000 };
  const breaker = Registry.default.getOrCreate(name, options);
  assert.strictEqual(breaker.state, 'closed');
  const opened = [];
  breaker.on('open', (transition) => opened.push(transition));
  const looks = Registry.default.watch({ interval: 100 });
  t.after(() => looks.stop());

  const flag = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const script = path.join(__dirname, 'threads_worker.js');
  const start = (role) => new Worker(script, { workerData: { role, name, options, flag } });
  const tripper = start('tripper');
  const watcher = start('watcher');
  const exits = [tripper, watcher].map((worker) => once(worker, 'exit'));

  assert.deepStrictEqual(await Promise.all([next(tripper), next(watcher)]),
    [{ ready: 'closed' }, { ready: 'closed' }]);

  tripper.postMessage('trip');
  assert.deepStrictEqual(await next(tripper), { failures: 3, state: 'open' });

  assert.strictEqual(breaker.state, 'open');
  assert.deepStrictEqual(opened, [], 'the tripper\'s call drained the event');
  t.mock.timers.tick(100);
  assert.deepStrictEqual(opened.map(({ from, to, reason }) => [from, to, reason]), [['closed', 'open', 'observed']]);
  assert.ok(breaker.retryAfter > 0, `retryAfter ${breaker.retryAfter}`);
  assert.strictEqual(breaker.tryAcquire(), null);
  await assert.rejects(breaker.execute(async () => 'admitted'), CircuitOpenError);

  const seen = next(watcher);
  const flagView = new Int32Array(flag);
  Atomics.store(flagView, 0, 1);
  Atomics.notify(flagView, 0);
  assert.deepStrictEqual(await seen, { state: 'open', permitted: false, execute: 'CircuitOpenError' });

  // One native breaker counted every thread's calls.
  const stats = breaker.stats();
  assert.strictEqual(stats.failures, 3);
  assert.strictEqual(stats.rejected, 4);
  assert.strictEqual(stats.trips, 1);
  assert.deepStrictEqual((await Promise.all(exits)).map(([code]) => code), [0, 0]);
});
