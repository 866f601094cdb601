// Type declarations of the lazybreaker package (docs/node.md).
import { EventEmitter } from 'node:events';

/** A duration: milliseconds (fractions to the nanosecond), or a BigInt of nanoseconds (exact). */
export type Duration = number | bigint;

export type PolicyName = 'consecutive' | 'count_window' | 'time_window';
export type StateName = 'closed' | 'open' | 'half_open' | 'forced_open' | 'disabled';
export type ReasonName =
  | 'consecutive_failures' | 'failure_rate' | 'slow_call_rate' | 'open_elapsed' | 'probe_failed'
  | 'probe_lease_expired' | 'probes_succeeded' | 'manual' | 'tripped' | 'rejected'
  /** Seen by a registry's watcher: another process (or thread) made it. */
  | 'observed';

/** Every setting of a breaker; a setting left out keeps the library's default. */
export interface BreakerSettings {
  policy?: PolicyName;
  failureThreshold?: number;
  /** How long OPEN rejects (open_duration_ns). */
  resetTimeout?: Duration;
  halfOpenMaxCalls?: number;
  halfOpenSuccessThreshold?: number;
  halfOpenTimeout?: Duration;
  windowSize?: number;
  /** The time window's length (window_duration_ns). */
  rollingCountTimeout?: Duration;
  /** The time window's buckets (window_buckets). */
  rollingCountBuckets?: number;
  /** Outcomes in the window before a rate trips (minimum_calls). */
  volumeThreshold?: number;
  /** The failure rate that trips, in percent: (0, 100] (failure_rate_threshold). */
  errorThresholdPercentage?: number;
  slowCall?: Duration;
  slowCallRateThreshold?: number;
  openBackoffMultiplier?: number;
  openDurationMax?: Duration;
  openJitter?: number;
}

export interface CircuitBreakerOptions extends BreakerSettings {
  /** The registry's breaker of this name (shared); without it, an anonymous breaker. */
  name?: string;
  /** Milliseconds after which a call fails with TimeoutError; false or absent: none. */
  timeout?: number | false;
  /** True for an error that is reported as ignored: it rejects, but counts nowhere. */
  errorFilter?: (error: any) => boolean;
  /** Default: Registry.default. */
  registry?: Registry;
}

export interface GetOrCreateOptions<A extends unknown[], R> extends BreakerSettings {
  action?: (...args: A) => R | PromiseLike<R>;
  timeout?: number | false;
  errorFilter?: (error: any) => boolean;
}

export interface RegistryOpenOptions {
  path?: string;
  create?: boolean;
  exclusive?: boolean;
  anyOwner?: boolean;
  capacity?: number;
  eventCapacity?: number;
  mode?: number;
  manualClock?: boolean;
}

export interface WatchOptions {
  /** Milliseconds between two looks: a whole number from 1 to 2147483647 (default 1000). */
  interval?: number;
}

export interface Transition {
  name: string;
  from: StateName;
  to: StateName;
  reason: ReasonName;
  atNs: bigint;
}

export interface BreakerStats {
  admitted: number;
  rejected: number;
  successes: number;
  failures: number;
  ignored: number;
  trips: number;
  consecutiveFailures: number;
  slow: number;
  failureRate: number;
  slowRate: number;
  stateNs: bigint;
}

export class CircuitOpenError extends Error {
  readonly code: 'EOPENBREAKER';
  readonly breaker: string;
  readonly state: StateName;
  /** Milliseconds; Infinity until a reset. */
  readonly retryAfter: number;
  readonly retryAfterNs: bigint;
}

export class TimeoutError extends Error {
  readonly code: 'ETIMEDOUT';
}

export class Permit {
  private constructor();
  readonly reported: 'success' | 'failure' | 'ignore' | null;
  success(): void;
  failure(): void;
  ignore(): void;
}

export interface CircuitBreakerEvents<A extends unknown[], R> {
  fire: [args: A];
  reject: [error: CircuitOpenError];
  success: [result: R];
  failure: [error: unknown];
  timeout: [error: TimeoutError];
  open: [transition: Transition];
  halfOpen: [transition: Transition];
  close: [transition: Transition];
  forcedOpen: [transition: Transition];
  disabled: [transition: Transition];
}

export class CircuitBreaker<A extends unknown[] = unknown[], R = unknown> extends EventEmitter {
  constructor(action: ((...args: A) => R | PromiseLike<R>) | null, options?: CircuitBreakerOptions);
  readonly name: string;
  readonly registry: Registry;
  readonly state: StateName;
  readonly opened: boolean;
  readonly halfOpen: boolean;
  readonly closed: boolean;
  readonly retryAfter: number;
  readonly retryAfterNs: bigint;
  fire(...args: A): Promise<Awaited<R>>;
  execute<T>(fn: (context: { signal: AbortSignal | undefined }) => T | PromiseLike<T>, signal?: AbortSignal): Promise<Awaited<T>>;
  tryAcquire(): Permit | null;
  stats(): BreakerStats;
  forceOpen(): void;
  disable(): void;
  reset(): void;
  trip(duration: Duration): void;
  on<K extends keyof CircuitBreakerEvents<A, R>>(event: K, listener: (...args: CircuitBreakerEvents<A, R>[K]) => void): this;
  once<K extends keyof CircuitBreakerEvents<A, R>>(event: K, listener: (...args: CircuitBreakerEvents<A, R>[K]) => void): this;
  off<K extends keyof CircuitBreakerEvents<A, R>>(event: K, listener: (...args: CircuitBreakerEvents<A, R>[K]) => void): this;
}

/** A registry's watcher (registry.watch()): one unref'd timer. */
export class Watcher {
  private constructor();
  readonly interval: number;
  readonly stopped: boolean;
  stop(): void;
}

export class Registry {
  private constructor();
  static readonly default: Registry;
  static open(options?: RegistryOpenOptions): Registry;
  static manualClock(options?: { capacity?: number; eventCapacity?: number }): Registry;
  getOrCreate<A extends unknown[] = unknown[], R = unknown>(name: string, options?: GetOrCreateOptions<A, R>): CircuitBreaker<A, R>;
  advance(by: Duration): void;
  readonly nowNs: bigint;
  readonly closed: boolean;
  metrics(): string;
  /** Reports the states other processes change as transitions with reason 'observed'. */
  watch(options?: WatchOptions): Watcher;
  close(): void;
}

export const version: string;

/** The breaker name of a URL's origin: `http/<host>:<port>` (docs/http.md). */
export function httpBreakerName(url: string | URL): string;

/** Which breaker sheds load: a CircuitBreaker, or a name made with getOrCreate in `registry` with `settings`. */
export interface ShedOptions {
  breaker: CircuitBreaker<any, any> | string;
  /** With a name. Default: Registry.default. */
  registry?: Registry;
  /** With a name: the breaker's settings. */
  settings?: BreakerSettings;
}

/** Express/Connect middleware: 503 with Retry-After and problem+json while the breaker is open. */
export function shed(options: ShedOptions): (
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
  next: (error?: unknown) => void,
) => void;

/** The Fastify plugin of `shed` (for the whole app: no fastify-plugin needed). */
export function fastifyShed(fastify: { addHook(...args: any[]): unknown }, options: ShedOptions): Promise<void>;

/** One breaker per origin of outgoing requests. */
export interface HttpClientOptions {
  /** Default: Registry.default. */
  registry?: Registry;
  /** The breaker name of a request's URL. Default: httpBreakerName. */
  name?: (url: URL) => string;
  /** The settings of every origin's breaker. */
  settings?: BreakerSettings;
}

/** `fetch` (default globalThis.fetch) behind one breaker per origin; rejects with CircuitOpenError while open. */
export function wrapFetch(fetch?: typeof globalThis.fetch | null, options?: HttpClientOptions): typeof globalThis.fetch;

/** undici's dispatch function. */
export type Dispatch = (options: any, handler: any) => boolean;

/** An undici 7 interceptor, for `dispatcher.compose(interceptor(options))`. */
export function interceptor(options?: HttpClientOptions): (dispatch: Dispatch) => Dispatch;

declare const lazybreaker: {
  CircuitBreaker: typeof CircuitBreaker;
  Permit: typeof Permit;
  Registry: typeof Registry;
  Watcher: typeof Watcher;
  CircuitOpenError: typeof CircuitOpenError;
  TimeoutError: typeof TimeoutError;
  version: string;
  httpBreakerName: typeof httpBreakerName;
  shed: typeof shed;
  fastifyShed: typeof fastifyShed;
  wrapFetch: typeof wrapFetch;
  interceptor: typeof interceptor;
};
export default lazybreaker;
