'use strict';
// fastifyShed: lib/shed.js as a Fastify plugin, without the fastify-plugin
// package: Symbol.for('skip-override') makes its hooks the whole app's.
// onRequest answers 503 while the breaker is open; onResponse reports the
// status (5xx a failure); onError reports a thrown error as a failure
// unless it carries a 4xx statusCode (Fastify answers it as the client's
// fault); onRequestAbort (the client went away) ignores the call.
const { shedBreaker, unavailable, pathOf } = require('./shed');

async function fastifyShed(fastify, options) {
  const breaker = shedBreaker(options, 'fastifyShed');
  const permits = new WeakMap();
  const settle = (request, report) => {
    const permit = permits.get(request);
    if (permit === undefined) return;
    permits.delete(request);
    report(permit);
  };
  fastify.addHook('onRequest', async (request, reply) => {
    const permit = breaker.tryAcquire();
    if (permit !== null) {
      permits.set(request, permit);
      return undefined;
    }
    const { headers, body } = unavailable(breaker, pathOf(request.url));
    // a Buffer, so that Fastify adds no charset to the content type
    return reply.code(503).headers(headers).send(Buffer.from(body));
  });
  fastify.addHook('onError', async (request, reply, error) => {
    const status = error?.statusCode;
    if (!(status >= 400 && status < 500)) settle(request, (permit) => permit.failure());
  });
  fastify.addHook('onResponse', async (request, reply) => {
    settle(request, (permit) => (reply.statusCode >= 500 ? permit.failure() : permit.success()));
  });
  fastify.addHook('onRequestAbort', async (request) => {
    settle(request, (permit) => permit.ignore());
  });
}
fastifyShed[Symbol.for('skip-override')] = true;
fastifyShed[Symbol.for('fastify.display-name')] = 'lazybreaker';

module.exports = { fastifyShed };
