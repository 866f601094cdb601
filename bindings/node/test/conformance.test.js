'use strict';
// Every step stream of tests/conformance (LB_CONFORMANCE_STEPS, written by
// the build) through the package; the self-test streams must mismatch.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { runStream } = require('./conformance');

const dir = process.env.LB_CONFORMANCE_STEPS;

test('the step streams are there', () => {
  assert.ok(dir, 'LB_CONFORMANCE_STEPS names the folder of step streams (cmake/node.cmake sets it)');
  assert.ok(fs.readdirSync(dir).some((f) => f.endsWith('.steps')), `no step stream in ${dir}: build lb_conformance_steps`);
});

const streams = dir && fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.steps')).sort() : [];
for (const file of streams) {
  test(`conformance ${file}`, () => {
    const { status, lines, scenarios } = runStream(path.join(dir, file));
    assert.strictEqual(status, 0, lines.join('\n'));
    assert.ok(scenarios > 0, `${file} ran no scenario`);
  });
}

const selftest = dir ? path.join(dir, 'selftest', 'mismatch') : '';
const mismatches = selftest && fs.existsSync(selftest) ? fs.readdirSync(selftest).filter((f) => f.endsWith('.steps')) : [];
test('the mismatch self-tests exist', () => assert.ok(mismatches.length > 0));
for (const file of mismatches) {
  test(`a mismatch is reported: ${file}`, () => {
    const { status, lines } = runStream(path.join(selftest, file));
    assert.strictEqual(status, 1, lines.join('\n'));
  });
}
