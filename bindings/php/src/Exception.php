<?php
declare(strict_types=1);

namespace LazyBreaker;

/** What every exception of this library implements: catch (\LazyBreaker\Exception $e). */
interface Exception extends \Throwable
{
}
