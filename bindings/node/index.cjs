'use strict';
// lazybreaker for Node.js: docs/node.md.
const native = require('./lib/native');
const { CircuitBreaker, Permit } = require('./lib/breaker');
const { Registry } = require('./lib/registry');
const { Watcher } = require('./lib/watcher');
const { CircuitOpenError, TimeoutError } = require('./lib/errors');
const { httpBreakerName } = require('./lib/http_name');
const { shed } = require('./lib/shed');
const { fastifyShed } = require('./lib/fastify');
const { wrapFetch } = require('./lib/fetch');
const { interceptor } = require('./lib/undici');

module.exports = {
  CircuitBreaker,
  Permit,
  Registry,
  Watcher,
  CircuitOpenError,
  TimeoutError,
  httpBreakerName,
  shed,
  fastifyShed,
  wrapFetch,
  interceptor,
  version: native.libraryVersion,
};
