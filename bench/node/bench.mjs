// The Node table (`make bench`; bench/node/CMakeLists.txt runs it with the
// Node 22 that bench/node/dev-dependencies.json pins): lazybreaker beside
// opossum and cockatiel, per call, per rejection, per breaker created and
// through cluster workers, printed as markdown. --quick: a few small rounds of everything, for the
// smoke test (its figures mean nothing).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { load, makeBreakers, openAll, action, failing } from './contenders.mjs';
import { interleave, median } from './rounds.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const quick = process.argv.includes('--quick');
const SIZES = quick
  ? { rounds: 3, batch: 300, syncBatch: 3000, creates: [1_000], createRounds: 1, opossumCap: 500,
    workers: 2, clusterCalls: 300, clusterRounds: 1 }
  : { rounds: 31, batch: 20_000, syncBatch: 500_000, creates: [10_000, 1_000_000], createRounds: 3,
    opossumCap: 100_000, workers: 4, clusterCalls: 250_000, clusterRounds: 3 };

const packages = await load();
const { lazybreaker, versions } = packages;
const registry = lazybreaker.Registry.open({ capacity: 64 });

const int = (x) => Math.round(x).toLocaleString('en-US');
const ns = (x) => `${x < 100 ? x.toFixed(1) : int(x)} ns`;
const ratio = (x, base) => `${(x / base).toFixed(x / base < 10 ? 2 : 1)}×`;

const rows = [];

async function callRow(title, contenders, floor) {
  const ops = Object.fromEntries(Object.entries(contenders).map(([name, c]) => [name, c.call]));
  if (floor) ops.floor = floor;
  const t = await interleave(ops, { rounds: SIZES.rounds, batch: SIZES.batch });
  rows.push([title, ns(t.lazybreaker), `${ns(t.opossum)} (${ratio(t.opossum, t.lazybreaker)})`,
    `${ns(t.cockatiel)} (${ratio(t.cockatiel, t.lazybreaker)})`, floor ? ns(t.floor) : '']);
}

const closed = makeBreakers(packages, registry);
const floor = () => action();
await callRow('CLOSED call: `fire` / `execute`, consecutive (cockatiel ConsecutiveBreaker)',
  closed.consecutive, floor);
await callRow('count window of 100 (cockatiel CountBreaker; opossum: rolling 10 s)', closed.countWindow, floor);
await callRow('time window of 10 s (cockatiel SamplingBreaker; opossum: rolling 10 s)', closed.timeWindow, floor);

const open = makeBreakers(packages, registry, failing).consecutive;
await openAll(open, packages);
await callRow('OPEN: a rejected call, caught', open, null);

const pairBreaker = new lazybreaker.CircuitBreaker(null, { registry, failureThreshold: 5 });
const pair = await interleave({ lazybreaker: () => pairBreaker.tryAcquire().success() },
  { rounds: SIZES.rounds, batch: SIZES.syncBatch, sync: true });
rows.push(['`tryAcquire()` + `permit.success()` (no Promise), per pair', ns(pair.lazybreaker), '', '', '']);

function child(script, args) {
  const run = spawnSync(process.execPath, ['--expose-gc', path.join(here, script), ...args.map(String)],
    { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`bench: ${script} ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop());
}

function createRow(n) {
  const kinds = ['lazybreaker', 'opossum', 'cockatiel'];
  const counts = { lazybreaker: n, opossum: Math.min(n, SIZES.opossumCap), cockatiel: n };
  const samples = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let round = 0; round < SIZES.createRounds; round++) {
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(round + k) % kinds.length];
      samples[kind].push(child('footprint.mjs', [kind, counts[kind]]));
    }
  }
  const m = Object.fromEntries(kinds.map((k) => [k, {
    seconds: median(samples[k].map((s) => s.seconds)),
    heap: median(samples[k].map((s) => s.heapBytes)),
    rss: median(samples[k].map((s) => s.rssBytes)),
  }]));
  const base = m.lazybreaker;
  const cell = (kind) => {
    const x = m[kind];
    const capped = counts[kind] < n ? `, capped: ${int(counts[kind])} made` : '';
    return `${x.seconds.toFixed(3)} s${capped}; heap+external ${int(x.heap)} B (${ratio(x.heap, base.heap)}), ` +
      `rss ${int(x.rss)} B (${ratio(x.rss, base.rss)}) per breaker`;
  };
  rows.push([`create ${int(n)} breakers`,
    `${base.seconds.toFixed(3)} s; heap+external ${int(base.heap)} B, rss ${int(base.rss)} B per breaker`,
    cell('opossum'), cell('cockatiel'), '']);
}

for (const n of SIZES.creates) createRow(n);

const throughput = { lazybreaker: [], opossum: [] };
for (let round = 0; round < SIZES.clusterRounds; round++) {
  for (const kind of round % 2 ? ['opossum', 'lazybreaker'] : ['lazybreaker', 'opossum']) {
    throughput[kind].push(child('cluster.mjs', [kind, SIZES.workers, SIZES.clusterCalls]).callsPerSecond);
  }
}
const perSecond = { lazybreaker: median(throughput.lazybreaker), opossum: median(throughput.opossum) };
rows.push([`${SIZES.workers} cluster workers, ${int(SIZES.clusterCalls)} \`fire\` each: calls/s in all ` +
  '(lazybreaker: one breaker of a shared registry file; opossum: a breaker per worker)',
`${int(perSecond.lazybreaker)}/s`, `${int(perSecond.opossum)}/s (${ratio(perSecond.opossum, perSecond.lazybreaker)})`,
'', '']);

const print = (cells) => console.log(`| ${cells.join(' | ')} |`);
console.log(`Node ${process.versions.node} (${process.execPath}); opossum ${versions.opossum}, ` +
  `cockatiel ${versions.cockatiel}. Medians of ${SIZES.rounds} rounds of ${int(SIZES.batch)} awaited calls ` +
  `(${int(SIZES.syncBatch)} pairs), the contenders alternating; creation: ${SIZES.createRounds} fresh ` +
  `process(es) each (node --expose-gc), memory after a full collection; cluster: median of ` +
  `${SIZES.clusterRounds} run(s). (×): the contender's figure over lazybreaker's. opossum runs with ` +
  '`timeout: false` (its default of 10 s arms a timer per call).');
console.log('');
print(['Row', 'lazybreaker', `opossum ${versions.opossum}`, `cockatiel ${versions.cockatiel}`, '`await fn()`']);
print(['---', '---:', '---:', '---:', '---:']);
for (const row of rows) print(row);

registry.close();
