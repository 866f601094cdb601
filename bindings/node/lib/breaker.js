'use strict';
// CircuitBreaker and Permit. The library decides every admission and
// transition; this file calls it, reports outcomes, and emits events:
// `fire`, `reject`, `success`, `failure`, `timeout` for this breaker's
// calls, and the transitions (`open`, `halfOpen`, `close`, `forcedOpen`,
// `disabled`) as Registry delivers them, synchronously and in order.
const { EventEmitter } = require('node:events');
const native = require('./native');
const { CircuitOpenError, TimeoutError, call, callNative } = require('./errors');
const { toConfig, fieldOption, durationNs, describe } = require('./config');
const { Registry, STATE_NAMES } = require('./registry');
const { kNative, kTrack, kDispatch, kDeliver, kEvents, kReport, kHandle, kTicket } = require('./internal');

const { SUCCESS, FAILURE, IGNORED, MAX_NAME_BYTES } = native.constants;
const OUTCOME_EVENTS = new Map([[SUCCESS, 'success'], [FAILURE, 'failure']]);
const OUTCOME_WORDS = new Map([[SUCCESS, 'success'], [FAILURE, 'failure'], [IGNORED, 'ignore']]);

function checkFunction(option, value) {
  if (value !== undefined && value !== null && typeof value !== 'function') {
    throw new TypeError(`lazybreaker: ${option} must be a function, got ${describe(value)}`);
  }
}

/** One admitted call of the two-step form: report it once. */
class Permit {
  #breaker;
  #ticket;
  #reported = null;

  constructor(token, breaker, ticket) {
    if (token !== kNative) throw new TypeError('lazybreaker: permits come from breaker.tryAcquire()');
    this.#breaker = breaker;
    this.#ticket = ticket;
  }

  get [kTicket]() {
    return this.#ticket;
  }

  /** What it was reported as, or null. */
  get reported() {
    return this.#reported;
  }

  success() { this.#report(SUCCESS); }
  failure() { this.#report(FAILURE); }
  ignore() { this.#report(IGNORED); }

  #report(outcome) {
    if (this.#reported !== null) {
      throw new Error(`lazybreaker: this permit was already reported (${this.#reported})`);
    }
    this.#reported = OUTCOME_WORDS.get(outcome);
    this.#breaker[kReport](this.#ticket, outcome);
  }
}

class CircuitBreaker extends EventEmitter {
  #action;
  #registry;
  #handle;
  #name;
  #timeout;
  #errorFilter;

  /** A breaker around `action` (a function returning a value or a Promise).
   * Without `name` it is anonymous and its own: its slot goes back when it
   * is collected. With `name` it is that breaker of the registry, shared by
   * every CircuitBreaker given the same name (getOrCreate). */
  constructor(action, options = {}) {
    super();
    checkFunction('action', action);
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`lazybreaker: options must be an object, got ${describe(options)}`);
    }
    const { name, timeout, errorFilter, registry = Registry.default } = options;
    if (name !== undefined && typeof name !== 'string') {
      throw new TypeError(`lazybreaker: name must be a string, got ${describe(name)}`);
    }
    if (name !== undefined && (name === '' || Buffer.byteLength(name) > MAX_NAME_BYTES)) {
      throw new RangeError(`lazybreaker: name must be 1 to ${MAX_NAME_BYTES} bytes of UTF-8, got ${describe(name)}`);
    }
    if (timeout !== undefined && timeout !== false &&
        (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0)) {
      const Err = typeof timeout === 'number' ? RangeError : TypeError;
      throw new Err(`lazybreaker: timeout must be a number of milliseconds above 0, or false, got ${describe(timeout)}`);
    }
    checkFunction('errorFilter', errorFilter);
    if (!(registry instanceof Registry)) {
      throw new TypeError(`lazybreaker: registry must be a Registry, got ${describe(registry)}`);
    }
    const config = toConfig(options);
    this.#action = action ?? null;
    this.#registry = registry;
    this.#name = name ?? '';
    this.#timeout = timeout || 0;
    this.#errorFilter = errorFilter ?? null;
    this.#handle = call(() => native.create(registry[kNative], name, config, name !== undefined), fieldOption);
    registry[kTrack](this, name === undefined);
  }

  get name() { return this.#name; }
  get registry() { return this.#registry; }
  get [kHandle]() { return this.#handle; }

  /** 'closed', 'open', 'half_open', 'forced_open' or 'disabled'. */
  get state() { return STATE_NAMES.get(callNative(native.state, this.#handle)); }
  get opened() { return this.state === 'open'; }
  get halfOpen() { return this.state === 'half_open'; }
  get closed() { return this.state === 'closed'; }

  /** How long until a call may be admitted, in ms (Infinity: until reset). */
  get retryAfter() { return new CircuitOpenError(this.#name, this.state, this.retryAfterNs).retryAfter; }
  get retryAfterNs() { return callNative(native.retryAfter, this.#handle); }

  /** The library's counters (cb_stats), counts as numbers, stateNs a BigInt. */
  stats() {
    const s = call(() => native.stats(this.#handle));
    return {
      admitted: Number(s.admitted), rejected: Number(s.rejected), successes: Number(s.successes),
      failures: Number(s.failures), ignored: Number(s.ignored), trips: Number(s.trips),
      consecutiveFailures: s.consecutive_failures, slow: Number(s.slow),
      failureRate: s.failure_rate, slowRate: s.slow_rate, stateNs: s.state_ns,
    };
  }

  /** Rejects every call until reset(). */
  forceOpen() { this.#transition(() => native.forceOpen(this.#handle)); }
  /** Admits every call and never trips, until reset(). */
  disable() { this.#transition(() => native.disable(this.#handle)); }
  /** CLOSED, counting afresh. */
  reset() { this.#transition(() => native.reset(this.#handle)); }
  /** OPEN now, for `duration` (ms, or a BigInt of ns). */
  trip(duration) {
    const ns = durationNs('trip', duration);
    this.#transition(() => native.trip(this.#handle, ns), () => 'trip');
  }

  #transition(fn, fieldName) {
    call(fn, fieldName);
    this.#registry[kDispatch]();
  }

  /** The two-step form: a Permit to report, or null when rejected. */
  tryAcquire() {
    const ticket = this.#allow();
    this.#registry[kDeliver]();
    if (ticket === null) {
      if (this.listenerCount('reject') > 0) this.emit('reject', this.#openError());
      return null;
    }
    return new Permit(kNative, this, ticket);
  }

  // A ticket, or null when rejected; the transitions it found wait in
  // the registry for kDeliver.
  #allow() {
    const registry = this.#registry;
    return callNative(native.allow, this.#handle, registry[kNative], registry[kEvents]);
  }

  [kReport](ticket, outcome, value) {
    const registry = this.#registry;
    callNative(native.done, this.#handle, ticket, outcome, registry[kNative], registry[kEvents]);
    const event = OUTCOME_EVENTS.get(outcome);
    try {
      if (event) this.emit(event, value);
    } finally {
      // the transitions this outcome made, even when a listener threw
      registry[kDeliver]();
    }
  }

  #openError() {
    return new CircuitOpenError(this.#name, this.state, this.retryAfterNs);
  }

  /** Calls the action with `args` through the breaker: a Promise of its
   * result, or rejected with CircuitOpenError when the breaker rejects. */
  fire(...args) {
    if (this.#action === null) {
      return Promise.reject(new TypeError('lazybreaker: this breaker has no action: use execute(fn)'));
    }
    return this.#run(this.#action, args, undefined);
  }

  /** Calls fn({ signal }) through the breaker. An abort rejects the
   * Promise with the signal's reason and reports the call as ignored; the
   * breaker's listener on the signal is removed when the call settles. */
  execute(fn, signal) {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`lazybreaker: execute needs a function, got ${describe(fn)}`));
    }
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      return Promise.reject(new TypeError(`lazybreaker: signal must be an AbortSignal, got ${describe(signal)}`));
    }
    return this.#run(fn, [{ signal }], signal);
  }

  #run(fn, args, signal) {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.emit('fire', args);
    let ticket;
    try {
      ticket = this.#allow();
    } catch (error) {
      return Promise.reject(error);
    }
    this.#registry[kDeliver]();
    if (ticket === null) {
      const error = this.#openError();
      this.emit('reject', error);
      return Promise.reject(error);
    }
    if (signal === undefined && this.#timeout === 0) return this.#settle(ticket, fn, args);
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer = null;
      const onAbort = () => finish(IGNORED, signal.reason, reject);
      const finish = (outcome, value, settle) => {
        if (settled) return;
        settled = true;
        if (timer !== null) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        try {
          this[kReport](ticket, outcome, value);
        } finally {
          settle(value);
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.#timeout > 0) {
        timer = setTimeout(() => {
          const error = new TimeoutError(this.#timeout);
          this.emit('timeout', error);
          finish(FAILURE, error, reject);
        }, this.#timeout);
      }
      let result;
      try {
        result = fn(...args);
      } catch (error) {
        result = Promise.reject(error);
      }
      Promise.resolve(result).then(
        (value) => finish(SUCCESS, value, resolve),
        (error) => {
          const [outcome, reason] = this.#failed(error);
          finish(outcome, reason, reject);
        });
    });
  }

  // #run without a signal or a timer, where nothing can settle the call
  // but the call itself: no closure per call. The same ticks and order as
  // the Promise above (a synchronous throw is still reported a tick later).
  async #settle(ticket, fn, args) {
    let result;
    try {
      result = fn(...args);
    } catch (error) {
      result = Promise.reject(error);
    }
    let value;
    try {
      value = await result;
    } catch (error) {
      const [outcome, reason] = this.#failed(error);
      this.#reportSettling(ticket, outcome, reason);
      throw reason;
    }
    this.#reportSettling(ticket, SUCCESS, value);
    return value;
  }

  // As `finish` above: the call's Promise settles as the call did even when
  // a listener throws, whose error then goes unhandled.
  #reportSettling(ticket, outcome, value) {
    try {
      this[kReport](ticket, outcome, value);
    } catch (listenerError) {
      Promise.reject(listenerError);
    }
  }

  // A call that threw `error`: its outcome, and what its Promise rejects
  // with. A throwing errorFilter fails the call, and the caller hears why.
  #failed(error) {
    try {
      return [this.#errorFilter !== null && Boolean(this.#errorFilter(error)) ? IGNORED : FAILURE, error];
    } catch (filterError) {
      return [FAILURE, filterError];
    }
  }
}

module.exports = { CircuitBreaker, Permit };
