<?php
// The PHP half of node's http_cross_language test, run as its own process
// by bindings/node/test/http_cross_language.js: Guzzle with the
// lazybreaker middleware over the registry file that Node.js shares, and
// the breaker of the upstream by the convention's name (docs/http.md).
//   sees:  Node.js tripped it; the request is rejected and not sent.
//   trips: the upstream's 500 opens it, for Node.js to see.
// Without Guzzle: exit 77 (skipped), or 1 under CI=true.
declare(strict_types=1);

require_once __DIR__ . '/../src/autoload.php';

use GuzzleHttp\Client;
use GuzzleHttp\Exception\ServerException;
use GuzzleHttp\HandlerStack;
use LazyBreaker\{CircuitOpenException, Config, Registry};
use LazyBreaker\Guzzle\CircuitBreakerMiddleware;

if (!@include_once 'GuzzleHttp/autoload.php') {
    fwrite(STDERR, "php: Guzzle is not installed (Debian: php-guzzlehttp-guzzle)\n");
    exit(getenv('CI') === 'true' ? 1 : 77);
}
[, $mode, $file, $url] = $argv;
$registry = Registry::open(['path' => $file]);
$stack = HandlerStack::create();
$stack->push(new CircuitBreakerMiddleware($registry, new Config(failureThreshold: 1, timeoutSeconds: 300)));
$client = new Client(['handler' => $stack]);
$name = CircuitBreakerMiddleware::breakerName(new GuzzleHttp\Psr7\Uri($url));

if ($mode === 'sees') {
    try {
        $client->get($url);
        throw new RuntimeException("{$name} admitted a request");
    } catch (CircuitOpenException $e) {
        printf("php: %s rejects, retry after %d s\n", $e->breakerName(), $e->retryAfter());
    }
} else {
    try {
        $client->get($url);
        throw new RuntimeException('the upstream answered with no error');
    } catch (ServerException $e) {
        $state = $registry->lookup($name)->state();
        $state === 'open' || throw new RuntimeException("{$name}: {$state}");
        printf("php: %s opened by a %d\n", $name, $e->getResponse()->getStatusCode());
    }
}
$registry->close();
