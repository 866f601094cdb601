'use strict';
// 10,000 breakers in the default registry, one call each; then nothing:
// the process must end by itself (lifetime.test.js runs it).
const { CircuitBreaker } = require('..');

async function main() {
  const breakers = [];
  for (let i = 0; i < 10000; i++) breakers.push(new CircuitBreaker(async (x) => x, { resetTimeout: 1000 }));
  let calls = 0;
  for (const b of breakers) calls += (await b.fire(1));
  process.stdout.write(`${breakers.length} breakers, ${calls} calls\n`);
}
main();
