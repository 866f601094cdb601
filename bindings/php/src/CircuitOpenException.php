<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * Breaker::call() was rejected: the circuit is open (or half-open with
 * every probe taken, or forced open). retryAfter() is what a Retry-After
 * header wants: whole seconds, rounded up; null when forced open (until an
 * operator resets it).
 */
class CircuitOpenException extends \RuntimeException implements Exception
{
    public function __construct(
        private readonly string $breaker,
        private readonly string $state,
        private readonly ?int $retryAfter,
    ) {
        $when = $retryAfter === null ? 'until it is reset' : "retry after {$retryAfter} s";
        parent::__construct("lazybreaker: the circuit '{$breaker}' is {$state}: {$when}", \CB_REJECTED);
    }

    /** Whole seconds until a call could be admitted, rounded up; null when forced open. */
    public function retryAfter(): ?int
    {
        return $this->retryAfter;
    }

    /** The state that rejected the call: "open", "half_open" or "forced_open". */
    public function state(): string
    {
        return $this->state;
    }

    public function breakerName(): string
    {
        return $this->breaker;
    }
}
