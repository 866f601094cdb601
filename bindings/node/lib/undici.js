'use strict';
// interceptor: undici's `dispatcher.compose(interceptor(options))` form
// (undici 7's handler API: onRequestStart, onResponseStart, ...), the
// breaker of each request's origin (lib/upstream.js) in front of dispatch.
// The status decides at onResponseStart; onResponseError before it is a
// failure unless the caller aborted the request through its controller
// (and not by a timeout). While the breaker is open nothing is dispatched
// and the handler gets CircuitOpenError.
const { Upstreams } = require('./upstream');

function headerValue(value) {
  return Array.isArray(value) ? value[0] : value;
}

/** Forwards every call to the caller's handler, reporting the outcome first. */
class UpstreamHandler {
  #upstreams;
  #breaker;
  #permit;
  #handler;

  constructor(upstreams, breaker, permit, handler) {
    this.#upstreams = upstreams;
    this.#breaker = breaker;
    this.#permit = permit;
    this.#handler = handler;
  }

  onRequestStart(controller, context) {
    return this.#handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller, statusCode, headers, socket) {
    if (this.#permit.reported === null) this.#permit.success();
    return this.#handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller, statusCode, headers, statusMessage) {
    if (this.#permit.reported === null) {
      this.#upstreams.answered(this.#breaker, this.#permit, statusCode, headerValue(headers?.['retry-after']));
    }
    return this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller, chunk) {
    return this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller, trailers) {
    return this.#handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller, error) {
    if (this.#permit.reported === null) {
      this.#upstreams.unanswered(this.#permit, controller?.aborted ?? false, controller?.reason);
    }
    return this.#handler.onResponseError?.(controller, error);
  }
}

/** An undici 7 interceptor: one breaker per origin in front of dispatch. */
function interceptor(options = {}) {
  const upstreams = new Upstreams(options, 'interceptor');
  return (dispatch) => function breakerDispatch(opts, handler) {
    let breaker;
    let permit;
    try {
      breaker = upstreams.breakerFor(new URL(opts.path ?? '/', opts.origin));
      permit = upstreams.admit(breaker);
    } catch (error) {
      handler.onResponseError?.(null, error);
      return true;
    }
    try {
      return dispatch(opts, new UpstreamHandler(upstreams, breaker, permit, handler));
    } catch (error) {
      // refused before anything was sent (bad arguments): not the upstream's doing
      if (permit.reported === null) permit.ignore();
      throw error;
    }
  };
}

module.exports = { interceptor };
