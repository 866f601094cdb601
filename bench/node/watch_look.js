'use strict';
// The cost of one look of registry.watch() (bindings/node/lib/watcher.js):
// the mean time to read every tracked breaker's state and compare it with
// the one last seen, over N named breakers (default 10,000), none changed.
//
//   LAZYBREAKER_ADDON=$PWD/build/node/lazybreaker.node node bench/node/watch_look.js [N]
//
// The look is called directly: setInterval is replaced while the watcher
// starts, to capture its callback.
const { performance } = require('node:perf_hooks');
const { Registry } = require('../../bindings/node');

const count = Number(process.argv[2] ?? 10000);
const ROUNDS = 200;
const registry = Registry.open({ capacity: count });
const breakers = [];
for (let i = 0; i < count; i++) breakers.push(registry.getOrCreate(`b${i}`, { failureThreshold: 1 }));

let look;
const realSetInterval = globalThis.setInterval;
globalThis.setInterval = (fn) => {
  look = fn;
  return realSetInterval(() => {}, 2 ** 31 - 1);
};
const watcher = registry.watch();
globalThis.setInterval = realSetInterval;

for (let i = 0; i < ROUNDS / 4; i++) look(); // warm-up
const start = performance.now();
for (let i = 0; i < ROUNDS; i++) look();
const ms = (performance.now() - start) / ROUNDS;
console.log(`one look over ${breakers.length} breakers: ${ms.toFixed(3)} ms ` +
            `(${(ms * 1e6 / count).toFixed(0)} ns a breaker)`);
watcher.stop();
registry.close();
