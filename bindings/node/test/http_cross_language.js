'use strict';
// A Node.js process and a PHP process share one registry file and one
// failing loopback upstream (docs/http.md): a trip made through wrapFetch
// is seen by PHP's Guzzle middleware as the breaker http/127.0.0.1:<port>,
// and one made by PHP is seen by wrapFetch. Run by CTest
// (node.http_cross_language) as
//   node http_cross_language.js PHP_COMMAND... PHP_SCRIPT
// It exits 77 (skipped) when the PHP script does (no Guzzle).
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Registry, CircuitOpenError, wrapFetch, httpBreakerName } = require('..');
const { startUpstream } = require('./http_upstream');

const SKIPPED = 77;
/** The PHP half could not run (no Guzzle): the test is skipped. */
class Skipped extends Error {}
// The same settings as the PHP half's Config, field for field.
const settings = { failureThreshold: 1, resetTimeout: 300000 };

// Runs the PHP half while this process's upstream keeps serving.
async function php(mode, file, url) {
  const [command, ...args] = process.argv.slice(2);
  const child = spawn(command, [...args, mode, file, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { out += chunk; });
  const [status] = await new Promise((resolve) => child.on('close', (...result) => resolve(result)));
  process.stdout.write(out);
  if (status === SKIPPED) throw new Skipped(`php ${mode} was skipped`);
  assert.strictEqual(status, 0, `php ${mode} exited with ${status}`);
  return out;
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lb-http-'));
  const file = path.join(dir, 'breakers.lbr');
  const upstream = await startUpstream();
  const registry = Registry.open({ path: file, create: true });
  try {
    const fetch = wrapFetch(null, { registry, settings });
    const name = httpBreakerName(upstream.url);
    assert.strictEqual(name, `http/127.0.0.1:${upstream.port}`);
    const breaker = registry.getOrCreate(name, settings);

    upstream.script.push([500]);
    assert.strictEqual((await fetch(upstream.url)).status, 500);
    assert.strictEqual(breaker.state, 'open');
    assert.match(await php('sees', file, `${upstream.url}/charge`), new RegExp(`php: ${name} rejects`));
    assert.strictEqual(upstream.requests, 1, 'PHP sent nothing while Node.js had it open');

    breaker.reset();
    upstream.script.push([500]);
    await php('trips', file, `${upstream.url}/charge`);
    assert.strictEqual(upstream.requests, 2);
    assert.strictEqual(breaker.state, 'open');
    await assert.rejects(fetch(upstream.url), CircuitOpenError);
    assert.strictEqual(upstream.requests, 2, 'Node.js sent nothing while PHP had it open');
    console.log(`node: ${name} opened by PHP rejects`);
  } finally {
    registry.close();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((error) => {
  console.error(error instanceof Skipped ? error.message : error);
  process.exitCode = error instanceof Skipped ? SKIPPED : 1;
});
