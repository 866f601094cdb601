'use strict';
// The undici 7 interceptor against loopback servers (docs/http.md,
// "Outcomes"), through undici.request and undici.fetch on a composed Agent.
const test = require('node:test');
const assert = require('node:assert');
const { interceptor, Registry, CircuitOpenError, httpBreakerName } = require('..');
const { devPackage } = require('./dev_package');
const { startUpstream, closedPort } = require('./http_upstream');

const undici = devPackage('undici');
const settings = { failureThreshold: 2, resetTimeout: 60000 };

async function setup(t, agentOptions = {}) {
  const upstream = await startUpstream();
  t.after(() => upstream.close());
  const registry = Registry.manualClock();
  const dispatcher = new undici.module.Agent(agentOptions).compose(interceptor({ registry, settings }));
  t.after(() => dispatcher.close());
  const breaker = () => registry.getOrCreate(httpBreakerName(upstream.url), settings);
  const request = async (url, options = {}) => {
    const response = await undici.module.request(url, { dispatcher, ...options });
    await response.body.dump();
    return response.statusCode;
  };
  return { upstream, registry, dispatcher, breaker, request };
}

function needsUndici(t) {
  if (undici.missing) t.skip(undici.missing);
  return undici.missing === null;
}

test('5xx answers are failures; while open nothing is dispatched and the caller gets CircuitOpenError', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, breaker, request } = await setup(t);
  upstream.script.push([500], [503]);
  assert.strictEqual(await request(`${upstream.url}/a`), 500);
  assert.strictEqual(await request(`${upstream.url}/b`), 503);
  assert.strictEqual(breaker().state, 'open');
  const error = await request(`${upstream.url}/c`).catch((e) => e);
  assert.ok(error instanceof CircuitOpenError, String(error));
  assert.strictEqual(error.retryAfter, 60000);
  assert.strictEqual(upstream.requests, 2);
});

test('other answers are successes', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, breaker, request } = await setup(t);
  upstream.script.push([404], [401], [204], [302, { location: '/elsewhere' }]);
  for (const expected of [404, 401, 204, 302]) assert.strictEqual(await request(upstream.url), expected);
  assert.deepStrictEqual([breaker().stats().successes, breaker().stats().failures], [4, 0]);
});

test('a refused connection is a failure', async (t) => {
  if (!needsUndici(t)) return;
  const registry = Registry.manualClock();
  const dispatcher = new undici.module.Agent().compose(interceptor({ registry, settings: { failureThreshold: 1 } }));
  t.after(() => dispatcher.close());
  const url = `http://127.0.0.1:${await closedPort()}/`;
  await assert.rejects(undici.module.request(url, { dispatcher }), { code: 'ECONNREFUSED' });
  assert.strictEqual(registry.getOrCreate(httpBreakerName(url), { failureThreshold: 1 }).state, 'open');
  await assert.rejects(undici.module.request(url, { dispatcher }), CircuitOpenError);
});

test('undici\'s own timeout (headersTimeout) is a failure', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, breaker, request } = await setup(t, { headersTimeout: 50 });
  upstream.script.push(['hang']);
  await assert.rejects(request(upstream.url), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  assert.strictEqual(breaker().stats().failures, 1);
});

test('a timeout of the caller\'s signal (AbortSignal.timeout) is a failure', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, breaker, request } = await setup(t);
  upstream.script.push(['hang']);
  await assert.rejects(request(upstream.url, { signal: AbortSignal.timeout(50) }), { name: 'TimeoutError' });
  assert.strictEqual(breaker().stats().failures, 1);
});

test('the caller\'s abort is ignored', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, breaker, request } = await setup(t);
  upstream.script.push(['hang']);
  const controller = new AbortController();
  const pending = request(upstream.url, { signal: controller.signal });
  await upstream.arrived;
  controller.abort();
  await assert.rejects(pending);
  const stats = breaker().stats();
  assert.deepStrictEqual([stats.ignored, stats.failures], [1, 0]);
});

test('a 429 with Retry-After trips for exactly that long; the probe after it closes', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, registry, breaker, request } = await setup(t);
  upstream.script.push([429, { 'Retry-After': '120' }]);
  assert.strictEqual(await request(upstream.url), 429);
  assert.strictEqual(breaker().retryAfterNs, 120_000_000_000n);
  registry.advance(119_999);
  await assert.rejects(request(upstream.url), CircuitOpenError);
  registry.advance(1);
  assert.strictEqual(await request(upstream.url), 200);
  assert.strictEqual(breaker().state, 'closed');
  assert.strictEqual(upstream.requests, 2);
});

test('a 503 with Retry-After as an HTTP date trips until that date', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, breaker, request } = await setup(t);
  upstream.script.push([503, { 'Retry-After': new Date(Date.now() + 30_000).toUTCString() }]);
  await request(upstream.url);
  const ns = breaker().retryAfterNs;
  assert.ok(ns > 28_000_000_000n && ns <= 30_000_000_000n, `${ns} ns`);
});

test('undici.fetch through the composed dispatcher is guarded too', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, dispatcher, breaker } = await setup(t);
  upstream.script.push([500], [500]);
  for (let i = 0; i < 2; i++) await (await undici.module.fetch(upstream.url, { dispatcher })).arrayBuffer();
  await assert.rejects(undici.module.fetch(upstream.url, { dispatcher }), (e) => e.cause instanceof CircuitOpenError);
  assert.strictEqual(breaker().state, 'open');
});

test('each origin has its own breaker, and `name` may name it otherwise', async (t) => {
  if (!needsUndici(t)) return;
  const { upstream, registry, request } = await setup(t);
  const other = await startUpstream();
  t.after(() => other.close());
  upstream.script.push([500], [500]);
  await request(upstream.url);
  await request(upstream.url);
  assert.strictEqual(await request(other.url), 200);
  const named = new undici.module.Agent().compose(interceptor({ registry, name: (url) => `search${url.pathname}` }));
  t.after(() => named.close());
  await (await undici.module.request(`${other.url}/q`, { dispatcher: named })).body.dump();
  assert.strictEqual(registry.getOrCreate('search/q').stats().successes, 1);
});

test('bad options are refused, naming the option', () => {
  assert.throws(() => interceptor({ registry: 'default' }),
                { name: 'TypeError', message: /interceptor: registry must be a Registry/ });
  assert.throws(() => interceptor({ settings: { failureThreshold: 0 } }),
                { name: 'RangeError', message: /failureThreshold/ });
  assert.throws(() => interceptor(null), { name: 'TypeError', message: /interceptor options must be an object/ });
});
