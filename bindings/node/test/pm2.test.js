'use strict';
// PM2's cluster mode: `pm2 start pm2_app.js -i 2` runs two instances that
// share one port and one registry file. A failure through one instance
// trips the breaker; the other instance then rejects. PM2 (pinned in
// dev-dependencies.json) runs with its own PM2_HOME under the build folder,
// and `pm2 kill` ends its daemon and the instances, whatever happened.
// Without PM2 installed the test is skipped, saying so; under CI=true it
// fails.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');
const { Registry } = require('..');
const { devPackage } = require('./dev_package');

function pm2Script() {
  const { module: manifest } = devPackage('pm2/package.json');
  return manifest && path.join(path.dirname(require.resolve('pm2/package.json')), 'bin', 'pm2');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}

function ask(port, url) {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: url, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, ...JSON.parse(body) }));
    }).on('error', (error) => resolve({ status: 'error', error: error.code }));
  });
}

test('PM2 cluster mode: a trip through one instance is rejected through the other', { timeout: 60000 }, async (t) => {
  const pm2 = pm2Script();
  if (pm2 === null) {
    t.skip('pm2 is not installed (node.dev_dependencies installs it from npm)');
    return;
  }
  // Under the build folder, unless the daemon's socket path would be too
  // long for a Unix socket there.
  const base = process.env.LB_NODE_DEV && process.env.LB_NODE_DEV.length < 60 ? process.env.LB_NODE_DEV : os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  const home = fs.mkdtempSync(path.join(base, 'pm2-'));
  const file = path.join(home, 'breakers.lbr');
  const port = await freePort();
  const env = { ...process.env, PM2_HOME: home, LB_PM2_FILE: file, LB_PM2_PORT: String(port) };
  const run = (...args) => spawnSync(process.execPath, [pm2, ...args], { env, encoding: 'utf8', timeout: 30000 });
  const registry = Registry.open({ path: file, create: true });
  t.after(() => {
    run('kill');
    registry.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  const started = run('start', path.join(__dirname, 'pm2_app.js'), '-i', '2', '--name', 'lazybreaker-pm2-test',
    '--no-autorestart');
  assert.strictEqual(started.status, 0, started.stdout + started.stderr);

  // Both instances answer, each finding the breaker closed.
  const instances = new Map();
  for (let i = 0; i < 400 && instances.size < 2; i++) {
    const answer = await ask(port, '/call');
    if (answer.status === 'error') await sleep(50); // not listening yet
    else instances.set(answer.instance, answer);
  }
  assert.deepStrictEqual([...instances.values()].map(({ status, state }) => [status, state]),
    [[200, 'closed'], [200, 'closed']]);

  const trip = await ask(port, '/fail');
  assert.deepStrictEqual([trip.status, trip.state], [200, 'open']);
  assert.strictEqual(registry.getOrCreate('upstream', { failureThreshold: 1, resetTimeout: 600000 }).state, 'open');
  let other;
  for (let i = 0; i < 100 && other === undefined; i++) {
    const answer = await ask(port, '/call');
    assert.deepStrictEqual([answer.status, answer.state], [503, 'open'], JSON.stringify(answer));
    if (answer.instance !== trip.instance) other = answer;
  }
  assert.ok(other, `only instance ${trip.instance} answered`);
});
