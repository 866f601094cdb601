'use strict';
// The breaker name of an upstream (docs/http.md): http/<host>:<port>.
const test = require('node:test');
const assert = require('node:assert');
const { httpBreakerName } = require('..');

test('the host is lowercased and the default port written', () => {
  assert.strictEqual(httpBreakerName('http://API.Example.COM/v1?q=1'), 'http/api.example.com:80');
  assert.strictEqual(httpBreakerName('https://api.example.com/'), 'http/api.example.com:443');
  assert.strictEqual(httpBreakerName('wss://push.example.com/'), 'http/push.example.com:443');
});

test('an explicit port is kept, a default one written once', () => {
  assert.strictEqual(httpBreakerName('http://127.0.0.1:8080/x'), 'http/127.0.0.1:8080');
  assert.strictEqual(httpBreakerName('https://example.com:443/'), 'http/example.com:443');
  assert.strictEqual(httpBreakerName('http://example.com:443/'), 'http/example.com:443');
  assert.strictEqual(httpBreakerName('https://example.com:80/'), 'http/example.com:80');
});

test('an IDN host is its ASCII (punycode) form', () => {
  assert.strictEqual(httpBreakerName('https://Bücher.example/'), 'http/xn--bcher-kva.example:443');
  assert.strictEqual(httpBreakerName('http://xn--bcher-kva.example/'), 'http/xn--bcher-kva.example:80');
});

test('an IPv6 host is in brackets, lowercased and compressed', () => {
  assert.strictEqual(httpBreakerName('http://[::1]/'), 'http/[::1]:80');
  assert.strictEqual(httpBreakerName('https://[2001:DB8:0:0::1]:8443/'), 'http/[2001:db8::1]:8443');
});

test('a URL object names the same as its string', () => {
  assert.strictEqual(httpBreakerName(new URL('HTTP://Example.com:8080')), 'http/example.com:8080');
});

test('what is not an absolute http(s) URL is refused, naming the argument', () => {
  assert.throws(() => httpBreakerName('/relative'), { name: 'TypeError', message: /url must be an absolute URL/ });
  assert.throws(() => httpBreakerName(42), { name: 'TypeError', message: /url must be a URL or a string, got 42/ });
  assert.throws(() => httpBreakerName('ftp://files.example/'), { name: 'RangeError', message: /got ftp:/ });
  assert.strictEqual(httpBreakerName('ftp://files.example:2121/'), 'http/files.example:2121');
});
