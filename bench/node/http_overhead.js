'use strict';
// What the HTTP integrations add per request, without the network: wrapFetch
// around a fetch that resolves a ready Response, and the undici interceptor
// around a dispatch that answers 200 at once, each against the same stub
// alone. From the repository, after building the addon:
//   LAZYBREAKER_ADDON=$PWD/build/node/lazybreaker.node node bench/node/http_overhead.js
const { performance } = require('node:perf_hooks');
const { wrapFetch, interceptor, Registry } = require('../../bindings/node');

const ROUNDS = 5;
const CALLS = 200_000;
const URL_TEXT = 'http://127.0.0.1:8080/users/42';

async function timePerCall(call) {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) await call();
    best = Math.min(best, ((performance.now() - start) * 1e6) / CALLS);
  }
  return best;
}

function stubDispatch(opts, handler) {
  handler.onRequestStart?.({ abort() {}, aborted: false }, {});
  handler.onResponseStart?.(null, 200, {}, 'OK');
  handler.onResponseEnd?.(null, {});
  return true;
}

async function main() {
  const registry = Registry.manualClock();
  const response = new Response(null, { status: 200 });
  const stubFetch = async () => response;
  const guardedFetch = wrapFetch(stubFetch, { registry });
  const guardedDispatch = interceptor({ registry })(stubDispatch);
  const opts = { origin: 'http://127.0.0.1:8080', path: '/users/42', method: 'GET' };
  const rows = [
    ['fetch stub alone', await timePerCall(() => stubFetch(URL_TEXT))],
    ['wrapFetch(fetch stub)', await timePerCall(() => guardedFetch(URL_TEXT))],
    ['dispatch stub alone', await timePerCall(() => stubDispatch(opts, {}))],
    ['interceptor(dispatch stub)', await timePerCall(() => guardedDispatch(opts, {}))],
  ];
  console.log(`node ${process.versions.node}, best of ${ROUNDS} rounds of ${CALLS} calls`);
  for (const [what, ns] of rows) console.log(`${what.padEnd(28)} ${ns.toFixed(0).padStart(6)} ns/call`);
}
main();
