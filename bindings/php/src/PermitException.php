<?php
declare(strict_types=1);

namespace LazyBreaker;

/** A permit reported a second time. */
class PermitException extends \LogicException implements Exception
{
}
