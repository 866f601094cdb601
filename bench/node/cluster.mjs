// Throughput of node:cluster workers calling fire in a loop
// (node cluster.mjs PACKAGE WORKERS CALLS): every worker makes CALLS calls,
// all starting together once all are ready; prints one line of JSON with
// the total calls per second. lazybreaker's workers share one breaker of a
// registry file (docs/node.md, "Cluster workers sharing a file"); opossum's
// each have their own breaker, as opossum has nothing to share.
import cluster from 'node:cluster';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load, action } from './contenders.mjs';

const [kind, workerCount, callCount] = process.argv.slice(2);
const workers = Number(workerCount);
const calls = Number(callCount);
if (!['lazybreaker', 'opossum'].includes(kind) || !(workers >= 1) || !(calls >= 1)) {
  console.error('usage: node cluster.mjs lazybreaker|opossum WORKERS CALLS');
  process.exit(2);
}

async function breakerOfWorker() {
  const packages = await load();
  if (kind === 'opossum') return new packages.opossum(action, { timeout: false, resetTimeout: 60_000 });
  const registry = packages.lazybreaker.Registry.open({ path: process.env.LB_BENCH_REGISTRY });
  return registry.getOrCreate('bench', { action, failureThreshold: 5, resetTimeout: 60_000 });
}

async function worker() {
  const breaker = await breakerOfWorker();
  process.on('message', async () => {
    for (let i = 0; i < calls; i++) await breaker.fire();
    process.send('done', () => process.exit(0));
  });
  process.send('ready');
}

async function primary() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lb-bench-cluster-'));
  const file = path.join(dir, 'breakers.lbr');
  if (kind === 'lazybreaker') {
    const { lazybreaker } = await load();
    lazybreaker.Registry.open({ path: file, create: true, capacity: 16 }).close();
  }
  const forked = [];
  for (let i = 0; i < workers; i++) forked.push(cluster.fork({ LB_BENCH_REGISTRY: file }));
  const when = (message) => Promise.all(forked.map((w) => new Promise((resolve, reject) => {
    w.on('message', (m) => m === message && resolve());
    w.on('exit', (code) => code !== 0 && reject(new Error(`cluster.mjs: a worker exited with ${code}`)));
  })));
  await when('ready');
  const start = process.hrtime.bigint();
  const done = when('done');
  for (const w of forked) w.send('go');
  await done;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ kind, workers, calls, seconds, callsPerSecond: (workers * calls) / seconds }));
}

await (cluster.isPrimary ? primary() : worker());
