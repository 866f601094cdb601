'use strict';
// Loopback upstreams for the http_*.test.js files: a node:http server that
// answers each request with the next scripted [status, headers] (200 when
// the script is empty), or holds it unanswered ('hang'); and a port where
// nothing listens.
const http = require('node:http');

/** A server on 127.0.0.1: `script` answers, `requests` counts arrivals,
 * `arrived` resolves on the next arrival. */
async function startUpstream() {
  const upstream = {
    script: [],
    requests: 0,
    held: [],
    url: '',
    port: 0,
    arrived: null,
  };
  let notify = () => {};
  const nextArrival = () => {
    upstream.arrived = new Promise((resolve) => { notify = resolve; });
  };
  nextArrival();
  const server = http.createServer((req, res) => {
    upstream.requests += 1;
    const [status, headers = {}] = upstream.script.shift() ?? [200];
    notify();
    nextArrival();
    if (status === 'hang') {
      upstream.held.push(res);
      return;
    }
    res.writeHead(status, headers).end(`answer ${status}`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.port = server.address().port;
  upstream.url = `http://127.0.0.1:${upstream.port}`;
  upstream.close = async () => {
    for (const res of upstream.held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return upstream;
}

/** A loopback port nothing listens on: a connection there is refused. */
async function closedPort() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

module.exports = { startUpstream, closedPort };
