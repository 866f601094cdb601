'use strict';
// The errors the package throws. A library status arrives from the addon as
// an Error with `status`, `statusName` and maybe `field` (a cb_config field):
// libraryError turns it into RangeError/TypeError/Error in the user's words.

const UINT64_MAX = 2n ** 64n - 1n;

/** A call the breaker rejected: retry after `retryAfter` ms. It has no
 * stack frames: in an outage every call is rejected, and capturing the
 * stack is nearly all the cost of a rejection, for frames that always say
 * the same thing (the caller's own await shows where it was). */
class CircuitOpenError extends Error {
  constructor(name, state, retryAfterNs) {
    const retryAfter = retryAfterNs === UINT64_MAX ? Infinity : Number(retryAfterNs) / 1e6;
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`lazybreaker: the breaker ${name ? `'${name}' ` : ''}is ${state}: ` +
            (retryAfter === Infinity ? 'it rejects calls until it is reset' : `retry after ${retryAfter} ms`));
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'CircuitOpenError';
    this.code = 'EOPENBREAKER';
    this.breaker = name;
    this.state = state;
    this.retryAfter = retryAfter;
    this.retryAfterNs = retryAfterNs;
  }
}

/** A call that ran longer than the breaker's `timeout`. */
class TimeoutError extends Error {
  constructor(ms) {
    super(`lazybreaker: the call timed out after ${ms} ms`);
    this.name = 'TimeoutError';
    this.code = 'ETIMEDOUT';
  }
}

/** A library status as an error; `fieldName` maps a cb_config field to the
 * user's option name. */
function libraryError(error, fieldName = (f) => f) {
  if (!error || typeof error.status !== 'number') return error;
  const message = error.field && error.detail ? `lazybreaker: ${fieldName(error.field)}: ${error.detail}`
                                              : error.message;
  const out = error.statusName === 'CB_EINVAL' ? new RangeError(message) : new Error(message);
  out.code = error.statusName;
  out.status = error.status;
  if (error.field) out.field = fieldName(error.field);
  return out;
}

/** Runs fn, rethrowing a library status in the user's words. */
function call(fn, fieldName) {
  try {
    return fn();
  } catch (error) {
    throw libraryError(error, fieldName);
  }
}

/** fn(a, b, c, d, e), rethrowing a library status in the user's words: the
 * calls of every admission and report, where `call` would make a closure. */
function callNative(fn, a, b, c, d, e) {
  try {
    return fn(a, b, c, d, e);
  } catch (error) {
    throw libraryError(error);
  }
}

module.exports = { CircuitOpenError, TimeoutError, libraryError, call, callNative, UINT64_MAX };
