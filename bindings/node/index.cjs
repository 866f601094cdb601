'use strict';
// lazybreaker for Node.js: docs/node.md.
const native = require('./lib/native');
const { CircuitBreaker, Permit } = require('./lib/breaker');
const { Registry } = require('./lib/registry');
const { Watcher } = require('./lib/watcher');
const { CircuitOpenError, TimeoutError } = require('./lib/errors');

module.exports = {
  CircuitBreaker,
  Permit,
  Registry,
  Watcher,
  CircuitOpenError,
  TimeoutError,
  version: native.libraryVersion,
};
