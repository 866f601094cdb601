'use strict';
// wrapFetch: a fetch that puts the breaker of each request's origin
// (lib/upstream.js) in front of it. The answer's status decides when it
// arrives (fetch resolves on the headers); a rejection is a failure unless
// the request's signal was aborted by something other than a timeout.
const { Upstreams } = require('./upstream');
const { toUrl } = require('./http_name');
const { describe } = require('./config');

/** The URL a fetch input names: a string, a URL or a Request. */
function inputUrl(input) {
  if (input instanceof URL) return input;
  return toUrl(typeof input?.url === 'string' ? input.url : String(input), 'input');
}

/** `fetch` (default globalThis.fetch) behind one breaker per origin. */
function wrapFetch(fetch, options = {}) {
  const inner = fetch ?? globalThis.fetch;
  if (typeof inner !== 'function') {
    throw new TypeError(`lazybreaker: wrapFetch: fetch must be a function, got ${describe(inner)}`);
  }
  const upstreams = new Upstreams(options, 'wrapFetch');
  return async function breakerFetch(input, init) {
    const signal = init?.signal ?? input?.signal;
    // already cancelled: fetch rejects with the reason, nothing is sent or counted
    if (signal?.aborted) return inner(input, init);
    const breaker = upstreams.breakerFor(inputUrl(input));
    const permit = upstreams.admit(breaker);
    let response;
    try {
      response = await inner(input, init);
    } catch (error) {
      upstreams.unanswered(permit, signal?.aborted ?? false, signal?.reason);
      throw error;
    }
    upstreams.answered(breaker, permit, response.status, response.headers.get('retry-after'));
    return response;
  };
}

module.exports = { wrapFetch };
