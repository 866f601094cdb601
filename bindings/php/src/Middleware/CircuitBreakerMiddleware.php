<?php
declare(strict_types=1);

namespace LazyBreaker\Middleware;

use LazyBreaker\{Breaker, CircuitOpenException};
use Psr\Http\Message\{ResponseFactoryInterface, ResponseInterface, ServerRequestInterface, StreamFactoryInterface};
use Psr\Http\Server\{MiddlewareInterface, RequestHandlerInterface};

/**
 * A PSR-15 middleware that runs the rest of the pipeline through a
 * breaker: while the circuit is open it answers at once, without calling
 * the handler, 503 Service Unavailable with Retry-After (whole seconds,
 * rounded up; left out when forced open) and an RFC 9457 problem+json
 * body. A response of 500 or more, or a Throwable (rethrown), is a
 * failure; $classify(ResponseInterface|null $response, ?\Throwable $error)
 * may say otherwise ('success', 'failure', 'ignored' or a bool), as
 * Breaker::call's classifier.
 *
 *     $app->pipe(new CircuitBreakerMiddleware($breaker, new Psr17Factory()));
 */
final class CircuitBreakerMiddleware implements MiddlewareInterface
{
    /** @var callable */
    private $classify;

    public function __construct(
        private readonly Breaker $breaker,
        private readonly ResponseFactoryInterface $responses,
        private readonly ?StreamFactoryInterface $streams = null,
        ?callable $classify = null,
    ) {
        $this->classify = $classify ?? static fn (?ResponseInterface $response, ?\Throwable $error): bool
            => $error === null && $response !== null && $response->getStatusCode() < 500;
    }

    public function process(ServerRequestInterface $request, RequestHandlerInterface $handler): ResponseInterface
    {
        try {
            return $this->breaker->call(static fn (): ResponseInterface => $handler->handle($request), $this->classify);
        } catch (CircuitOpenException $e) {
            return $this->unavailable($request, $e);
        }
    }

    private function unavailable(ServerRequestInterface $request, CircuitOpenException $e): ResponseInterface
    {
        $retryAfter = $e->retryAfter();
        $problem = [
            'type' => 'about:blank',
            'title' => 'Service Unavailable',
            'status' => 503,
            'detail' => $retryAfter === null
                ? "The circuit '{$e->breakerName()}' is forced open until an operator resets it."
                : "The circuit '{$e->breakerName()}' is {$e->state()}: retry after {$retryAfter} s.",
            'instance' => (string) $request->getUri()->getPath(),
            'circuit' => $e->breakerName(),
            'state' => $e->state(),
            'retryAfter' => $retryAfter,
        ];
        $json = json_encode($problem, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR);
        $response = $this->responses->createResponse(503)
            ->withHeader('Content-Type', 'application/problem+json')
            ->withHeader('Cache-Control', 'no-store');
        if ($retryAfter !== null) {
            $response = $response->withHeader('Retry-After', (string) max(1, $retryAfter));
        }
        if ($this->streams !== null) {
            return $response->withBody($this->streams->createStream($json));
        }
        $response->getBody()->write($json);
        return $response;
    }
}
