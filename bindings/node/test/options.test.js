'use strict';
// Bad input of every option, named in the user's words; and the policy
// rule of docs/policies.md, "Which settings a policy reads".
const test = require('node:test');
const assert = require('node:assert');
const { CircuitBreaker, Registry } = require('..');
const { FIELDS } = require('../lib/config');

const action = () => 1;
const make = (options) => new CircuitBreaker(action, { registry: Registry.manualClock(), ...options });

// A C value as the option takes it.
function optionValue(f, c) {
  if (f.unit === 'ns') return BigInt(c);
  return f.option === 'errorThresholdPercentage' ? c * 100 : c;
}

// Values just outside each field's bounds, as lists.h gives them.
function outside(f) {
  const lo = f.unit === 'ns' ? BigInt(f.lo) : f.lo;
  const hi = f.unit === 'ns' ? BigInt(f.hi) : f.hi;
  const one = f.unit === 'ns' ? 1n : f.type === 'double' ? 0.5 : 1;
  const out = [];
  if (f.bounds === 'above' || f.bounds === 'zero_or') out.push(f.bounds === 'above' ? lo : lo - one);
  else if (lo > (f.unit === 'ns' ? 0n : 0)) out.push(lo - one);
  out.push(f.bounds === 'below' ? hi : hi + one);
  return out.filter((v) => !(f.bounds === 'zero_or' && (v === 0n || v === 0)));
}

const configurable = FIELDS.filter((f) => f.field !== 'policy');

test('every cb_config field is an option', () => {
  assert.strictEqual(configurable.length, FIELDS.length - 1);
  const names = configurable.map((f) => f.option);
  for (const word of ['resetTimeout', 'errorThresholdPercentage', 'volumeThreshold', 'rollingCountTimeout',
    'rollingCountBuckets', 'failureThreshold', 'halfOpenMaxCalls', 'windowSize', 'slowCall', 'openJitter']) {
    assert.ok(names.includes(word), word);
  }
});

for (const f of configurable) {
  test(`${f.option}: a wrong type is a TypeError naming it`, () => {
    assert.throws(() => make({ policy: 'time_window', [f.option]: 'x' }),
      (e) => e instanceof TypeError && e.message.includes(`${f.option} must be`) && e.message.includes('"x"'));
  });
  for (const bad of outside(f)) {
    const value = optionValue(f, bad);
    test(`${f.option}: ${value} is out of range`, () => {
      assert.throws(() => make({ [f.option]: value }),
        (e) => e instanceof RangeError && e.message.startsWith(`lazybreaker: ${f.option} must be`) &&
          e.message.includes('got'), String(value));
    });
  }
  if (f.type !== 'double' && f.unit !== 'ns') {
    test(`${f.option}: a fraction is a RangeError`, () => {
      assert.throws(() => make({ [f.option]: 1.5 }), { name: 'RangeError', message: new RegExp(`${f.option} must be a whole number`) });
    });
  }
}

test('the messages say the bound in milliseconds and the value given', () => {
  assert.throws(() => make({ resetTimeout: 0 }),
    { name: 'RangeError', message: 'lazybreaker: resetTimeout must be from 0.001 ms to 31622400000 ms, got 0 ms' });
  assert.throws(() => make({ errorThresholdPercentage: 0 }),
    { name: 'RangeError', message: 'lazybreaker: errorThresholdPercentage must be above 0 and at most 100, got 0' });
  assert.throws(() => make({ resetTimeout: -1 }), { name: 'RangeError', message: /resetTimeout .* got -1/ });
  assert.throws(() => make({ resetTimeout: NaN }), { name: 'RangeError', message: /resetTimeout/ });
  assert.throws(() => make({ resetTimeout: -1n }), { name: 'RangeError', message: /resetTimeout must be 0 or more, got -1n/ });
});

test('a rule across fields, which the library judges, names the option', () => {
  assert.throws(() => make({ resetTimeout: 2000, openDurationMax: 1000 }),
    (e) => e instanceof RangeError && e.message.startsWith('lazybreaker: openDurationMax:') && e.field === 'openDurationMax');
});

test('durations: milliseconds to the nanosecond, or exact BigInt nanoseconds', () => {
  const registry = Registry.manualClock();
  const b = registry.getOrCreate('d', { resetTimeout: 1.5 });
  b.trip(0.001);
  assert.strictEqual(b.retryAfterNs, 1000n);
  b.trip(1.5);
  assert.strictEqual(b.retryAfterNs, 1500000n);
  assert.throws(() => b.trip(0.000001), { name: 'RangeError', message: /^lazybreaker: trip: .*got 1$/ });
  b.trip(9007199254740993n);
  assert.strictEqual(b.retryAfterNs, 9007199254740993n);
});

test('the other options', () => {
  assert.throws(() => make({ resetTimout: 5 }), { name: 'TypeError', message: 'lazybreaker: unknown option resetTimout' });
  assert.throws(() => make({ policy: 'sliding' }), { name: 'RangeError', message: /policy must be one of consecutive, count_window, time_window, got "sliding"/ });
  assert.throws(() => make({ policy: 1 }), { name: 'TypeError', message: /policy must be one of/ });
  assert.throws(() => make({ name: 7 }), { name: 'TypeError', message: 'lazybreaker: name must be a string, got 7' });
  assert.throws(() => make({ name: '' }), { name: 'RangeError', message: /name must be 1 to 255 bytes/ });
  assert.throws(() => make({ name: 'x'.repeat(256) }), { name: 'RangeError', message: /name must be 1 to 255 bytes/ });
  assert.throws(() => make({ timeout: 0 }), { name: 'RangeError', message: /timeout must be a number of milliseconds above 0/ });
  assert.throws(() => make({ timeout: '5' }), { name: 'TypeError', message: /timeout must be/ });
  assert.throws(() => make({ errorFilter: true }), { name: 'TypeError', message: 'lazybreaker: errorFilter must be a function, got true' });
  assert.throws(() => make({ registry: {} }), { name: 'TypeError', message: /registry must be a Registry/ });
  assert.throws(() => new CircuitBreaker(5), { name: 'TypeError', message: 'lazybreaker: action must be a function, got 5' });
  assert.throws(() => new CircuitBreaker(action, 5), { name: 'TypeError', message: /options must be an object/ });
});

test('registry options', () => {
  assert.throws(() => Registry.open({ capacity: 0 }), { name: 'RangeError', message: /capacity must be a whole number from 1 to/ });
  assert.throws(() => Registry.open({ capacity: 'big' }), { name: 'TypeError', message: /capacity must be a number/ });
  assert.throws(() => Registry.open({ eventCapacity: 2 ** 40 }), { name: 'RangeError', message: /eventCapacity/ });
  assert.throws(() => Registry.open({ path: 5 }), { name: 'TypeError', message: /path must be a string/ });
  assert.throws(() => Registry.open({ create: true }), { name: 'TypeError', message: /give a path/ });
  assert.throws(() => Registry.open({ path: '/tmp/x.lbr', exclusive: true }), { name: 'TypeError', message: /set create: true/ });
  assert.throws(() => Registry.open({ path: '/tmp/x.lbr', create: 'yes' }), { name: 'TypeError', message: /create must be a boolean/ });
  assert.throws(() => Registry.open({ path: '/tmp/x.lbr', mode: 0o1000 }), { name: 'RangeError', message: /mode/ });
  assert.throws(() => Registry.open({ size: 1 }), { name: 'TypeError', message: 'lazybreaker: unknown registry option size' });
  assert.throws(() => Registry.manualClock({ path: '/tmp/x' }), { name: 'TypeError', message: /private/ });
  assert.throws(() => Registry.open({ path: '/nonexistent-dir/x.lbr' }), (e) => e.code && e.message.startsWith('lazybreaker: open'));
  assert.throws(() => Registry.default.close(), { name: 'TypeError' });
  assert.throws(() => Registry.default.advance(1), { name: 'TypeError', message: /manual clock/ });
  const r = Registry.manualClock();
  assert.throws(() => r.advance('1'), { name: 'TypeError', message: /advance must be a number of milliseconds/ });
  assert.throws(() => r.getOrCreate(5), { name: 'TypeError', message: /name must be a string/ });
  r.close();
  assert.throws(() => r.metrics(), { code: 'ERR_LAZYBREAKER_CLOSED', message: /the registry is closed/ });
});

const policyOf = (options) => {
  const registry = Registry.manualClock();
  const b = registry.getOrCreate('p', options);
  const config = require('../lib/native').config(b[require('../lib/internal').kHandle]);
  registry.close();
  return require('../lib/config').POLICY_NAMES.get(config.policy);
};

test('the policy: chosen, or inferred from the first setting some policy ignores', () => {
  assert.strictEqual(policyOf({}), 'consecutive');
  assert.strictEqual(policyOf({ failureThreshold: 3 }), 'consecutive');
  assert.strictEqual(policyOf({ windowSize: 10 }), 'count_window');
  assert.strictEqual(policyOf({ rollingCountTimeout: 10000 }), 'time_window');
  assert.strictEqual(policyOf({ rollingCountBuckets: 5 }), 'time_window');
  assert.strictEqual(policyOf({ volumeThreshold: 5, errorThresholdPercentage: 50 }), 'count_window');
  assert.strictEqual(policyOf({ rollingCountTimeout: 10000, errorThresholdPercentage: 50, volumeThreshold: 5 }), 'time_window');
  assert.strictEqual(policyOf({ policy: 'time_window', resetTimeout: 5 }), 'time_window');
  assert.strictEqual(policyOf({ failureThreshold: 3, windowSize: 10, slowCall: 1 }), 'consecutive');
});

test('a setting the policy ignores is an error naming it, the policy and what chose it', () => {
  assert.throws(() => make({ failureThreshold: 3, windowSize: 10 }),
    { name: 'RangeError', message: /windowSize is not read by the consecutive policy, which failureThreshold chooses/ });
  assert.throws(() => make({ policy: 'consecutive', volumeThreshold: 5 }),
    { name: 'RangeError', message: /volumeThreshold is not read by the consecutive policy without slowCall/ });
  assert.throws(() => make({ policy: 'count_window', rollingCountTimeout: 1000 }),
    { name: 'RangeError', message: /rollingCountTimeout is not read by the count_window policy/ });
  assert.throws(() => make({ windowSize: 10, rollingCountBuckets: 2 }),
    { name: 'RangeError', message: /rollingCountBuckets is not read by the count_window policy, which windowSize chooses/ });
});
