'use strict';
// The Node.js runner of the conformance scenarios: it interprets the step
// streams that lb_conformance writes at build time from tests/conformance/
// *.scn (tests/conformance/README.md, "Step streams") through the package
// as a user calls it, each scenario on a fresh manual-clock registry.
// runStream(path) -> { status: 0 pass | 1 mismatch | 2 not a stream, lines }.
const fs = require('node:fs');
const { Registry } = require('..');
const native = require('../lib/native');
const { FIELDS } = require('../lib/config');
const { kHandle, kTicket } = require('../lib/internal');

const BY_FIELD = new Map(FIELDS.map((f) => [f.field, f]));
const OUTCOMES = { success: 'success', failure: 'failure', ignored: 'ignore' };
const OUTCOME_CODES = { success: native.constants.SUCCESS, failure: native.constants.FAILURE,
  ignored: native.constants.IGNORED };
const COUNTERS = { admitted: 'admitted', rejected: 'rejected', successes: 'successes', failures: 'failures',
  ignored: 'ignored', trips: 'trips', consecutive_failures: 'consecutiveFailures', slow: 'slow',
  state_ns: 'stateNs', failure_rate: 'failureRate', slow_rate: 'slowRate' };

class NotAStream extends Error {}

function expect(want, got, what = '') {
  return String(got) === want ? null : `${what}expected ${want}, got ${got}`;
}

class Scenario {
  constructor(name) {
    this.name = name;
    this.registry = Registry.manualClock({ capacity: 1 });
    this.options = {};
    this.breaker = null;
    this.permits = new Map();
  }

  config(t) {
    if (t[4] !== 'set') return null;
    const f = BY_FIELD.get(t[2]);
    if (!f) throw new NotAStream(`no option for the config key ${t[2]}`);
    let value;
    if (f.field === 'policy') value = t[3];
    else if (f.unit === 'ns') value = BigInt(t[3]);
    else if (f.option === 'errorThresholdPercentage') value = Number(t[3]) * 100;
    else value = Number(t[3]);
    this.options[f.option] = value;
    return null;
  }

  create() {
    this.breaker = this.registry.getOrCreate(this.name, this.options);
    return null;
  }

  allow(t) {
    const permit = this.breaker.tryAcquire();
    if (permit) this.permits.set(t[3] ?? `#${this.permits.size}`, permit);
    return expect(t[2], permit ? 'ok' : 'rejected', `allow (${this.breaker.state}): `);
  }

  done(t) {
    const permit = this.permits.get(t[2]);
    if (permit.reported !== null) {
      // the same ticket again, as the library sees it
      native.done(this.breaker[kHandle], permit[kTicket], OUTCOME_CODES[t[3]]);
    } else {
      permit[OUTCOMES[t[3]]]();
    }
    return null;
  }

  advance(t) { this.registry.advance(BigInt(t[2])); return null; }
  state(t) { return expect(t[2], this.breaker.state); }
  retry_after(t) { return expect(t[2], this.breaker.retryAfterNs); }
  force_open() { this.breaker.forceOpen(); return null; }
  disable() { this.breaker.disable(); return null; }
  reset() { this.breaker.reset(); return null; }
  trip(t) { this.breaker.trip(BigInt(t[2])); return null; }
  count(t) { return expect(t[3], this.breaker.stats()[COUNTERS[t[2]]], `${t[2]}: `); }
  rate(t) {
    const got = this.breaker.stats()[COUNTERS[t[2]]];
    return Math.abs(got - Number(t[3])) <= 1e-9 ? null : `${t[2]}: expected ${t[3]}, got ${got}`;
  }
}

const STEPS = new Set(['config', 'create', 'allow', 'done', 'advance', 'state', 'retry_after', 'force_open',
  'disable', 'reset', 'trip', 'count', 'rate']);

function runStream(path) {
  const out = [];
  const lines = fs.readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
  if (!lines[0]?.startsWith('lbsteps 1 ')) return { status: 2, lines: [`${path}: not a step stream of version 1`] };
  const source = lines[0].slice('lbsteps 1 '.length);
  let scenarios = 0;
  let failed = 0;
  let s = null;
  let mismatch = null;
  for (const line of lines.slice(1)) {
    const t = line.split(' ');
    if (t[0] === 'scenario') {
      s = new Scenario(t[2]);
      mismatch = null;
      continue;
    }
    if (t[0] === 'end') {
      s.registry.close();
      scenarios++;
      if (mismatch) {
        out.push(mismatch);
        failed++;
      }
      continue;
    }
    if (mismatch) continue; // the rest of the scenario is skipped
    if (!STEPS.has(t[0])) return { status: 2, lines: [...out, `${path}: not a step: ${line}`] };
    let result;
    try {
      result = s[t[0]](t);
    } catch (error) {
      if (error instanceof NotAStream) return { status: 2, lines: [...out, `${path}: ${error.message}`] };
      result = `${error.name}: ${error.message}`;
    }
    if (result) mismatch = `${source}:${t[1]}: mismatch: ${t[0]}: ${result}`;
  }
  out.push(`${source}: ${scenarios} scenarios, ${scenarios - failed} passed, ${failed} failed`);
  return { status: failed ? 1 : 0, lines: out, scenarios };
}

module.exports = { runStream };
