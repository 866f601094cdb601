'use strict';
// node:cluster: four workers share one HTTP server (cluster's round-robin)
// and one registry file, and call a failing upstream through its breaker
// 'upstream' (cluster_worker.js). The primary runs the upstream, counting
// the requests it receives, and moves the file's manual clock: no sleeps.
// A trip in one worker rejects in all (and their watchers report it); a
// restarted worker finds the breaker OPEN; when the open period ends, exactly one probe reaches the upstream;
// and a worker killed (SIGKILL) while it holds the probe holds nothing the
// others wait for: after the probe's lease, another worker probes.
const test = require('node:test');
const assert = require('node:assert');
const cluster = require('node:cluster');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { EventEmitter, once } = require('node:events');
const { Registry } = require('..');

const WORKERS = 4;
const OPTIONS = { failureThreshold: 4, resetTimeout: 1000, halfOpenTimeout: 500 };

// The upstream: answers 500 ('fail'), 200 ('ok'), or holds the request
// ('hang') until release(); counts requests and says which worker sent each.
function startUpstream() {
  const upstream = { mode: 'fail', requests: 0, held: [], server: null };
  upstream.server = http.createServer((request, response) => {
    upstream.requests++;
    upstream.server.emit('call', Number(request.headers['x-worker']));
    if (upstream.mode === 'hang') upstream.held.push(response);
    else response.writeHead(upstream.mode === 'ok' ? 200 : 500, { connection: 'close' }).end();
  });
  upstream.release = (status) => {
    for (const response of upstream.held.splice(0)) response.writeHead(status, { connection: 'close' }).end();
  };
  return upstream;
}

// One request to the cluster's server: { status, worker, outcome, state },
// or { status: 'error' } when the worker died before answering.
function ask(port) {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, ...JSON.parse(body) }));
    }).on('error', () => resolve({ status: 'error' }));
  });
}

test('cluster workers share one breaker through a registry file', { timeout: 120000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lazybreaker-cluster-'));
  const file = path.join(dir, 'breakers.lbr');
  const clock = Registry.open({ path: file, create: true, manualClock: true });
  const breaker = clock.getOrCreate('upstream', OPTIONS);
  const upstream = startUpstream();
  upstream.server.listen(0, '127.0.0.1');
  await once(upstream.server, 'listening');

  // Workers by id; the primary replaces a worker that dies.
  const workers = new Map();
  const ready = new Map(); // worker id -> the state it found at start
  const transitions = []; // { worker, event, reason } as the workers heard them
  const news = new EventEmitter();
  let shuttingDown = false;
  cluster.setupPrimary({ exec: path.join(__dirname, 'cluster_worker.js'), execArgv: [] });
  const env = { LB_CLUSTER_FILE: file, LB_CLUSTER_OPTIONS: JSON.stringify(OPTIONS),
    LB_CLUSTER_UPSTREAM: String(upstream.server.address().port) };
  const fork = () => {
    const worker = cluster.fork(env);
    workers.set(worker.id, worker);
    worker.on('message', (message) => {
      if (message.transition) {
        transitions.push(message.transition);
      } else {
        ready.set(message.ready, message.state);
      }
      news.emit('message');
    });
    return worker;
  };
  const onExit = (worker) => {
    workers.delete(worker.id);
    if (!shuttingDown) fork();
  };
  cluster.on('exit', onExit);
  t.after(async () => {
    shuttingDown = true;
    cluster.off('exit', onExit);
    const exits = [...workers.values()].map((worker) => once(worker, 'exit'));
    for (const worker of workers.values()) worker.process.kill('SIGKILL');
    await Promise.all(exits);
    upstream.release(500);
    upstream.server.close();
    clock.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const readyOf = async (id) => {
    while (!ready.has(id)) await once(news, 'message');
    return ready.get(id);
  };
  const killAndReplace = async (id) => {
    const nextId = Math.max(...workers.keys()) + 1;
    const exited = once(workers.get(id), 'exit');
    workers.get(id).process.kill('SIGKILL');
    await exited;
    return { id: nextId, state: await readyOf(nextId) };
  };

  const listening = once(cluster, 'listening');
  const firstIds = [];
  for (let i = 0; i < WORKERS; i++) firstIds.push(fork().id);
  assert.deepStrictEqual(await Promise.all(firstIds.map(readyOf)), Array(WORKERS).fill('closed'));
  const { port } = (await listening)[1];

  // Asks until every worker id of `ids` has answered; returns the answers.
  const askEach = async (ids) => {
    const answers = [];
    const missing = new Set(ids);
    for (let i = 0; missing.size > 0 && i < 200; i++) {
      const answer = await ask(port);
      answers.push(answer);
      missing.delete(answer.worker);
    }
    assert.deepStrictEqual([...missing], [], 'every worker answered');
    return answers;
  };

  await t.test('a trip made by one worker is seen by all of them', async () => {
    const failed = [];
    for (let i = 0; i < 20 && breaker.state === 'closed'; i++) failed.push(await ask(port));
    assert.deepStrictEqual(failed.map(({ status }) => status), Array(OPTIONS.failureThreshold).fill(502));
    assert.strictEqual(failed.at(-1).state, 'open', 'the worker of the last failure tripped it');
    assert.strictEqual(upstream.requests, OPTIONS.failureThreshold);
    const answers = await askEach([...workers.keys()]);
    assert.ok(answers.every(({ status, state }) => status === 503 && state === 'open'), JSON.stringify(answers));
    assert.strictEqual(upstream.requests, OPTIONS.failureThreshold, 'no rejected request reached the upstream');

    // The tripper heard its own trip; the others' watchers saw it.
    const opens = () => transitions.filter(({ event }) => event === 'open');
    while (opens().length < WORKERS) await once(news, 'message');
    assert.deepStrictEqual(opens().map(({ worker, reason }) => [worker, reason]).sort(),
      firstIds.map((id) => [id, id === failed.at(-1).worker ? 'consecutive_failures' : 'observed']));
  });

  await t.test('a worker restarted after SIGKILL finds the breaker open', async () => {
    const restarted = await killAndReplace(firstIds[0]);
    assert.strictEqual(restarted.state, 'open');
    const answers = await askEach([restarted.id]);
    assert.ok(answers.every(({ status }) => status === 503), JSON.stringify(answers));
    assert.strictEqual(upstream.requests, OPTIONS.failureThreshold);
  });

  await t.test('when the open period ends, exactly one probe reaches the upstream', async () => {
    clock.advance(OPTIONS.resetTimeout);
    const before = upstream.requests;
    const answers = await Promise.all(Array.from({ length: 8 }, () => ask(port)));
    assert.strictEqual(upstream.requests, before + 1);
    assert.deepStrictEqual(answers.map(({ status }) => status).sort(), [502, 503, 503, 503, 503, 503, 503, 503]);
    assert.strictEqual(breaker.state, 'open', 'the failed probe re-opened it');
  });

  await t.test('a worker killed while it holds the probe holds nothing the others wait for', async () => {
    clock.advance(OPTIONS.resetTimeout);
    upstream.mode = 'hang';
    const before = upstream.requests;
    const probeCall = once(upstream.server, 'call');
    const probeAnswer = ask(port);
    const [prober] = await probeCall;
    assert.strictEqual(breaker.state, 'half_open');
    const whileHeld = await askEach([...workers.keys()].filter((id) => id !== prober));
    assert.ok(whileHeld.every(({ status }) => status === 503), JSON.stringify(whileHeld));

    const replaced = await killAndReplace(prober);
    assert.deepStrictEqual(await probeAnswer, { status: 'error' });
    assert.strictEqual(replaced.state, 'half_open', 'the dead worker\'s probe is still out');
    const beforeLease = await askEach([...workers.keys()]);
    assert.ok(beforeLease.every(({ status }) => status === 503), JSON.stringify(beforeLease));
    assert.strictEqual(upstream.requests, before + 1);

    // The lease runs out: the silent probe counts as failed, re-opening as
    // of the lease's end; once that open period has passed too, one of the
    // others is the new probe.
    clock.advance(OPTIONS.halfOpenTimeout + OPTIONS.resetTimeout);
    const secondCall = once(upstream.server, 'call');
    const answered = new EventEmitter();
    const answers = [];
    const asked = Array.from({ length: 8 }, () => ask(port).then((answer) => {
      answers.push(answer);
      answered.emit('answer');
    }));
    const [secondProber] = await secondCall;
    assert.notStrictEqual(secondProber, prober);
    while (answers.length < 7) await once(answered, 'answer');
    assert.ok(answers.every(({ status }) => status === 503), JSON.stringify(answers));
    assert.strictEqual(upstream.requests, before + 2, 'one probe after the lease');
    upstream.mode = 'ok';
    upstream.release(200);
    await Promise.all(asked);
    assert.strictEqual(answers.at(-1).status, 200, 'the probe succeeded');
    assert.strictEqual(upstream.requests, before + 2);
    assert.strictEqual(breaker.state, 'closed');
  });
});
