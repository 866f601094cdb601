// The contenders: lazybreaker (this build's bindings/node), opossum and
// cockatiel (the versions bench/node/dev-dependencies.json pins, from the
// build folder), each set up as one policy the others also have. Every
// breaker wraps the same action, and `await action()` is the floor.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(import.meta.url);

const PACKAGES = ['opossum', 'cockatiel'];

/** The build folder's node_modules (cmake/npm-install.sh put them there). */
export function modulesDir() {
  const dir = process.env.LB_BENCH_NODE_MODULES;
  if (!dir) throw new Error('bench/node: LB_BENCH_NODE_MODULES must name the node_modules of bench/node\'s packages');
  return dir;
}

export async function load() {
  const modules = modulesDir();
  // LB_BENCH_NODE_PACKAGE: another copy of bindings/node, to compare two versions.
  const packageDir = process.env.LB_BENCH_NODE_PACKAGE || path.join(here, '..', '..', 'bindings', 'node');
  const lazybreaker = require(path.join(packageDir, 'index.cjs'));
  const opossum = require(path.join(modules, 'opossum'));
  const cockatiel = await import(pathToFileURL(path.join(modules, 'cockatiel', 'dist', 'index.js')).href);
  // The versions the table names: what is installed.
  const versions = {};
  for (const name of PACKAGES) versions[name] = require(path.join(modules, name, 'package.json')).version;
  return { lazybreaker, opossum, cockatiel, versions };
}

export const action = async () => 1;
export const failing = async () => {
  throw new Error('bench: the failure that opens the breaker');
};

const RESET_MS = 60_000;
const WINDOW = { size: 100, volume: 20, percent: 50, durationMs: 10_000, buckets: 10 };

/** The breakers around `fn` of each per-call row, keyed by policy, for each package.
 * opossum's `timeout` is off (its default of 10 s arms a timer per call, a
 * cost the others do not have); its statistics are always a rolling time
 * window, so it is the same in every row. */
export function makeBreakers({ lazybreaker, opossum: Opossum, cockatiel }, registry, fn = action) {
  const { CircuitBreaker } = lazybreaker;
  const { circuitBreaker, handleAll, ConsecutiveBreaker, CountBreaker, SamplingBreaker } = cockatiel;
  const opossum = () => new Opossum(fn, {
    timeout: false, resetTimeout: RESET_MS, errorThresholdPercentage: WINDOW.percent,
    volumeThreshold: WINDOW.volume, rollingCountTimeout: WINDOW.durationMs, rollingCountBuckets: WINDOW.buckets,
  });
  const cockatielWith = (breaker) => circuitBreaker(handleAll, { halfOpenAfter: RESET_MS, breaker });
  const breakers = {
    consecutive: {
      lazybreaker: new CircuitBreaker(fn, { registry, failureThreshold: 5, resetTimeout: RESET_MS }),
      opossum: opossum(),
      cockatiel: cockatielWith(new ConsecutiveBreaker(5)),
    },
    countWindow: {
      lazybreaker: new CircuitBreaker(fn, { registry, windowSize: WINDOW.size, volumeThreshold: WINDOW.volume,
        errorThresholdPercentage: WINDOW.percent, resetTimeout: RESET_MS }),
      opossum: opossum(),
      cockatiel: cockatielWith(new CountBreaker({ threshold: WINDOW.percent / 100, size: WINDOW.size,
        minimumNumberOfCalls: WINDOW.volume })),
    },
    timeWindow: {
      lazybreaker: new CircuitBreaker(fn, { registry, rollingCountTimeout: WINDOW.durationMs,
        rollingCountBuckets: WINDOW.buckets, volumeThreshold: WINDOW.volume,
        errorThresholdPercentage: WINDOW.percent, resetTimeout: RESET_MS }),
      opossum: opossum(),
      cockatiel: cockatielWith(new SamplingBreaker({ threshold: WINDOW.percent / 100, duration: WINDOW.durationMs })),
    },
  };
  // cockatiel's policy is called with the function; the others hold theirs.
  const calls = {
    lazybreaker: (breaker) => () => breaker.fire(),
    opossum: (breaker) => () => breaker.fire(),
    cockatiel: (policy) => () => policy.execute(fn),
  };
  const out = {};
  for (const [policy, each] of Object.entries(breakers)) {
    out[policy] = {};
    for (const [name, breaker] of Object.entries(each)) out[policy][name] = { breaker, call: calls[name](breaker) };
  }
  return out;
}

/** Calls each contender (from makeBreakers around `failing`) until it
 * rejects, and checks that the next call is a rejection: the proof that the
 * OPEN row measures rejections. */
export async function openAll(contenders, { lazybreaker, cockatiel }) {
  const isRejection = {
    lazybreaker: (error) => error instanceof lazybreaker.CircuitOpenError,
    opossum: (error) => error?.code === 'EOPENBREAKER',
    cockatiel: (error) => error instanceof cockatiel.BrokenCircuitError,
  };
  for (const [name, { call }] of Object.entries(contenders)) {
    let rejected = false;
    for (let i = 0; i < 50 && !rejected; i++) {
      try {
        await call();
      } catch (error) {
        rejected = isRejection[name](error);
      }
    }
    if (!rejected) throw new Error(`bench: ${name}'s breaker did not open after 50 failures`);
    try {
      await call();
    } catch (error) {
      if (isRejection[name](error)) continue;
      throw error;
    }
    throw new Error(`bench: ${name}'s open breaker admitted a call`);
  }
}
