<?php
declare(strict_types=1);

namespace LazyBreaker\Guzzle;

use GuzzleHttp\Exception\RequestException;
use GuzzleHttp\Promise\{Create, PromiseInterface};
use LazyBreaker\{Breaker, Config, Permit, Registry};
use Psr\Http\Message\{RequestInterface, ResponseInterface};

/**
 * A Guzzle middleware that puts a breaker per upstream host (named
 * "guzzle/<host>[:<port>]" in $registry, created with $config) in front of
 * every outgoing request:
 *
 *     $stack = HandlerStack::create();
 *     $stack->push(new CircuitBreakerMiddleware(Registry::open([...]), new Config(failureThreshold: 5)));
 *
 * A 5xx response and a connection error are failures; any other response
 * (4xx included: the caller's fault, not the host's) a success; a 429 with
 * Retry-After (seconds or an HTTP date) trips the host's breaker for
 * exactly that long. While a host's circuit is open, requests to it are
 * rejected at once, the promise rejected with CircuitOpenException, and
 * nothing is sent.
 */
final class CircuitBreakerMiddleware
{
    public function __construct(
        private readonly Registry $registry,
        private readonly ?Config $config = null,
        private readonly string $prefix = 'guzzle/',
    ) {
    }

    /** The breaker of a request's host. */
    public function breakerFor(RequestInterface $request): Breaker
    {
        $uri = $request->getUri();
        $host = $uri->getHost() . ($uri->getPort() !== null ? ':' . $uri->getPort() : '');
        return $this->registry->getOrCreate($this->prefix . $host, $this->config);
    }

    public function __invoke(callable $handler): callable
    {
        return function (RequestInterface $request, array $options) use ($handler): PromiseInterface {
            $breaker = $this->breakerFor($request);
            $permit = $breaker->tryAcquire();
            if ($permit === null) {
                return Create::rejectionFor($breaker->rejection());
            }
            try {
                $promise = $handler($request, $options);
            } catch (\Throwable $e) {
                $permit->failure();
                throw $e;
            }
            return $promise->then(
                function (ResponseInterface $response) use ($breaker, $permit): ResponseInterface {
                    $this->settle($breaker, $permit, $response);
                    return $response;
                },
                function (mixed $reason) use ($breaker, $permit): PromiseInterface {
                    $response = $reason instanceof RequestException ? $reason->getResponse() : null;
                    if ($response !== null) {
                        $this->settle($breaker, $permit, $response);
                    } elseif ($reason instanceof \Throwable) { // ConnectException, a timeout: no answer
                        $permit->failure();
                    } else {
                        $permit->ignore();
                    }
                    return Create::rejectionFor($reason);
                },
            );
        };
    }

    private function settle(Breaker $breaker, Permit $permit, ResponseInterface $response): void
    {
        $status = $response->getStatusCode();
        if ($status >= 500) {
            $permit->failure();
            return;
        }
        $permit->success();
        if ($status === 429 && ($seconds = self::retryAfter($response->getHeaderLine('Retry-After'))) !== null) {
            $breaker->trip($seconds);
        }
    }

    /** Retry-After's seconds: delta-seconds, or an HTTP date from now; null if absent, past or unreadable. */
    public static function retryAfter(string $value, ?int $now = null): ?int
    {
        $value = trim($value);
        if ($value === '') {
            return null;
        }
        if (ctype_digit($value)) {
            $seconds = (int) $value;
        } else {
            $at = \DateTimeImmutable::createFromFormat(\DATE_RFC7231, $value, new \DateTimeZone('GMT'));
            if ($at === false) {
                return null;
            }
            $seconds = $at->getTimestamp() - ($now ?? time());
        }
        return $seconds > 0 ? $seconds : null;
    }
}
