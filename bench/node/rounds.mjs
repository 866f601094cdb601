// Rounds: each contender of a row times a batch of calls in turn, the
// order rotating from round to round so that a burst of noise on a shared
// machine falls on all of them; a row's figure is the median of its rounds.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** ns per call of `n` awaited calls of `op`; a call that rejects is caught,
 * as a caller of an open breaker does. */
async function awaitedBatch(op, n) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    try {
      await op();
    } catch {
      // the OPEN row's rejections: caught, nothing else
    }
  }
  return Number(process.hrtime.bigint() - start) / n;
}

/** ns per call of `n` synchronous calls of `op`. */
function syncBatch(op, n) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) op();
  return Number(process.hrtime.bigint() - start) / n;
}

/** { name: median ns per call } for `ops` ({ name: op }), over `rounds`
 * rounds of `batch` calls each, after one batch of each to warm up. */
export async function interleave(ops, { rounds, batch, sync = false }) {
  const names = Object.keys(ops);
  const time = sync ? async (op) => syncBatch(op, batch) : (op) => awaitedBatch(op, batch);
  for (const name of names) await time(ops[name]);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      samples[name].push(await time(ops[name]));
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(samples[name])]));
}
