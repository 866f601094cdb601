'use strict';
// wrapFetch against loopback servers (docs/http.md, "Outcomes"): 5xx,
// refused connections and timeouts fail; other answers succeed; the
// caller's abort is ignored; 429/503 with Retry-After trip for exactly that
// long; while open nothing is sent and the caller gets CircuitOpenError.
const test = require('node:test');
const assert = require('node:assert');
const { wrapFetch, Registry, CircuitOpenError, httpBreakerName } = require('..');
const { retryAfterNs } = require('../lib/upstream');
const { FIELDS } = require('../lib/config');
const { startUpstream, closedPort } = require('./http_upstream');

const settings = { failureThreshold: 2, resetTimeout: 60000 };
const MAX_OPEN_NS = BigInt(FIELDS.find((f) => f.field === 'open_duration_ns').hi);

async function setup(t) {
  const upstream = await startUpstream();
  t.after(() => upstream.close());
  const registry = Registry.manualClock();
  const fetch = wrapFetch(globalThis.fetch, { registry, settings });
  const breaker = () => registry.getOrCreate(httpBreakerName(upstream.url), settings);
  return { upstream, registry, fetch, breaker };
}

const status = (fetch, url, init) => fetch(url, init).then(async (r) => { await r.arrayBuffer(); return r.status; });

test('5xx answers are failures that open the origin\'s breaker; then nothing is sent', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([500], [502]);
  assert.strictEqual(await status(fetch, `${upstream.url}/a`), 500);
  assert.strictEqual(await status(fetch, `${upstream.url}/b`), 502);
  assert.strictEqual(breaker().state, 'open');
  const error = await fetch(`${upstream.url}/c`).catch((e) => e);
  assert.ok(error instanceof CircuitOpenError);
  assert.strictEqual(error.retryAfter, 60000);
  assert.strictEqual(error.breaker, httpBreakerName(upstream.url));
  assert.strictEqual(upstream.requests, 2, 'nothing was sent while open');
});

test('4xx and 2xx answers are successes', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([404], [400], [200], [429]);
  for (const expected of [404, 400, 200, 429]) assert.strictEqual(await status(fetch, upstream.url), expected);
  const stats = breaker().stats();
  assert.strictEqual(stats.successes, 4);
  assert.strictEqual(stats.failures, 0);
});

test('a refused connection is a failure', async (t) => {
  const registry = Registry.manualClock();
  const fetch = wrapFetch(undefined, { registry, settings: { failureThreshold: 1 } });
  const url = `http://127.0.0.1:${await closedPort()}/`;
  await assert.rejects(fetch(url), (e) => e instanceof TypeError && !(e instanceof CircuitOpenError));
  assert.strictEqual(registry.getOrCreate(httpBreakerName(url), { failureThreshold: 1 }).state, 'open');
  await assert.rejects(fetch(url), CircuitOpenError);
});

test('a timeout (AbortSignal.timeout) is a failure', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push(['hang']);
  await assert.rejects(fetch(upstream.url, { signal: AbortSignal.timeout(50) }), { name: 'TimeoutError' });
  assert.strictEqual(breaker().stats().failures, 1);
});

test('the caller\'s abort is ignored', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push(['hang']);
  const controller = new AbortController();
  const pending = fetch(upstream.url, { signal: controller.signal });
  await upstream.arrived;
  controller.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  const stats = breaker().stats();
  assert.deepStrictEqual([stats.ignored, stats.failures, stats.successes], [1, 0, 0]);
  await assert.rejects(fetch(upstream.url, { signal: controller.signal }), { name: 'AbortError' });
  assert.strictEqual(breaker().stats().admitted, 1, 'an aborted signal asks no breaker');
});

test('a 429 with Retry-After trips for exactly that long; the probe after it closes', async (t) => {
  const { upstream, registry, fetch, breaker } = await setup(t);
  upstream.script.push([429, { 'Retry-After': '120' }]);
  assert.strictEqual(await status(fetch, upstream.url), 429);
  assert.strictEqual(breaker().state, 'open');
  assert.strictEqual(breaker().retryAfterNs, 120_000_000_000n);
  registry.advance(119_999);
  await assert.rejects(fetch(upstream.url), (e) => e instanceof CircuitOpenError && e.retryAfter === 1);
  registry.advance(1);
  assert.strictEqual(await status(fetch, upstream.url), 200, 'the probe at exactly 120 s');
  assert.strictEqual(breaker().state, 'closed');
  assert.strictEqual(upstream.requests, 2);
});

test('a 503 with Retry-After trips for exactly that long; without it, it is a failure', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([503], [503, { 'retry-after': '7' }]);
  await status(fetch, upstream.url);
  assert.strictEqual(breaker().state, 'closed');
  assert.strictEqual(breaker().stats().failures, 1);
  await status(fetch, upstream.url);
  assert.strictEqual(breaker().retryAfterNs, 7_000_000_000n, 'the Retry-After, not the 60 s of resetTimeout');
});

test('a Retry-After as an HTTP date trips until that date', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([429, { 'Retry-After': new Date(Date.now() + 90_000).toUTCString() }]);
  await status(fetch, upstream.url);
  const ns = breaker().retryAfterNs;
  assert.ok(ns > 88_000_000_000n && ns <= 90_000_000_000n, `${ns} ns`);
  const now = Date.parse('Thu, 01 Jan 2026 00:00:00 GMT');
  assert.strictEqual(retryAfterNs('Thu, 01 Jan 2026 00:01:30 GMT', now), 90_000_000_000n);
  assert.strictEqual(retryAfterNs('Wed, 31 Dec 2025 23:59:00 GMT', now), null);
  assert.strictEqual(retryAfterNs('soon', now), null);
  assert.strictEqual(retryAfterNs(' 7 ', now), 7_000_000_000n);
  assert.strictEqual(retryAfterNs('0', now), null);
});

test('a Retry-After past the library\'s longest open duration trips for that longest', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([429, { 'Retry-After': '99999999999' }]);
  await status(fetch, upstream.url);
  assert.strictEqual(breaker().retryAfterNs, MAX_OPEN_NS);
});

test('a 429 without Retry-After, or with one unreadable, trips nothing', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([429], [429, { 'Retry-After': 'later' }], [429]);
  for (let i = 0; i < 3; i++) await status(fetch, upstream.url);
  assert.strictEqual(breaker().state, 'closed');
});

test('each origin has its own breaker, and `name` may name it otherwise', async (t) => {
  const { upstream, registry, fetch } = await setup(t);
  const other = await startUpstream();
  t.after(() => other.close());
  upstream.script.push([500], [500]);
  await status(fetch, upstream.url);
  await status(fetch, upstream.url);
  assert.strictEqual(await status(fetch, other.url), 200, 'another origin, another breaker');
  const named = wrapFetch(null, { registry, name: (url) => `payments@${url.port}` });
  assert.strictEqual(await status(named, new URL('/x', other.url)), 200);
  assert.strictEqual(registry.getOrCreate(`payments@${other.port}`).stats().successes, 1);
});

test('a Request input is guarded by its URL\'s breaker', async (t) => {
  const { upstream, fetch, breaker } = await setup(t);
  upstream.script.push([500]);
  assert.strictEqual(await status(fetch, new Request(`${upstream.url}/r`)), 500);
  assert.strictEqual(breaker().stats().failures, 1);
});

test('Registry.default is the default registry', async (t) => {
  const upstream = await startUpstream();
  t.after(() => upstream.close());
  assert.strictEqual(await status(wrapFetch(), upstream.url), 200);
  assert.strictEqual(Registry.default.getOrCreate(httpBreakerName(upstream.url)).stats().successes, 1);
});

test('bad options are refused, naming the option, and create nothing', () => {
  const registry = Registry.manualClock();
  assert.throws(() => wrapFetch('fetch'),
                { name: 'TypeError', message: /wrapFetch: fetch must be a function, got "fetch"/ });
  assert.throws(() => wrapFetch(null, { registry: {} }), { name: 'TypeError', message: /registry must be a Registry/ });
  assert.throws(() => wrapFetch(null, { registry, name: 'api' }),
                { name: 'TypeError', message: /name must be a function/ });
  assert.throws(() => wrapFetch(null, { registry, retries: 3 }),
                { name: 'TypeError', message: /unknown option retries/ });
  assert.throws(() => wrapFetch(null, { registry, settings: { resetTimout: 1 } }),
                { name: 'TypeError', message: /unknown option resetTimout/ });
  assert.throws(() => wrapFetch(null, { registry, settings: { resetTimeout: 0 } }),
                { name: 'RangeError', message: /resetTimeout must be/ });
  assert.throws(() => wrapFetch(null, { registry, settings: { name: 'x' } }),
                { name: 'TypeError', message: /settings.name is not a setting/ });
  assert.throws(() => wrapFetch(null, 'fast'), { name: 'TypeError', message: /options must be an object/ });
  assert.doesNotMatch(registry.metrics(), /http\//);
});
