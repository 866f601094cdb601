'use strict';
// Load shedding on the server side (docs/http.md, "Server side"): shed()
// under real Express 5 and Connect 3, fastifyShed under real Fastify 5.
// While the breaker is open: 503, Retry-After in whole seconds rounded up
// (none while forced open), an RFC 9457 problem+json body, and the app is
// not run. A 5xx answer or a thrown error is a failure.
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const { shed, fastifyShed, Registry, CircuitBreaker } = require('..');
const { devPackage } = require('./dev_package');

const express = devPackage('express');
const connect = devPackage('connect');
const fastify = devPackage('fastify');

async function listen(t, handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return `http://127.0.0.1:${server.address().port}`;
}

async function get(url) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

// The apps under test: `/ok` answers 200, `/fail` 500, `/throw` throws,
// `/missing` 404, `/invalid` throws a client error (400), `/hang` never
// answers (calling `onArrive`, and `onClose` when its connection closes);
// `runs` counts the handler's runs.
const clientError = () => Object.assign(new Error('bad input'), { status: 400, statusCode: 400 });
const apps = {
  async express(t, middleware, state) {
    const app = express.module();
    app.use(middleware);
    app.get('/ok', (req, res) => { state.runs += 1; res.send('ok'); });
    app.get('/fail', (req, res) => { state.runs += 1; res.status(500).send('no'); });
    app.get('/throw', () => { state.runs += 1; throw new Error('database down'); });
    app.get('/missing', (req, res) => { state.runs += 1; res.status(404).send('?'); });
    app.get('/invalid', () => { state.runs += 1; throw clientError(); });
    app.get('/hang', (req) => { state.runs += 1; req.once('close', state.onClose); state.onArrive(); });
    return listen(t, app);
  },
  async connect(t, middleware, state) {
    const app = connect.module();
    app.use(middleware);
    app.use((req, res) => {
      state.runs += 1;
      const path = req.url.split('?')[0];
      if (path === '/throw') throw new Error('database down');
      if (path === '/invalid') throw clientError();
      if (path === '/hang') {
        req.once('close', state.onClose);
        state.onArrive();
        return;
      }
      res.statusCode = { '/ok': 200, '/fail': 500, '/missing': 404 }[path] ?? 404;
      res.end('answer');
    });
    return listen(t, app);
  },
  async fastify(t, options, state) {
    const app = fastify.module({ logger: false });
    await app.register(fastifyShed, options);
    app.get('/ok', async () => { state.runs += 1; return 'ok'; });
    app.get('/fail', async (request, reply) => { state.runs += 1; return reply.code(500).send('no'); });
    app.get('/throw', async () => { state.runs += 1; throw new Error('database down'); });
    app.get('/missing', async (request, reply) => { state.runs += 1; return reply.code(404).send('?'); });
    app.get('/invalid', async () => { state.runs += 1; throw clientError(); });
    app.get('/hang', (request) => { state.runs += 1; request.raw.once('close', state.onClose); state.onArrive(); });
    t.after(() => app.close());
    return app.listen({ port: 0, host: '127.0.0.1' });
  },
};
const packages = { express, connect, fastify };

for (const [framework, start] of Object.entries(apps)) {
  const pkg = packages[framework];
  const serve = (t, options, state) =>
    start(t, framework === 'fastify' ? options : shed(options), state);
  const skipped = (t) => {
    if (pkg.missing) t.skip(pkg.missing);
    return pkg.missing !== null;
  };

  test(`${framework}: 5xx answers and thrown errors open the breaker, then 503 with problem+json`, async (t) => {
    if (skipped(t)) return;
    const registry = Registry.manualClock();
    const state = { runs: 0 };
    const settings = { failureThreshold: 2, resetTimeout: 29500 };
    const url = await serve(t, { breaker: 'checkout', registry, settings }, state);
    assert.strictEqual((await get(`${url}/fail`)).status, 500);
    assert.strictEqual((await get(`${url}/throw`)).status, 500);
    const breaker = registry.getOrCreate('checkout', settings);
    assert.strictEqual(breaker.state, 'open');
    const answer = await get(`${url}/ok?x=1`);
    assert.strictEqual(state.runs, 2, 'the app is not run while open');
    assert.strictEqual(answer.status, 503);
    assert.strictEqual(answer.headers.get('retry-after'), '30', '29.5 s rounded up');
    assert.strictEqual(answer.headers.get('content-type'), 'application/problem+json');
    assert.strictEqual(answer.headers.get('cache-control'), 'no-store');
    assert.deepStrictEqual(JSON.parse(answer.text), {
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: "The circuit 'checkout' is open: retry after 30 s.",
      instance: '/ok',
      circuit: 'checkout',
      state: 'open',
      retryAfter: 30,
    });
    registry.advance(29500);
    assert.strictEqual((await get(`${url}/ok`)).status, 200, 'the probe runs the app');
    assert.strictEqual(breaker.state, 'closed');
  });

  test(`${framework}: 2xx and 4xx answers are successes, a thrown client error too`, async (t) => {
    if (skipped(t)) return;
    const registry = Registry.manualClock();
    const breaker = registry.getOrCreate('api', { failureThreshold: 1 });
    const url = await serve(t, { breaker }, { runs: 0 });
    assert.strictEqual((await get(`${url}/missing`)).status, 404);
    assert.strictEqual((await get(`${url}/invalid`)).status, 400);
    assert.strictEqual((await get(`${url}/ok`)).status, 200);
    assert.deepStrictEqual([breaker.stats().successes, breaker.stats().failures], [3, 0]);
  });

  test(`${framework}: a request whose client goes away is ignored`, async (t) => {
    if (skipped(t)) return;
    const registry = Registry.manualClock();
    const breaker = registry.getOrCreate('api', { failureThreshold: 1 });
    const state = { runs: 0 };
    const arrived = new Promise((resolve) => { state.onArrive = resolve; });
    const closed = new Promise((resolve) => { state.onClose = resolve; });
    const url = await serve(t, { breaker }, state);
    const controller = new AbortController();
    const pending = fetch(`${url}/hang`, { signal: controller.signal });
    await arrived;
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await closed;
    await new Promise((resolve) => setImmediate(resolve));
    const stats = breaker.stats();
    assert.deepStrictEqual([stats.ignored, stats.failures, stats.successes], [1, 0, 0]);
  });

  test(`${framework}: forced open answers 503 without Retry-After`, async (t) => {
    if (skipped(t)) return;
    const registry = Registry.manualClock();
    const breaker = registry.getOrCreate('maintenance');
    breaker.forceOpen();
    const answer = await get(`${await serve(t, { breaker }, { runs: 0 })}/ok`);
    assert.strictEqual(answer.status, 503);
    assert.strictEqual(answer.headers.get('retry-after'), null);
    const problem = JSON.parse(answer.text);
    assert.strictEqual(problem.retryAfter, null);
    assert.strictEqual(problem.state, 'forced_open');
    assert.match(problem.detail, /forced open until an operator resets it/);
  });
}

test('bad options are refused, naming the option', () => {
  const registry = Registry.manualClock();
  assert.throws(() => shed({}),
                { name: 'TypeError', message: /shed: breaker must be a CircuitBreaker or a name, got undefined/ });
  assert.throws(() => shed({ breaker: 'x', registry: {} }),
                { name: 'TypeError', message: /registry must be a Registry/ });
  assert.throws(() => shed({ breaker: 'x', registry, settings: { resetTimeout: -1 } }),
                { name: 'RangeError', message: /resetTimeout/ });
  const breaker = new CircuitBreaker(null, { registry });
  assert.throws(() => shed({ breaker, settings: {} }), { name: 'TypeError', message: /go with a breaker name/ });
  assert.throws(() => shed({ breaker, onOpen: () => {} }), { name: 'TypeError', message: /unknown option onOpen/ });
  assert.throws(() => shed(), { name: 'TypeError', message: /shed options must be an object/ });
  assert.doesNotMatch(registry.metrics(), /"x"/);
});

test('fastifyShed applies to the whole app without fastify-plugin', () => {
  assert.strictEqual(fastifyShed[Symbol.for('skip-override')], true);
});
