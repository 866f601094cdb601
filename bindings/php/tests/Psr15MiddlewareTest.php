<?php
declare(strict_types=1);

use LazyBreaker\{Config, Registry};
use LazyBreaker\Middleware\CircuitBreakerMiddleware;
use Nyholm\Psr7\Factory\Psr17Factory;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\{ResponseInterface, ServerRequestInterface};
use Psr\Http\Server\RequestHandlerInterface;

require_once 'Nyholm/Psr7/autoload.php';

/**
 * The PSR-15 middleware against the interfaces of Debian's php8.2-psr
 * extension (PSR-15 has no library package in Debian 12), with Nyholm's
 * PSR-7 and PSR-17; CTest runs it in a php process of its own, since the
 * extension declares PSR-7's interfaces too.
 */
final class Psr15MiddlewareTest extends TestCase
{
    private Registry $registry;
    private Psr17Factory $factory;
    private int $calls = 0;

    protected function setUp(): void
    {
        $this->assertTrue(extension_loaded('psr'), 'php8.2-psr provides Psr\Http\Server\MiddlewareInterface');
        $this->registry = Registry::manualClock();
        $this->factory = new Psr17Factory();
    }

    private function handler(int $status): RequestHandlerInterface
    {
        return new class ($this->factory, $status, $this->calls) implements RequestHandlerInterface {
            public function __construct(private Psr17Factory $f, private int $status, private int &$calls)
            {
            }

            public function handle(ServerRequestInterface $request): ResponseInterface
            {
                $this->calls++;
                return $this->f->createResponse($this->status);
            }
        };
    }

    private function request(): ServerRequestInterface
    {
        return $this->factory->createServerRequest('GET', 'http://app.test/checkout');
    }

    public function testItIsAPsr15Middleware(): void
    {
        $m = new CircuitBreakerMiddleware($this->registry->getOrCreate('x'), $this->factory);
        $this->assertInstanceOf(\Psr\Http\Server\MiddlewareInterface::class, $m);
    }

    public function testWhileOpenItAnswers503WithRetryAfterAndProblemJsonWithoutCallingTheHandler(): void
    {
        $breaker = $this->registry->getOrCreate('checkout', new Config(failureThreshold: 2, timeoutSeconds: 30));
        $m = new CircuitBreakerMiddleware($breaker, $this->factory, $this->factory);
        $failing = $this->handler(502);
        $this->assertSame(502, $m->process($this->request(), $failing)->getStatusCode());
        $this->assertSame(502, $m->process($this->request(), $failing)->getStatusCode());
        $this->assertSame(2, $this->calls);
        $this->assertSame('open', $breaker->state());

        $this->registry->advance(0.5);
        $r = $m->process($this->request(), $this->handler(200));
        $this->assertSame(2, $this->calls, 'the handler is not called while open');
        $this->assertSame(503, $r->getStatusCode());
        $this->assertSame('30', $r->getHeaderLine('Retry-After'), '29.5 s rounded up');
        $this->assertSame('application/problem+json', $r->getHeaderLine('Content-Type'));
        $problem = json_decode((string) $r->getBody(), true, flags: JSON_THROW_ON_ERROR);
        $this->assertSame(503, $problem['status']);
        $this->assertSame('Service Unavailable', $problem['title']);
        $this->assertSame('about:blank', $problem['type']);
        $this->assertSame('/checkout', $problem['instance']);
        $this->assertSame(30, $problem['retryAfter']);
        $this->assertStringContainsString("'checkout' is open", $problem['detail']);
    }

    public function testAfterTheOpenDurationOneRequestProbesAndClosesIt(): void
    {
        $breaker = $this->registry->getOrCreate('probe', new Config(failureThreshold: 1, timeoutSeconds: 5));
        $m = new CircuitBreakerMiddleware($breaker, $this->factory);
        $m->process($this->request(), $this->handler(500));
        $this->registry->advance(5);
        $this->assertSame(200, $m->process($this->request(), $this->handler(200))->getStatusCode());
        $this->assertSame('closed', $breaker->state());
    }

    public function testA4xxIsNotAFailureAndAThrowableIsOneAndIsRethrown(): void
    {
        $breaker = $this->registry->getOrCreate('errors', new Config(failureThreshold: 1));
        $m = new CircuitBreakerMiddleware($breaker, $this->factory);
        $m->process($this->request(), $this->handler(404));
        $this->assertSame('closed', $breaker->state());
        $throwing = new class implements RequestHandlerInterface {
            public function handle(ServerRequestInterface $request): ResponseInterface
            {
                throw new \RuntimeException('database down');
            }
        };
        try {
            $m->process($this->request(), $throwing);
            $this->fail('not rethrown');
        } catch (\RuntimeException $e) {
            $this->assertSame('database down', $e->getMessage());
        }
        $this->assertSame('open', $breaker->state());
    }

    public function testForcedOpenLeavesRetryAfterOut(): void
    {
        $breaker = $this->registry->getOrCreate('forced');
        $breaker->forceOpen();
        $r = (new CircuitBreakerMiddleware($breaker, $this->factory))->process($this->request(), $this->handler(200));
        $this->assertSame(503, $r->getStatusCode());
        $this->assertFalse($r->hasHeader('Retry-After'));
        $this->assertNull(json_decode((string) $r->getBody(), true)['retryAfter']);
    }

    public function testAClassifierDecides(): void
    {
        $breaker = $this->registry->getOrCreate('classified', new Config(failureThreshold: 1));
        $m = new CircuitBreakerMiddleware($breaker, $this->factory, null, fn (?ResponseInterface $r) => $r->getStatusCode() !== 404);
        $m->process($this->request(), $this->handler(503));
        $this->assertSame('closed', $breaker->state(), 'the classifier said success');
        $m->process($this->request(), $this->handler(404));
        $this->assertSame('open', $breaker->state());
    }
}
