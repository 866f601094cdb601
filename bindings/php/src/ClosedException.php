<?php
declare(strict_types=1);

namespace LazyBreaker;

/** A call on a closed registry, or on a breaker or permit of one. */
class ClosedException extends \LogicException implements Exception
{
}
