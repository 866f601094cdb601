<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * One circuit breaker, guarding one downstream dependency. Its state lives
 * in the registry (a file every PHP-FPM worker shares): what one worker
 * records, every worker sees. The state machine is the C library's; these
 * methods call it.
 */
final class Breaker
{
    private static ?array $outcomes = null;

    /** @internal Registry makes breakers */
    public function __construct(private readonly Registry $registry, private readonly int $handle, private readonly string $name)
    {
    }

    public function name(): string
    {
        return $this->name;
    }

    /** Whether a call would be admitted now; asking changes nothing (no probe is taken). */
    public function isCallAllowed(): bool
    {
        return \cb_retry_after($this->handle()) === 0;
    }

    /**
     * Runs $fn through the breaker and returns its result. Rejected:
     * CircuitOpenException, $fn not called. A Throwable from $fn is a
     * failure and is rethrown. $classify, if given, decides instead:
     * $classify(mixed $result, ?\Throwable $error) returns 'success',
     * 'failure' or 'ignored' (or true / false); a Throwable is rethrown
     * whatever it says, a result returned.
     */
    public function call(callable $fn, ?callable $classify = null): mixed
    {
        $h = $this->handle();
        $ticket = \cb_allow($h);
        if ($ticket === 0) {
            throw $this->rejection();
        }
        try {
            $result = $fn();
        } catch (\Throwable $error) {
            $this->settle($h, $ticket, $classify, null, $error);
            throw $error;
        }
        $this->settle($h, $ticket, $classify, $result, null);
        return $result;
    }

    /** The two-step form: a Permit to report, or null when rejected. */
    public function tryAcquire(): ?Permit
    {
        $ticket = \cb_allow($this->handle());
        return $ticket === 0 ? null : new Permit($this, $ticket);
    }

    /** "closed", "open", "half_open", "forced_open" or "disabled" (cb_state_name). */
    public function state(): string
    {
        return \cb_state_name(\cb_state($this->handle()));
    }

    /**
     * Whole seconds until a call could be admitted, rounded up, as a
     * Retry-After header wants: 0 when one would be now; null when forced
     * open (until reset).
     */
    public function retryAfter(): ?int
    {
        $ns = $this->retryAfterNs();
        return $ns === null ? null : intdiv($ns, 1000000000) + ($ns % 1000000000 > 0 ? 1 : 0);
    }

    /** retryAfter() in exact nanoseconds; null when forced open. */
    public function retryAfterNs(): ?int
    {
        $ns = \cb_retry_after($this->handle());
        return $ns < 0 ? null : $ns;
    }

    /** OPEN now, for exactly $seconds (then a probe, as after any trip). */
    public function trip(int|float $seconds): void
    {
        if (!is_finite((float) $seconds) || $seconds < 0 || $seconds * 1e9 >= 9.2e18) {
            throw new InvalidArgumentException('trip: expected seconds, 0 or more, got ' . $seconds, 'seconds');
        }
        $this->tripNs((int) round($seconds * 1e9));
    }

    public function tripNs(int $ns): void
    {
        try {
            \cb_trip($this->handle(), $ns);
        } catch (LazyBreakerException $e) {
            throw $e->getCode() === \CB_EINVAL ? new InvalidArgumentException('trip: ' . preg_replace('/^lazybreaker: [A-Z_]+: [^:]*: /', '', $e->getMessage()), 'seconds', $e) : $e;
        }
    }

    /** Rejects every call until reset(). */
    public function forceOpen(): void
    {
        \cb_force_open($this->handle());
    }

    /** Admits every call and records nothing until reset(). */
    public function disable(): void
    {
        \cb_disable($this->handle());
    }

    /** CLOSED, counters of the current period cleared. */
    public function reset(): void
    {
        \cb_reset($this->handle());
    }

    /**
     * The counters: admitted, rejected, successes, failures, ignored,
     * trips, consecutiveFailures, slow, failureRate, slowRate, stateNs
     * (cb_stats's fields in camelCase).
     */
    public function stats(): array
    {
        $out = [];
        foreach (\lb_php_stats($this->handle()) as $field => $value) {
            $out[Config::camel($field)] = $value;
        }
        return $out;
    }

    /** The configuration read back, by C field (cb_config_get), in C units. */
    public function fields(): array
    {
        return \lb_php_config($this->handle());
    }

    public function registry(): Registry
    {
        return $this->registry;
    }

    /** @internal the handle, or ClosedException when the registry is closed */
    public function handle(): int
    {
        if ($this->registry->isClosed()) {
            throw new ClosedException("lazybreaker: the registry of breaker '{$this->name}' is closed");
        }
        return $this->handle;
    }

    /** @internal */
    public function rejection(): CircuitOpenException
    {
        return new CircuitOpenException($this->name, $this->state(), $this->retryAfter());
    }

    /** @internal reports an outcome: 'success', 'failure' or 'ignored' (CB_SUCCESS, ...). */
    public static function outcome(string|bool|null $verdict): ?int
    {
        if (is_bool($verdict)) {
            return $verdict ? \CB_SUCCESS : \CB_FAILURE;
        }
        if (self::$outcomes === null) {
            self::$outcomes = [];
            foreach (['CB_SUCCESS', 'CB_FAILURE', 'CB_IGNORED'] as $c) {
                self::$outcomes[strtolower(substr($c, 3))] = constant($c);
            }
        }
        return $verdict === null ? null : (self::$outcomes[$verdict] ?? null);
    }

    private function settle(int $h, int $ticket, ?callable $classify, mixed $result, ?\Throwable $error): void
    {
        if ($this->registry->isClosed()) {
            return; // closed by $fn itself: nothing left to report to
        }
        if ($classify === null) {
            \cb_done($h, $ticket, $error === null ? \CB_SUCCESS : \CB_FAILURE);
            return;
        }
        try {
            $verdict = $classify($result, $error);
        } catch (\Throwable $e) {
            \cb_done($h, $ticket, \CB_FAILURE);
            throw $e;
        }
        $outcome = is_string($verdict) || is_bool($verdict) ? self::outcome($verdict) : null;
        \cb_done($h, $ticket, $outcome ?? \CB_FAILURE);
        if ($outcome === null) {
            throw new \UnexpectedValueException("lazybreaker: the classifier returned " . get_debug_type($verdict) . "; expected 'success', 'failure', 'ignored' or a bool");
        }
    }
}
