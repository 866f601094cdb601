<?php
declare(strict_types=1);

use GuzzleHttp\Client;
use GuzzleHttp\Exception\{ClientException, ConnectException, ServerException};
use GuzzleHttp\Handler\MockHandler;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Psr7\{Request, Response, Uri};
use LazyBreaker\{CircuitOpenException, Config, Registry};
use LazyBreaker\Guzzle\CircuitBreakerMiddleware;
use PHPUnit\Framework\TestCase;

require_once 'GuzzleHttp/autoload.php';

/** The Guzzle middleware (Debian's php-guzzlehttp-guzzle), over Guzzle's MockHandler. */
final class GuzzleMiddlewareTest extends TestCase
{
    private Registry $registry;
    private MockHandler $mock;
    private Client $client;

    protected function setUp(): void
    {
        $this->registry = Registry::manualClock();
        $this->mock = new MockHandler();
        $stack = HandlerStack::create($this->mock);
        $stack->push(new CircuitBreakerMiddleware($this->registry, new Config(failureThreshold: 2, timeoutSeconds: 60)), 'circuit_breaker');
        $this->client = new Client(['handler' => $stack]);
    }

    private function get(string $url): int|string
    {
        try {
            return $this->client->get($url)->getStatusCode();
        } catch (ServerException | ClientException $e) {
            return $e->getResponse()->getStatusCode();
        } catch (\Throwable $e) {
            return get_class($e);
        }
    }

    public function test5xxAndConnectionErrorsAreFailuresOfThatHostOnly(): void
    {
        $this->mock->append(new Response(503), new ConnectException('refused', new Request('GET', 'http://pay.test/')), new Response(200));
        $this->assertSame(503, $this->get('http://pay.test/charge'));
        $this->assertSame(ConnectException::class, $this->get('http://pay.test/charge'));
        $this->assertSame('open', $this->registry->lookup('http/pay.test:80')->state());
        $this->assertSame(CircuitOpenException::class, $this->get('http://pay.test/charge'));
        $this->assertSame(1, $this->mock->count(), 'nothing was sent while open');
        $this->assertSame(200, $this->get('http://mail.test:8025/send'), 'another host, another breaker');
        $this->assertSame('closed', $this->registry->lookup('http/mail.test:8025')->state());
    }

    public function test4xxAreNotFailures(): void
    {
        $this->mock->append(new Response(404), new Response(400), new Response(403));
        foreach ([404, 400, 403] as $status) {
            $this->assertSame($status, $this->get('http://api.test/x'));
        }
        $b = $this->registry->lookup('http/api.test:80');
        $this->assertSame('closed', $b->state());
        $this->assertSame(0, $b->stats()['failures']);
    }

    public function testA429sRetryAfterTripsForExactlyThatLong(): void
    {
        $this->mock->append(new Response(429, ['Retry-After' => '120']));
        $this->assertSame(429, $this->get('http://rate.test/'));
        $b = $this->registry->lookup('http/rate.test:80');
        $this->assertSame('open', $b->state());
        $this->assertSame(120000000000, $b->retryAfterNs());
        $this->registry->advance(119.999);
        $this->assertSame(CircuitOpenException::class, $this->get('http://rate.test/'));
        $this->registry->advance(0.001);
        $this->mock->append(new Response(200));
        $this->assertSame(200, $this->get('http://rate.test/'), 'the probe after exactly 120 s');
        $this->assertSame('closed', $b->state());
    }

    public function testA503sRetryAfterTripsForExactlyThatLong(): void
    {
        $this->mock->append(new Response(503, ['Retry-After' => '7']));
        $this->assertSame(503, $this->get('http://busy.test/'));
        $b = $this->registry->lookup('http/busy.test:80');
        $this->assertSame('open', $b->state());
        $this->assertSame(7000000000, $b->retryAfterNs(), 'the Retry-After, not the 60 s of the config');
    }

    public function testARetryAfterPastTheLongestOpenDurationTripsForThatLongest(): void
    {
        $this->mock->append(new Response(429, ['Retry-After' => '99999999999']));
        $this->get('http://slow.test/');
        $this->assertSame(366 * 24 * 3600 * 1000000000, $this->registry->lookup('http/slow.test:80')->retryAfterNs());
    }

    public function testTheBreakerNameIsHttpHostPort(): void
    {
        $name = static fn (string $url): string => CircuitBreakerMiddleware::breakerName(new Uri($url));
        $this->assertSame('http/api.example.com:80', $name('http://API.Example.COM/v1?q=1'));
        $this->assertSame('http/api.example.com:443', $name('https://api.example.com/'));
        $this->assertSame('http/127.0.0.1:8080', $name('http://127.0.0.1:8080/x'));
        $this->assertSame('http/example.com:80', $name('https://example.com:80/'));
        $this->assertSame('http/[::1]:80', $name('http://[::1]/'));
        $this->assertSame('http/[2001:db8::1]:8443', $name('https://[2001:DB8:0:0::1]:8443/'));
        $this->assertSame('http/xn--bcher-kva.example:443', $name('https://xn--bcher-kva.example/'));
        if (function_exists('idn_to_ascii')) {
            $this->assertSame('http/xn--bcher-kva.example:443', $name('https://bücher.example/'));
        }
    }

    public function testANameFunctionNamesTheBreakerOtherwise(): void
    {
        $stack = HandlerStack::create($this->mock);
        $stack->push(new CircuitBreakerMiddleware($this->registry, null, static fn (Uri $uri): string => 'api/' . $uri->getHost()));
        $this->mock->append(new Response(200));
        (new Client(['handler' => $stack]))->get('http://named.test/');
        $this->assertSame(1, $this->registry->lookup('api/named.test')->stats()['successes']);
    }

    public function testA429WithoutRetryAfterIsNoFailure(): void
    {
        $this->mock->append(new Response(429), new Response(429));
        $this->get('http://rate.test/');
        $this->get('http://rate.test/');
        $this->assertSame('closed', $this->registry->lookup('http/rate.test:80')->state());
    }

    public function testRetryAfterAsAnHttpDate(): void
    {
        $now = 1767225600; // 2026-01-01T00:00:00Z
        $this->assertSame(90, CircuitBreakerMiddleware::retryAfter('Thu, 01 Jan 2026 00:01:30 GMT', $now));
        $this->assertNull(CircuitBreakerMiddleware::retryAfter('Wed, 31 Dec 2025 23:59:00 GMT', $now));
        $this->assertNull(CircuitBreakerMiddleware::retryAfter('soon', $now));
        $this->assertSame(7, CircuitBreakerMiddleware::retryAfter(' 7 ', $now));
    }

    public function testTheRejectionCarriesRetryAfter(): void
    {
        $this->mock->append(new Response(500), new Response(500));
        $this->get('http://pay.test/');
        $this->get('http://pay.test/');
        try {
            $this->client->get('http://pay.test/');
            $this->fail('sent');
        } catch (CircuitOpenException $e) {
            $this->assertSame(60, $e->retryAfter());
        }
    }
}
