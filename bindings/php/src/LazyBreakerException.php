<?php
declare(strict_types=1);

namespace LazyBreaker;

/**
 * A status the library returned (getCode() is the negative cb_status, as
 * CB_EINVAL), with the library's message. The extension throws it
 * (bindings/swig/php.i); the classes throw its subclasses where PHP has a
 * better word.
 */
class LazyBreakerException extends \RuntimeException implements Exception
{
    /** The status's name, from the library: "CB_EHANDLE". */
    public function statusName(): string
    {
        return (string) \cb_status_name($this->getCode());
    }
}
