'use strict';
// Registry: where breakers live. Registry.default is the process-wide one
// (monotonic clock, never closed); Registry.open gives a private one or a
// shared registry file; Registry.manualClock a private one whose clock
// moves only by advance(). It also carries this process's transitions, read
// from the library's event queue after each call that can make one, to the
// breakers as events and to diagnostics_channel `lazybreaker:transition`;
// and, when watched (watch(), lib/watcher.js), the transitions other
// processes made.
const diagnostics = require('node:diagnostics_channel');
const native = require('./native');
const { call } = require('./errors');
const { describe, durationNs } = require('./config');
const { Watcher, intervalOption } = require('./watcher');
const { kNative, kTrack, kDispatch, kDeliver, kEvents, kHandle, kTracked, kObserved, kSaw, kRestart } =
  require('./internal');

const transitionChannel = diagnostics.channel('lazybreaker:transition');
const STATE_NAMES = new Map(native.states.map(([value, name]) => [value, name]));
const REASON_NAMES = new Map(native.reasons.map(([value, name]) => [value, name]));
// The event each state's transitions are emitted as: opossum's words for
// open, halfOpen and close.
const EVENT_OF_STATE = new Map([['closed', 'close'], ['open', 'open'], ['half_open', 'halfOpen'],
  ['forced_open', 'forcedOpen'], ['disabled', 'disabled']]);
const { REGISTRY_CREATE, REGISTRY_EXCLUSIVE, REGISTRY_ANY_OWNER, MAX_CAPACITY, MAX_EVENT_CAPACITY } =
  native.constants;

let defaultRegistry;

function count(option, value, max) {
  if (value === undefined) return 0;
  if (typeof value !== 'number') throw new TypeError(`lazybreaker: ${option} must be a number, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`lazybreaker: ${option} must be a whole number from 1 to ${max}, got ${value}`);
  }
  return value;
}

function flag(option, value) {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`lazybreaker: ${option} must be a boolean, got ${describe(value)}`);
  return value;
}

const OPEN_OPTIONS = new Set(['path', 'create', 'exclusive', 'anyOwner', 'capacity', 'eventCapacity', 'mode',
  'manualClock']);

class Registry {
  #native;
  #manual;
  #owned;
  #closed = false;
  // Transitions taken from the library's queue, not yet delivered: the
  // addon appends to it in the call that found them (native.allow, done).
  #events = [];
  #watcher = null;
  // handle -> the breakers its events go to: a WeakRef<CircuitBreaker> for
  // an anonymous breaker (it has one object), a Set of them for a named one.
  #breakers = new Map();
  // Held: an anonymous breaker's handle, or a named one's { handle, ref }.
  #forget = new FinalizationRegistry((held) => {
    if (typeof held === 'bigint') {
      this.#breakers.delete(held);
      // An anonymous breaker is nobody else's: its slot goes back.
      if (!this.#closed) {
        try {
          native.destroy(held);
        } catch {
          // already gone with its registry
        }
      }
      return;
    }
    const refs = this.#breakers.get(held.handle);
    refs?.delete(held.ref);
    if (refs && refs.size === 0) this.#breakers.delete(held.handle);
  });

  constructor(token, nativeRegistry, manual, owned) {
    if (token !== kNative) throw new TypeError('lazybreaker: use Registry.open, Registry.manualClock or Registry.default');
    this.#native = nativeRegistry;
    this.#manual = manual;
    this.#owned = owned;
  }

  /** The process-wide registry: monotonic clock, never closed. */
  static get default() {
    defaultRegistry ??= new Registry(kNative, native.registryDefault(), false, false);
    return defaultRegistry;
  }

  /** A private registry, or with `path` a registry file shared by every
   * process that opens it (docs/shared-registries.md). `manualClock: true`
   * gives it a clock that moves only by advance(), as every process that
   * opens the same file must. */
  static open(options = {}) {
    return Registry.#open(options, false);
  }

  /** A private registry whose clock starts at 0 and moves only by
   * advance(): tests without sleeps. */
  static manualClock(options = {}) {
    if (options !== null && typeof options === 'object' && 'path' in options) {
      throw new TypeError('lazybreaker: a manual clock registry is private: it takes no path');
    }
    return Registry.#open(options, true);
  }

  static #open(options, manual) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`lazybreaker: options must be an object, got ${describe(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (!OPEN_OPTIONS.has(key)) throw new TypeError(`lazybreaker: unknown registry option ${key}`);
    }
    const { path, mode } = options;
    if (flag('manualClock', options.manualClock)) manual = true;
    if (path !== undefined && typeof path !== 'string') {
      throw new TypeError(`lazybreaker: path must be a string, got ${describe(path)}`);
    }
    if (path === '') throw new RangeError('lazybreaker: path must not be empty');
    let flags = 0;
    if (flag('create', options.create)) flags |= REGISTRY_CREATE;
    if (flag('exclusive', options.exclusive)) flags |= REGISTRY_EXCLUSIVE;
    if (flag('anyOwner', options.anyOwner)) flags |= REGISTRY_ANY_OWNER;
    if ((flags & (REGISTRY_EXCLUSIVE | REGISTRY_ANY_OWNER)) && !(flags & REGISTRY_CREATE)) {
      throw new TypeError('lazybreaker: exclusive and anyOwner apply to create: set create: true');
    }
    if (flags !== 0 && path === undefined) {
      throw new TypeError('lazybreaker: create, exclusive and anyOwner apply to a registry file: give a path');
    }
    if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o777)) {
      throw new RangeError(`lazybreaker: mode must be permission bits from 0 to 0o777, got ${describe(mode)}`);
    }
    const native_ = call(() => native.registryOpen({
      path,
      flags,
      mode,
      capacity: count('capacity', options.capacity, MAX_CAPACITY),
      eventCapacity: count('eventCapacity', options.eventCapacity, MAX_EVENT_CAPACITY),
      manualClock: manual ? 1 : 0,
    }));
    return new Registry(kNative, native_, manual, true);
  }

  /** The breaker `name` of this registry, created with `options` if it is
   * new; its configuration must equal theirs if it exists. */
  getOrCreate(name, options = {}) {
    if (typeof name !== 'string') throw new TypeError(`lazybreaker: name must be a string, got ${describe(name)}`);
    const { CircuitBreaker } = require('./breaker');
    const { action = null, ...rest } = options ?? {};
    return new CircuitBreaker(action, { ...rest, name, registry: this });
  }

  /** Moves a manual clock forward: milliseconds, or a BigInt of nanoseconds. */
  advance(by) {
    if (!this.#manual) throw new TypeError('lazybreaker: advance needs a manual clock (Registry.manualClock())');
    const ns = durationNs('advance', by);
    call(() => native.clockAdvance(this.#native, ns));
  }

  /** The registry clock, in nanoseconds. */
  get nowNs() {
    return call(() => native.clockNow(this.#native));
  }

  /** Every breaker's state and counters, in Prometheus' text format. */
  metrics() {
    return call(() => native.metrics(this.#native));
  }

  /** Starts this registry's watcher, or sets its interval: every `interval`
   * ms it reads the state of each breaker this process has objects for,
   * and emits a state another process (or thread) changed as a transition
   * with reason 'observed'. One unref'd timer per registry. */
  watch(options = {}) {
    const interval = intervalOption(options);
    if (this.#closed) {
      throw Object.assign(new Error('lazybreaker: the registry is closed'), { code: 'ERR_LAZYBREAKER_CLOSED' });
    }
    if (this.#watcher === null) this.#watcher = new Watcher(kNative, this, interval);
    else this.#watcher[kRestart](interval);
    return this.#watcher;
  }

  get closed() {
    return this.#closed;
  }

  /** Closes a registry this process opened; its breakers then throw. The
   * default registry is never closed. */
  close() {
    if (!this.#owned) throw new TypeError('lazybreaker: the default registry cannot be closed');
    if (this.#closed) return;
    this.#watcher?.stop();
    call(() => native.registryClose(this.#native));
    this.#closed = true;
    this.#breakers.clear();
  }

  get [kNative]() {
    return this.#native;
  }

  [kTrack](breaker, anonymous) {
    const handle = breaker[kHandle];
    const ref = new WeakRef(breaker);
    if (anonymous) {
      this.#breakers.set(handle, ref);
      if (this.#watching) this.#watcher[kSaw](ref, native.state(handle));
      this.#forget.register(breaker, handle);
      return;
    }
    let refs = this.#breakers.get(handle);
    if (!refs) {
      this.#breakers.set(handle, (refs = new Set()));
      if (this.#watching) this.#watcher[kSaw](refs, native.state(handle));
    }
    refs.add(ref);
    this.#forget.register(breaker, { handle, ref });
  }

  get #watching() {
    return this.#watcher !== null && !this.#watcher.stopped;
  }

  // [handle, its objects (a WeakRef, or a Set of them)] of each breaker
  // this process has objects for.
  [kTracked]() {
    return this.#breakers.entries();
  }

  // The array the addon appends this registry's queued transitions to.
  get [kEvents]() {
    return this.#events;
  }

  // Delivers the queued transitions, in order.
  [kDispatch]() {
    if (this.#closed) return;
    for (const event of native.eventsPoll(this.#native)) this.#events.push(event);
    this[kDeliver]();
  }

  // Delivers the transitions the addon appended to [kEvents], in order; a
  // listener's own calls deliver the ones after them.
  [kDeliver]() {
    if (this.#events.length === 0) return;
    const events = this.#events.splice(0);
    const watching = this.#watching;
    for (const [handle, from, to, reason, atNs, name] of events) {
      const refs = this.#breakers.get(handle);
      if (watching && refs) this.#watcher[kSaw](refs, to);
      this.#deliver(refs, { name, from: STATE_NAMES.get(from), to: STATE_NAMES.get(to),
        reason: REASON_NAMES.get(reason), atNs });
    }
  }

  // A state the watcher found changed since this process last saw it. It
  // went into that state stateNs ago (cb_stats), maybe through others.
  [kObserved](handle, from, to) {
    const refs = this.#breakers.get(handle);
    if (this.#closed || !refs) return;
    let name;
    for (const breaker of objects(refs)) name ??= breaker.name;
    if (name === undefined) return;
    let stateNs;
    try {
      stateNs = native.stats(handle).state_ns;
    } catch {
      return; // destroyed since the watcher read its state
    }
    const atNs = native.clockNow(this.#native) - stateNs;
    this.#deliver(refs, { name, from: STATE_NAMES.get(from), to: STATE_NAMES.get(to), reason: 'observed', atNs });
  }

  // To diagnostics_channel, and to each live object of the breaker (refs).
  #deliver(refs, transition) {
    if (transitionChannel.hasSubscribers) transitionChannel.publish(transition);
    const event = EVENT_OF_STATE.get(transition.to);
    for (const breaker of objects(refs)) breaker.emit(event, transition);
  }
}

// The live objects of a breaker's entry: one WeakRef (anonymous) or a Set.
function* objects(refs) {
  if (refs instanceof WeakRef) {
    const breaker = refs.deref();
    if (breaker) yield breaker;
  } else if (refs) {
    for (const ref of refs) {
      const breaker = ref.deref();
      if (breaker) yield breaker;
    }
  }
}

module.exports = { Registry, STATE_NAMES };
