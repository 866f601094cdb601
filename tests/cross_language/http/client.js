'use strict';
// The Node.js client of one_upstream.py: wrapFetch over the registry file.
//   node client.js REGISTRY_FILE URL
const readline = require('node:readline');
// LB_NODE_PACKAGE: the package's folder (a build's bindings/node).
const { Registry, CircuitOpenError, wrapFetch } = require(process.env.LB_NODE_PACKAGE ?? 'lazybreaker');

const [file, url] = process.argv.slice(-2);
const registry = Registry.open({ path: file, create: true });
const fetch = wrapFetch(null, { registry, settings: { failureThreshold: 1, resetTimeout: 2000 } });
console.log('ready');
const lines = readline.createInterface({ input: process.stdin });
const queue = [];
let busy = Promise.resolve();
lines.on('line', () => {
  busy = busy.then(async () => {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      console.log(`sent ${response.status}`);
    } catch (error) {
      if (!(error instanceof CircuitOpenError)) throw error;
      console.log('rejected');
    }
  });
  queue.push(busy);
});
lines.on('close', async () => {
  await Promise.all(queue);
  registry.close();
});
