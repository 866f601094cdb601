'use strict';
// Watcher: the opt-in look at transitions this process did not make. A
// registry's event queue is per process, so another process's trip of a
// shared registry file is no event here (docs/shared-registries.md). A
// watcher reads, every `interval` ms, the state of each breaker this
// process has objects for, and reports a state that differs from the one
// this process last saw as a transition with reason 'observed'. It is the
// package's one standing timer (the `timeout` option's are per call): one
// per registry, unref'd, so it never keeps the process alive.
const native = require('./native');
const { describe } = require('./config');
const { kNative, kTracked, kObserved, kSaw, kRestart } = require('./internal');

const MAX_INTERVAL = 2 ** 31 - 1; // setInterval's own bound, in ms

function intervalOption(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`lazybreaker: watch options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'interval') throw new TypeError(`lazybreaker: unknown watch option ${key}`);
  }
  const { interval = 1000 } = options;
  if (typeof interval !== 'number') {
    throw new TypeError(`lazybreaker: interval must be a number of milliseconds, got ${describe(interval)}`);
  }
  if (!Number.isInteger(interval) || interval < 1 || interval > MAX_INTERVAL) {
    throw new RangeError(`lazybreaker: interval must be a whole number of milliseconds from 1 to ${MAX_INTERVAL}, ` +
                         `got ${interval}`);
  }
  return interval;
}

// The breaker's state value; undefined for one destroyed elsewhere (by
// another process, by cbctl), which has no state to report.
function stateOf(handle) {
  try {
    return native.state(handle);
  } catch {
    return undefined;
  }
}

class Watcher {
  #registry;
  #interval;
  #timer = null;
  // A tracked breaker's set of objects (the registry's, one per handle) ->
  // the state value this process last saw it in. Keyed by that set, not by
  // the BigInt handle, because BigInt keys hash slowly; and weakly, so a
  // breaker whose objects were all collected is forgotten.
  #seen = new WeakMap();

  constructor(token, registry, interval) {
    if (token !== kNative) throw new TypeError('lazybreaker: watchers come from registry.watch()');
    // Weak: a registry the program dropped is collected (and closed) even
    // while watched; its watcher then stops.
    this.#registry = new WeakRef(registry);
    this[kRestart](interval);
  }

  /** Milliseconds between two looks. */
  get interval() {
    return this.#interval;
  }

  get stopped() {
    return this.#timer === null;
  }

  /** Stops looking; no timer is left. */
  stop() {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#seen = new WeakMap();
  }

  /** Records the state the breaker is in as this process knows it: its
   * own transitions, as the registry delivers them, and new breakers. */
  [kSaw](breaker, state) {
    if (this.#timer !== null) this.#seen.set(breaker, state);
  }

  // Starts the one timer, or moves it to a new interval. A stopped
  // watcher first learns the states as they are now: what changed while it
  // was stopped is not reported.
  [kRestart](interval) {
    if (this.#timer === null) {
      for (const [handle, breaker] of this.#registry.deref()[kTracked]()) {
        const state = stateOf(handle);
        if (state !== undefined) this.#seen.set(breaker, state);
      }
    } else {
      clearInterval(this.#timer);
    }
    this.#interval = interval;
    this.#timer = setInterval(() => this.#look(), interval);
    this.#timer.unref();
  }

  #look() {
    const registry = this.#registry.deref();
    if (registry === undefined || registry.closed) {
      this.stop();
      return;
    }
    // Every state is read before any listener runs.
    const changed = [];
    for (const [handle, breaker] of registry[kTracked]()) {
      const state = stateOf(handle);
      const last = this.#seen.get(breaker);
      if (state === undefined || last === state) continue;
      this.#seen.set(breaker, state);
      if (last !== undefined) changed.push([handle, last, state]);
    }
    for (const [handle, from, to] of changed) registry[kObserved](handle, from, to);
  }
}

module.exports = { Watcher, intervalOption };
