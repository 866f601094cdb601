'use strict';
// A node:cluster worker of cluster.test.js: it opens the registry file the
// primary made (LB_CLUSTER_FILE, a manual clock the primary moves), takes
// the breaker 'upstream' and serves each request by calling the primary's
// upstream server through it: 200 when the upstream answered 200, 502 when
// it failed, 503 when the breaker rejected. Each answer says which worker
// gave it and the breaker's state then. It tells the primary it is ready,
// with the state it found the breaker in, and each transition it hears:
// its own calls', and, through its registry's watcher, the others'.
const cluster = require('node:cluster');
const http = require('node:http');
const { Registry, CircuitOpenError } = require('..');

const registry = Registry.open({ path: process.env.LB_CLUSTER_FILE, manualClock: true });
const upstream = registry.getOrCreate('upstream', JSON.parse(process.env.LB_CLUSTER_OPTIONS));
const worker = cluster.worker.id;
registry.watch({ interval: 20 });
for (const event of ['open', 'halfOpen', 'close']) {
  upstream.on(event, ({ reason }) => process.send({ transition: { worker, event, reason } }));
}

function callUpstream() {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: Number(process.env.LB_CLUSTER_UPSTREAM), agent: false,
      headers: { 'x-worker': String(worker) } }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode === 200) resolve();
        else reject(new Error(`upstream answered ${response.statusCode}`));
      });
    });
    request.on('error', reject);
  });
}

function reply(response, status, outcome) {
  response.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  response.end(JSON.stringify({ worker, outcome, state: upstream.state }));
}

http.createServer((request, response) => {
  request.resume();
  upstream.execute(callUpstream).then(
    () => reply(response, 200, 'ok'),
    (error) => (error instanceof CircuitOpenError ? reply(response, 503, 'rejected') : reply(response, 502, 'failed')));
}).listen(0, '127.0.0.1', () => process.send({ ready: worker, state: upstream.state }));
