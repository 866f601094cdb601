'use strict';
// Options -> cb_config. Every field of lists.h's CB_CONFIG_FIELDS is an
// option, named by its C name in camelCase without the `_ns` unit
// (half_open_timeout_ns is halfOpenTimeout), except where opossum has a
// word for the same setting (OPOSSUM_WORDS). Types, bounds and defaults come
// from the addon's copy of that list; which policy reads what comes from
// cb_policy_reads (docs/policies.md, "Which settings a policy reads").
const native = require('./native');

// Opossum's option names for the settings that mean the same, and the
// scale from the option's unit to the C field's (a percentage for a ratio).
const OPOSSUM_WORDS = {
  open_duration_ns: 'resetTimeout',
  window_duration_ns: 'rollingCountTimeout',
  window_buckets: 'rollingCountBuckets',
  minimum_calls: 'volumeThreshold',
  failure_rate_threshold: 'errorThresholdPercentage',
};
const PERCENT = new Set(['failure_rate_threshold']);

function optionName(cName) {
  if (OPOSSUM_WORDS[cName]) return OPOSSUM_WORDS[cName];
  return cName.replace(/_ns$/, '').replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

const FIELDS = native.configFields.map((f) => ({ ...f, option: optionName(f.field) }));
const BY_OPTION = new Map(FIELDS.map((f) => [f.option, f]));
const BY_FIELD = new Map(FIELDS.map((f) => [f.field, f]));
const POLICIES = new Map(native.policies.map(([value, name]) => [name, value]));
const POLICY_NAMES = new Map(native.policies.map(([value, name]) => [value, name]));
const { FIELD_READ, FIELD_READ_WITH_SLOW_CALLS } = native.constants;
// Asked once per process: policy name -> C field -> answer.
const READS = new Map([...POLICIES].map(([name, value]) =>
  [name, new Map(FIELDS.map((f) => [f.field, native.policyReads(value, f.field)]))]));
const INFERENCE_ORDER = [...POLICIES].sort((a, b) => a[1] - b[1]).map(([name]) => name);

/** The option name of a cb_config field, for messages. */
function fieldOption(cName) {
  return BY_FIELD.get(cName)?.option ?? cName;
}

function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value === 'object' || typeof value === 'function' ? typeof value : String(value);
}

// Nanoseconds from milliseconds (a number, to the nanosecond) or a BigInt
// of nanoseconds (exact); TypeError/RangeError name the option.
function durationNs(option, value) {
  if (typeof value === 'bigint') {
    if (value < 0n) throw new RangeError(`lazybreaker: ${option} must be 0 or more, got ${value}n`);
    return value;
  }
  if (typeof value !== 'number') {
    throw new TypeError(`lazybreaker: ${option} must be a number of milliseconds or a BigInt of ` +
                        `nanoseconds, got ${describe(value)}`);
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`lazybreaker: ${option} must be a finite number of milliseconds, 0 or more, got ${value}`);
  }
  return BigInt(Math.round(value * 1e6));
}

function msText(ns) {
  return `${Number(ns) / 1e6} ms`;
}

function rangeText(f) {
  const scale = PERCENT.has(f.field) ? 100 : 1;
  const show = f.unit === 'ns' ? msText : (v) => String(v * scale);
  const [lo, hi] = [show(f.lo), show(f.hi)];
  if (f.field === 'open_duration_max_ns') return `0, or at least resetTimeout and at most ${hi}`;
  switch (f.bounds) {
    case 'above': return `above ${lo} and at most ${hi}`;
    case 'below': return `at least ${lo} and below ${hi}`;
    case 'zero_or': return `0, or from ${lo} to ${hi}`;
    default: return `from ${lo} to ${hi}`;
  }
}

function inBounds(f, v) {
  switch (f.bounds) {
    case 'above': return f.lo < v && v <= f.hi;
    case 'below': return f.lo <= v && v < f.hi;
    case 'zero_or': return v === 0n || v === 0 || (f.lo <= v && v <= f.hi);
    default: return f.lo <= v && v <= f.hi;
  }
}

// The C value of one option, its type and bounds checked.
function cValue(f, value) {
  let v;
  if (f.unit === 'ns') {
    v = durationNs(f.option, value);
  } else if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`lazybreaker: ${f.option} must be a number, got ${describe(value)}`);
  } else if (f.type === 'double') {
    v = PERCENT.has(f.field) ? value / 100 : value;
  } else if (!Number.isInteger(value)) {
    throw new RangeError(`lazybreaker: ${f.option} must be a whole number, got ${value}`);
  } else {
    v = value;
  }
  if (!inBounds(f, v)) {
    const shown = f.unit === 'ns' && typeof value === 'number' ? `${value} ms` : describe(value);
    throw new RangeError(`lazybreaker: ${f.option} must be ${rangeText(f)}, got ${shown}`);
  }
  return v;
}

function reads(policy, cName, slowCalls) {
  const answer = READS.get(policy).get(cName);
  return answer === FIELD_READ || (slowCalls && answer === FIELD_READ_WITH_SLOW_CALLS);
}

// The policy of the settings `given` (C names, in cb_config's order):
// docs/policies.md, "Which settings a policy reads".
function choosePolicy(policy, given, slowCalls) {
  if (policy !== undefined) {
    for (const cName of given) {
      if (!reads(policy, cName, slowCalls)) {
        const without = READS.get(policy).get(cName) === FIELD_READ_WITH_SLOW_CALLS
          ? ` without ${fieldOption('slow_call_ns')}` : '';
        throw new RangeError(`lazybreaker: ${fieldOption(cName)} is not read by the ${policy} policy${without}: ` +
                             'drop it or choose another policy (docs/policies.md)');
      }
    }
    return policy;
  }
  const deciding = given.filter((c) => !INFERENCE_ORDER.every((p) => reads(p, c, false)));
  if (deciding.length === 0) return undefined;
  const first = deciding[0];
  const chosen = INFERENCE_ORDER.find((p) => reads(p, first, false)) ?? INFERENCE_ORDER[0];
  const unread = deciding.find((c) => !reads(chosen, c, slowCalls));
  if (unread === undefined) return chosen;
  throw new RangeError(`lazybreaker: ${fieldOption(unread)} is not read by the ${chosen} policy, which ` +
                       `${fieldOption(first)} chooses: set policy or drop one (docs/policies.md)`);
}

// The options that are not cb_config fields (lib/breaker.js reads them).
const BREAKER_OPTIONS = new Set(['name', 'timeout', 'errorFilter', 'registry']);

/** cb_config's fields (by C name) from a breaker's options. */
function toConfig(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object') {
    throw new TypeError(`lazybreaker: options must be an object, got ${describe(options)}`);
  }
  const config = {};
  const given = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || BREAKER_OPTIONS.has(key) || key === 'policy') continue;
    const f = BY_OPTION.get(key);
    if (!f) throw new TypeError(`lazybreaker: unknown option ${key}`);
    config[f.field] = cValue(f, value);
  }
  for (const f of FIELDS) if (f.field in config) given.push(f.field);
  let policy = options.policy;
  if (policy !== undefined && !POLICIES.has(policy)) {
    const Err = typeof policy === 'string' ? RangeError : TypeError;
    throw new Err(`lazybreaker: policy must be one of ${[...POLICIES.keys()].join(', ')}, got ${describe(policy)}`);
  }
  const slow = BY_FIELD.get('slow_call_ns');
  const slowCalls = (config.slow_call_ns ?? slow.def) > 0n;
  policy = choosePolicy(policy, given, slowCalls);
  if (policy !== undefined) config.policy = POLICIES.get(policy);
  return config;
}

module.exports = { FIELDS, toConfig, fieldOption, durationNs, describe, POLICY_NAMES, optionName };
