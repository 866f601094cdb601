<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * An option or argument the library refuses, named in PHP's words
 * (failureThreshold, timeoutSeconds): option() is that name. Nothing was
 * changed.
 */
class InvalidArgumentException extends \InvalidArgumentException implements Exception
{
    public function __construct(string $message, private readonly ?string $option = null, ?\Throwable $previous = null)
    {
        parent::__construct('lazybreaker: ' . $message, \CB_EINVAL, $previous);
    }

    /** The option at fault (a Config or Registry::open option), or null. */
    public function option(): ?string
    {
        return $this->option;
    }
}
