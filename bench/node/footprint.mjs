// The footprint of N breakers of one package, in a process of its own
// (node --expose-gc footprint.mjs PACKAGE N): the time to create them, and
// the growth of heapUsed + external and of rss after a full collection,
// per breaker, printed as one line of JSON. lazybreaker's breakers are
// anonymous, in a private registry of capacity N opened inside the
// measurement (its slots are part of what they cost).
import { load, action } from './contenders.mjs';

const [kind, count] = process.argv.slice(2);
const n = Number(count);
if (!['lazybreaker', 'opossum', 'cockatiel'].includes(kind) || !Number.isInteger(n) || n < 1) {
  console.error('usage: node --expose-gc footprint.mjs lazybreaker|opossum|cockatiel N');
  process.exit(2);
}
if (typeof globalThis.gc !== 'function') {
  console.error('footprint.mjs: run it with node --expose-gc');
  process.exit(2);
}

const packages = await load();
const makers = {
  lazybreaker: () => {
    const { CircuitBreaker, Registry } = packages.lazybreaker;
    const registry = Registry.open({ capacity: n });
    return () => new CircuitBreaker(action, { registry, failureThreshold: 5, resetTimeout: 60_000 });
  },
  opossum: () => () => new packages.opossum(action, { timeout: false, resetTimeout: 60_000 }),
  cockatiel: () => {
    const { circuitBreaker, handleAll, ConsecutiveBreaker } = packages.cockatiel;
    return () => circuitBreaker(handleAll, { halfOpenAfter: 60_000, breaker: new ConsecutiveBreaker(5) });
  },
};

function settled() {
  globalThis.gc();
  globalThis.gc();
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heap: heapUsed + external, rss };
}

const before = settled();
const start = process.hrtime.bigint();
const make = makers[kind]();
const breakers = new Array(n);
for (let i = 0; i < n; i++) breakers[i] = make();
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const after = settled();
console.log(JSON.stringify({
  kind, n, seconds,
  heapBytes: (after.heap - before.heap) / n,
  rssBytes: (after.rss - before.rss) / n,
  kept: breakers.length,
}));
// opossum's breakers each hold an interval timer (unref'd): leave now.
process.exit(0);
