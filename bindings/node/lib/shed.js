'use strict';
// Load shedding on the server side: while a breaker is open, a request is
// answered at once with 503, Retry-After (whole seconds, rounded up; left
// out while forced open) and an RFC 9457 problem+json body, as PHP's PSR-15
// middleware answers (docs/http.md). `shed` is the Express/Connect form;
// lib/fastify.js the Fastify plugin over the same breaker and answer.
const { CircuitBreaker } = require('./breaker');
const { Registry } = require('./registry');
const { describe } = require('./config');
const { UINT64_MAX } = require('./errors');

/** The breaker that options ({ breaker, registry, settings }) name. */
function shedBreaker(options, caller) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`lazybreaker: ${caller} options must be an object, got ${describe(options)}`);
  }
  const { breaker, registry, settings, ...unknown } = options;
  const extra = Object.keys(unknown);
  if (extra.length > 0) throw new TypeError(`lazybreaker: ${caller}: unknown option ${extra[0]}`);
  if (breaker instanceof CircuitBreaker) {
    if (registry !== undefined || settings !== undefined) {
      throw new TypeError(`lazybreaker: ${caller}: registry and settings go with a breaker name, not a CircuitBreaker`);
    }
    return breaker;
  }
  if (typeof breaker !== 'string') {
    throw new TypeError(`lazybreaker: ${caller}: breaker must be a CircuitBreaker or a name, got ${describe(breaker)}`);
  }
  if (registry !== undefined && !(registry instanceof Registry)) {
    throw new TypeError(`lazybreaker: ${caller}: registry must be a Registry, got ${describe(registry)}`);
  }
  if (settings !== undefined && (settings === null || typeof settings !== 'object')) {
    throw new TypeError(`lazybreaker: ${caller}: settings must be an object, got ${describe(settings)}`);
  }
  return (registry ?? Registry.default).getOrCreate(breaker, settings ?? {});
}

/** The 503 for a request to `path` that `breaker` rejected: headers and body. */
function unavailable(breaker, path) {
  const name = breaker.name;
  const state = breaker.state;
  const ns = breaker.retryAfterNs;
  const retryAfter = ns === UINT64_MAX ? null : Number((ns + 999_999_999n) / 1_000_000_000n);
  const problem = {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: retryAfter === null ? `The circuit '${name}' is forced open until an operator resets it.`
                                : `The circuit '${name}' is ${state}: retry after ${retryAfter} s.`,
    instance: path,
    circuit: name,
    state,
    retryAfter,
  };
  const headers = { 'content-type': 'application/problem+json', 'cache-control': 'no-store' };
  if (retryAfter !== null) headers['retry-after'] = String(Math.max(1, retryAfter));
  return { headers, body: JSON.stringify(problem) };
}

/** A request URL's path, without its query. */
function pathOf(url) {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Express/Connect middleware: 503 while the breaker is open; else the
 * rest of the app runs, and its answer is the outcome: 5xx a failure, any
 * other a success, a connection closed before the answer ended ignored. */
function shed(options) {
  const breaker = shedBreaker(options, 'shed');
  return function lazybreakerShed(req, res, next) {
    const permit = breaker.tryAcquire();
    if (permit === null) {
      const { headers, body } = unavailable(breaker, pathOf(req.originalUrl ?? req.url));
      res.writeHead(503, headers).end(body);
      return;
    }
    res.once('close', () => {
      if (!res.writableFinished) permit.ignore();
      else if (res.statusCode >= 500) permit.failure();
      else permit.success();
    });
    next();
  };
}

module.exports = { shed, shedBreaker, unavailable, pathOf };
