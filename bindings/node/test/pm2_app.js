'use strict';
// The app pm2.test.js starts under PM2's cluster mode (`pm2 start -i 2`):
// each instance opens the registry file LB_PM2_FILE and serves, on the
// port PM2 shares between them (LB_PM2_PORT), GET /fail (one failure of
// the breaker 'upstream') and GET /call (one call through it: 503 when it
// rejects), each answering with the instance and the breaker's state.
const http = require('node:http');
const { Registry } = require('..');

const registry = Registry.open({ path: process.env.LB_PM2_FILE });
const upstream = registry.getOrCreate('upstream', { failureThreshold: 1, resetTimeout: 600000 });

http.createServer((request, response) => {
  request.resume();
  const permit = upstream.tryAcquire();
  if (permit !== null) {
    if (request.url === '/fail') permit.failure();
    else permit.success();
  }
  response.writeHead(permit === null ? 503 : 200, { 'content-type': 'application/json', connection: 'close' });
  response.end(JSON.stringify({ instance: process.env.NODE_APP_INSTANCE, state: upstream.state }));
}).listen(Number(process.env.LB_PM2_PORT), '127.0.0.1');
