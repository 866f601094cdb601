'use strict';
// The Node.js half of tests/cross_language, run as its own process by CTest
// (cross_language.node_sees_the_c_trip): the registry file a C program made
// and tripped "payments" in is opened here, "payments" is open and rejects,
// and "tripped-by-node" is tripped for the C program to see. The settings
// equal the C program's configuration field for field, or getOrCreate would
// refuse them.
const assert = require('node:assert');
const { Registry, CircuitOpenError } = require('..');

async function main() {
  const path = process.env.LB_CROSS_LANGUAGE_FILE;
  const language = process.env.LB_CROSS_LANGUAGE;
  const options = { failureThreshold: 1, resetTimeout: 300000 };
  const shared = Registry.open({ path, manualClock: true });
  try {
    const payments = shared.getOrCreate('payments', options);
    assert.strictEqual(payments.state, 'open');
    assert.strictEqual(payments.tryAcquire(), null, 'payments admitted a call');
    const error = await payments.execute(() => 'never').then(() => null, (e) => e);
    assert.ok(error instanceof CircuitOpenError, 'execute ran on an open breaker');
    console.log(`${language}: payments rejects, retry after ${error.retryAfter} ms`);
    const mine = shared.getOrCreate(`tripped-by-${language}`, options);
    mine.tryAcquire().failure();
    assert.strictEqual(mine.state, 'open');
  } finally {
    shared.close();
  }
}
main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
