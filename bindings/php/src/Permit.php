<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * An admitted call, to report once: success(), failure() or ignore(). A
 * second report throws PermitException. One dropped unreported (at the
 * end of the request, say) reports a failure: a call that never said how
 * it went must not look healthy.
 */
final class Permit
{
    private bool $reported = false;

    /** @internal Breaker::tryAcquire makes permits */
    public function __construct(private readonly Breaker $breaker, private readonly int $ticket)
    {
    }

    public function success(): void
    {
        $this->report(\CB_SUCCESS);
    }

    public function failure(): void
    {
        $this->report(\CB_FAILURE);
    }

    /** Counted nowhere: neither a success nor a failure. */
    public function ignore(): void
    {
        $this->report(\CB_IGNORED);
    }

    public function isReported(): bool
    {
        return $this->reported;
    }

    /** @internal the library's ticket */
    public function ticket(): int
    {
        return $this->ticket;
    }

    private function report(int $outcome): void
    {
        if ($this->reported) {
            throw new PermitException("lazybreaker: this permit of breaker '{$this->breaker->name()}' was reported already");
        }
        $h = $this->breaker->handle();
        $this->reported = true;
        \cb_done($h, $this->ticket, $outcome);
    }

    public function __destruct()
    {
        if (!$this->reported && !$this->breaker->registry()->isClosed()) {
            $this->reported = true;
            \cb_done($this->breaker->handle(), $this->ticket, \CB_FAILURE);
        }
    }
}
