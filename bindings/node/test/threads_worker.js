'use strict';
// A worker of threads.test.js: takes Registry.default's breaker of the
// given name, says it is ready, then plays its role. The tripper reports
// failures when told to, until the breaker opens; the watcher blocks on the
// shared flag until the main thread has seen the trip, then asks the
// breaker once with each form.
const { parentPort, workerData } = require('node:worker_threads');
const { Registry, CircuitOpenError } = require('..');

const { role, name, options, flag } = workerData;
const breaker = Registry.default.getOrCreate(name, options);

if (role === 'tripper') {
  parentPort.once('message', () => {
    let failures = 0;
    // Bounded: a breaker that never opens ends the loop and fails the test.
    while (breaker.state === 'closed' && failures < 100) {
      const permit = breaker.tryAcquire();
      if (permit === null) break;
      permit.failure();
      failures++;
    }
    parentPort.postMessage({ failures, state: breaker.state });
  });
  parentPort.postMessage({ ready: breaker.state });
} else if (role === 'watcher') {
  parentPort.postMessage({ ready: breaker.state });
  Atomics.wait(new Int32Array(flag), 0, 0);
  const state = breaker.state;
  const permitted = breaker.tryAcquire() !== null;
  breaker.execute(async () => 'admitted').then(
    (value) => parentPort.postMessage({ state, permitted, execute: value }),
    (error) => parentPort.postMessage({ state, permitted, execute: error instanceof CircuitOpenError ? 'CircuitOpenError' : String(error) }));
} else {
  throw new Error(`threads_worker.js: unknown role ${role}`);
}
