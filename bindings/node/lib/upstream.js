'use strict';
// Upstreams: one breaker per origin of outgoing requests, named by
// lib/http_name.js, and the rules that turn an answer into an outcome (the
// same as PHP's Guzzle middleware, docs/http.md): a 5xx, a connection error
// or a timeout fails; any other answer succeeds; the caller's cancellation
// is ignored; a 429 or 503 with Retry-After trips for exactly that long.
// lib/fetch.js and lib/undici.js feed it.
const { Registry } = require('./registry');
const { CircuitOpenError } = require('./errors');
const { FIELDS, toConfig, describe } = require('./config');
const { httpBreakerName } = require('./http_name');

const MAX_OPEN_NS = FIELDS.find((f) => f.field === 'open_duration_ns').hi;
// Settings of the convention's breaker that the options give elsewhere.
const NOT_SETTINGS = ['name', 'registry', 'action'];

/** Retry-After's wait in ns: delta-seconds, or an HTTP date from nowMs;
 * null when absent, past or unreadable. */
function retryAfterNs(value, nowMs = Date.now()) {
  const text = (value ?? '').trim();
  if (text === '') return null;
  let ns;
  if (/^\d+$/.test(text)) {
    ns = BigInt(text) * 1_000_000_000n;
  } else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ns = BigInt(Math.ceil(at - nowMs)) * 1_000_000n;
  }
  return ns > 0n ? ns : null;
}

/** Whether an error is the caller's cancellation, not the upstream's fault:
 * an abort whose reason is not a timeout. */
function cancelledBy(aborted, reason) {
  return aborted && reason?.name !== 'TimeoutError';
}

class Upstreams {
  #registry;
  #name;
  #settings;
  #breakers = new Map();

  /** options: { registry, name, settings }; `caller` names the function
   * whose options they are, for messages. */
  constructor(options, caller) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`lazybreaker: ${caller} options must be an object, got ${describe(options)}`);
    }
    const { registry = Registry.default, name = httpBreakerName, settings = {}, ...unknown } = options;
    const extra = Object.keys(unknown);
    if (extra.length > 0) throw new TypeError(`lazybreaker: ${caller}: unknown option ${extra[0]}`);
    if (!(registry instanceof Registry)) {
      throw new TypeError(`lazybreaker: ${caller}: registry must be a Registry, got ${describe(registry)}`);
    }
    if (typeof name !== 'function') {
      throw new TypeError(`lazybreaker: ${caller}: name must be a function of the URL, got ${describe(name)}`);
    }
    if (settings === null || typeof settings !== 'object') {
      throw new TypeError(`lazybreaker: ${caller}: settings must be an object, got ${describe(settings)}`);
    }
    const misplaced = NOT_SETTINGS.find((key) => key in settings);
    if (misplaced) {
      throw new TypeError(`lazybreaker: ${caller}: settings.${misplaced} is not a setting: ` +
                          `pass ${misplaced} beside them`);
    }
    toConfig(settings); // bad settings throw now, not at the first request
    this.#registry = registry;
    this.#name = name;
    this.#settings = settings;
  }

  /** The breaker of `url`'s origin (a URL). */
  breakerFor(url) {
    const name = this.#name(url);
    let breaker = this.#breakers.get(name);
    if (breaker === undefined) {
      breaker = this.#registry.getOrCreate(name, this.#settings);
      this.#breakers.set(name, breaker);
    }
    return breaker;
  }

  /** A Permit of `breaker` for one request, or throws CircuitOpenError. */
  admit(breaker) {
    const permit = breaker.tryAcquire();
    if (permit === null) throw new CircuitOpenError(breaker.name, breaker.state, breaker.retryAfterNs);
    return permit;
  }

  /** Reports an answer: status and its Retry-After header (or null). */
  answered(breaker, permit, status, retryAfter) {
    if (status >= 500) permit.failure();
    else permit.success();
    if (status !== 429 && status !== 503) return;
    const ns = retryAfterNs(retryAfter);
    if (ns !== null) breaker.trip(ns < MAX_OPEN_NS ? ns : MAX_OPEN_NS);
  }

  /** Reports a request that got no answer: ignored when the caller
   * cancelled it (aborted, and not by a timeout), else a failure. */
  unanswered(permit, aborted, reason) {
    if (cancelledBy(aborted, reason)) permit.ignore();
    else permit.failure();
  }
}

module.exports = { Upstreams, retryAfterNs };
