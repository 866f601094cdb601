<?php
declare(strict_types=1);

namespace LazyBreaker\Guzzle;

use GuzzleHttp\Exception\RequestException;
use GuzzleHttp\Promise\{Create, PromiseInterface};
use LazyBreaker\{Breaker, Config, Permit, Registry};
use Psr\Http\Message\{RequestInterface, ResponseInterface, UriInterface};

/**
 * A Guzzle middleware that puts a breaker per upstream (named
 * "http/<host>:<port>" as in every language's HTTP integration,
 * docs/http.md, or as $name(UriInterface) says; in $registry, created with
 * $config) in front of every outgoing request:
 *
 *     $stack = HandlerStack::create();
 *     $stack->push(new CircuitBreakerMiddleware(Registry::open([...]), new Config(failureThreshold: 5)));
 *
 * A 5xx response and a connection error are failures; any other response
 * (4xx included: the caller's fault, not the host's) a success; a 429 or
 * 503 with Retry-After (seconds or an HTTP date) trips the host's breaker
 * for exactly that long (at most the library's longest open duration). While a host's circuit is open, requests to it are
 * rejected at once, the promise rejected with CircuitOpenException, and
 * nothing is sent.
 */
final class CircuitBreakerMiddleware
{
    /** The library's longest open duration (CB_MAX_DURATION_NS, 366 days), which the extension does not export. */
    private const MAX_TRIP_SECONDS = 366 * 24 * 3600;

    /** @var callable(UriInterface): string */
    private $name;

    public function __construct(
        private readonly Registry $registry,
        private readonly ?Config $config = null,
        ?callable $name = null,
    ) {
        $this->name = $name ?? self::breakerName(...);
    }

    /** The breaker of a request's upstream. */
    public function breakerFor(RequestInterface $request): Breaker
    {
        return $this->registry->getOrCreate(($this->name)($request->getUri()), $this->config);
    }

    /**
     * "http/<host>:<port>": the host lowercased, an IDN in its ASCII form
     * (with the intl extension; without it a non-ASCII host stays as
     * given), an IPv6 address in brackets in its shortest form, the port
     * always written (80 or 443 from the scheme).
     */
    public static function breakerName(UriInterface $uri): string
    {
        $host = strtolower($uri->getHost());
        if (str_starts_with($host, '[') && ($ip = @inet_pton(substr($host, 1, -1))) !== false) {
            $host = '[' . inet_ntop($ip) . ']';
        } elseif (preg_match('/[^\x00-\x7f]/', $host) === 1 && function_exists('idn_to_ascii')) {
            $host = idn_to_ascii($host, IDNA_NONTRANSITIONAL_TO_ASCII, INTL_IDNA_VARIANT_UTS46) ?: $host;
        }
        $port = $uri->getPort() ?? (strtolower($uri->getScheme()) === 'https' ? 443 : 80);
        return "http/{$host}:{$port}";
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
        } else {
            $permit->success();
        }
        if (($status === 429 || $status === 503)
            && ($seconds = self::retryAfter($response->getHeaderLine('Retry-After'))) !== null) {
            $breaker->trip(min($seconds, self::MAX_TRIP_SECONDS));
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
