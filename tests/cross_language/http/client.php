<?php
// The PHP client of one_upstream.py: Guzzle with the lazybreaker middleware
// over the registry file. Without Guzzle: exit 77 (skipped).
//   php client.php REGISTRY_FILE URL
declare(strict_types=1);

require_once __DIR__ . '/../../../bindings/php/src/autoload.php';

use GuzzleHttp\Client;
use GuzzleHttp\HandlerStack;
use LazyBreaker\{CircuitOpenException, Config, Registry};
use LazyBreaker\Guzzle\CircuitBreakerMiddleware;

if (!@include_once 'GuzzleHttp/autoload.php') {
    fwrite(STDERR, "php: Guzzle is not installed (Debian: php-guzzlehttp-guzzle)\n");
    exit(77);
}
[$file, $url] = array_slice($argv, -2);
$registry = Registry::open(['path' => $file, 'create' => true]);
$stack = HandlerStack::create();
$stack->push(new CircuitBreakerMiddleware($registry, new Config(failureThreshold: 1, timeoutSeconds: 2)));
$client = new Client(['handler' => $stack, 'http_errors' => false]);
echo "ready\n";
while (($line = fgets(STDIN)) !== false) {
    try {
        $status = $client->get($url)->getStatusCode();
        echo "sent {$status}\n";
    } catch (CircuitOpenException) {
        echo "rejected\n";
    }
}
$registry->close();
