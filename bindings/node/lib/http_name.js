'use strict';
// The breaker name of an upstream, the same in every language's HTTP
// integration (docs/http.md): `http/<host>:<port>`, the host as WHATWG URL
// parsing gives it (lowercase, IDNA to ASCII, IPv6 in brackets) and the
// port always written, so processes in any language that share a registry
// file share one breaker per upstream.
const { describe } = require('./config');

const DEFAULT_PORTS = new Map([['http:', '80'], ['https:', '443'], ['ws:', '80'], ['wss:', '443']]);

/** A URL from what a caller passes as one (a string or a URL). */
function toUrl(url, option = 'url') {
  if (url instanceof URL) return url;
  if (typeof url !== 'string') {
    throw new TypeError(`lazybreaker: ${option} must be a URL or a string, got ${describe(url)}`);
  }
  try {
    return new URL(url);
  } catch {
    throw new TypeError(`lazybreaker: ${option} must be an absolute URL, got ${JSON.stringify(url)}`);
  }
}

/** The breaker name of `url`'s origin: `http/<host>:<port>`. */
function httpBreakerName(url) {
  const parsed = toUrl(url);
  const port = parsed.port || DEFAULT_PORTS.get(parsed.protocol);
  if (port === undefined) {
    throw new RangeError(`lazybreaker: url must be http(s) or ws(s) or name its port, got ${parsed.protocol}`);
  }
  return `http/${parsed.hostname}:${port}`;
}

module.exports = { httpBreakerName, toUrl };
