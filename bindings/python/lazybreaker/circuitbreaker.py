"""A drop-in for the `circuitbreaker` package's decorator, over lazybreaker.

    from lazybreaker.circuitbreaker import circuit, CircuitBreakerError

    @circuit(failure_threshold=5, recovery_timeout=30, expected_exception=IOError)
    def fetch(url): ...

Migrating is the import: the decorator, its arguments (failure_threshold,
recovery_timeout, expected_exception as a class, classes or a predicate,
name, fallback_function), CircuitBreakerError, CircuitBreakerMonitor and the
breaker's properties keep their names and meaning. What changes is under
them: the breaker is a lazybreaker one in a registry (the process's
default, or a shared file: use_registry()), so every worker of a pool sees
it, and the half-open state admits one probe at a time, not every call.
An exception that is not expected counts as a success, as in
`circuitbreaker`; asyncio.CancelledError and other BaseExceptions that are
not Exceptions count as nothing. docs/python.md has the table.
"""

from __future__ import annotations

import functools
import inspect
import math
from datetime import datetime, timedelta
from typing import Any, Callable, Iterator, TypeVar, cast

from . import _core
from ._breaker import Breaker
from ._config import Config
from ._errors import CircuitOpenError
from ._registry import Registry

STATE_CLOSED = "closed"
STATE_OPEN = "open"
STATE_HALF_OPEN = "half_open"

F = TypeVar("F", bound=Callable[..., Any])
FailurePredicate = Callable[[type, BaseException], bool]

_registry: Registry | None = None


def use_registry(registry: Registry | None) -> None:
    """The registry that circuits made from now on live in (None: the
    process's default). A pre-fork pool opens a shared file here in each
    worker, before its circuits are made."""
    global _registry
    _registry = registry


def _build_failure_predicate(expected: object) -> FailurePredicate:
    if inspect.isclass(expected) and issubclass(expected, Exception):
        exc_types: tuple[type, ...] = (expected,)
    elif isinstance(expected, str):
        raise ValueError("expected_exception cannot be a string. Did you mean name?")
    elif isinstance(expected, (tuple, list, set, frozenset)):
        exc_types = tuple(expected)
        for t in exc_types:
            if not (inspect.isclass(t) and issubclass(t, BaseException)):
                raise TypeError(f"lazybreaker: expected_exception: {t!r} is not an exception class")
    elif callable(expected) and not inspect.isclass(expected):
        return cast(FailurePredicate, expected)
    else:
        raise ValueError("expected_exception does not look like a predicate")
    return lambda thrown_type, _: issubclass(thrown_type, exc_types)


class CircuitBreaker:
    """circuitbreaker.CircuitBreaker's interface over one lazybreaker breaker."""

    FAILURE_THRESHOLD = 5
    RECOVERY_TIMEOUT = 30
    EXPECTED_EXCEPTION: object = Exception
    FALLBACK_FUNCTION: Callable[..., Any] | None = None

    def __init__(self, failure_threshold: int | None = None, recovery_timeout: float | None = None,
                 expected_exception: object = None, name: str | None = None,
                 fallback_function: Callable[..., Any] | None = None) -> None:
        self._failure_threshold = failure_threshold or self.FAILURE_THRESHOLD
        self._recovery_timeout = recovery_timeout or self.RECOVERY_TIMEOUT
        if expected_exception is None:
            expected_exception = type(self).__dict__.get("EXPECTED_EXCEPTION", CircuitBreaker.EXPECTED_EXCEPTION)
        self.is_failure = _build_failure_predicate(expected_exception)
        self._fallback_function = fallback_function or self.FALLBACK_FUNCTION
        self._name = name
        self._last_failure: BaseException | None = None
        self._breaker: Breaker | None = None
        if name is not None:
            self._bind(name)

    # ---- the lazybreaker breaker under it -------------------------------------------
    def _bind(self, name: str) -> Breaker:
        registry = _registry or Registry.default()
        config = Config(failure_threshold=self._failure_threshold, open_duration=self._recovery_timeout)
        b = registry.get_or_create(name, config)
        self._breaker = Breaker(registry, b.handle, name, self._classify)
        return self._breaker

    def _classify(self, e: BaseException) -> int:
        if not isinstance(e, Exception):
            return _core.CB_IGNORED
        if self.is_failure(type(e), e):
            self._last_failure = e
            return _core.CB_FAILURE
        return _core.CB_SUCCESS

    @property
    def breaker(self) -> Breaker:
        """The lazybreaker Breaker (made on first use when no name was given)."""
        if self._breaker is None:
            raise RuntimeError("lazybreaker: this circuit has no name yet: decorate a function or pass name=")
        return self._breaker

    # ---- the forms -----------------------------------------------------------------
    def __call__(self, wrapped: F) -> F:
        return self.decorate(wrapped)

    def __enter__(self) -> None:
        try:
            self.breaker.__enter__()
        except CircuitOpenError:
            raise CircuitBreakerError(self) from None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            self._last_failure = None
        self.breaker.__exit__(exc_type, exc, tb)

    def decorate(self, function: F) -> F:
        if self._breaker is None:
            self._name = getattr(function, "__qualname__", None) or function.__name__
            self._bind(self._name)
        CircuitBreakerMonitor.register(self)
        fallback = self._fallback_function

        if inspect.isgeneratorfunction(function):
            @functools.wraps(function)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
                if fallback is not None and self.opened:
                    return cast(Iterator[Any], fallback(*args, **kwargs))
                return self.call_generator(function, *args, **kwargs)

            return cast(F, gen_wrapper)

        if inspect.iscoroutinefunction(function):
            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                try:
                    async with self.breaker:
                        result = await function(*args, **kwargs)
                    self._last_failure = None
                    return result
                except CircuitOpenError:
                    if fallback is not None:
                        return fallback(*args, **kwargs)
                    raise CircuitBreakerError(self) from None

            return cast(F, async_wrapper)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return self.call(function, *args, **kwargs)
            except CircuitBreakerError:
                if fallback is not None:
                    return fallback(*args, **kwargs)
                raise

        return cast(F, wrapper)

    def call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self:
            return func(*args, **kwargs)

    def call_generator(self, func: Callable[..., Iterator[Any]], *args: Any, **kwargs: Any) -> Iterator[Any]:
        with self:
            yield from func(*args, **kwargs)

    # ---- circuitbreaker's properties -----------------------------------------------
    @property
    def state(self) -> str:
        """closed, open or half_open: half_open once the recovery timeout has
        passed (circuitbreaker's word; the next call is the probe)."""
        s = self.breaker.state
        if s in ("open", "forced_open"):
            return STATE_HALF_OPEN if self.breaker.retry_after == timedelta(0) else STATE_OPEN
        return STATE_HALF_OPEN if s == "half_open" else STATE_CLOSED

    @property
    def open_remaining(self) -> int:
        """Whole seconds the circuit stays open (rounded up), as circuitbreaker."""
        ra = self.breaker.retry_after
        return 2**31 if ra is None else math.ceil(ra.total_seconds())

    @property
    def open_until(self) -> datetime:
        return datetime.utcnow() + timedelta(seconds=self.open_remaining)

    @property
    def failure_count(self) -> int:
        """The failure run; while open, the threshold that tripped it (the
        library keeps a run only while closed)."""
        if self.breaker.state in ("open", "half_open"):
            return self._failure_threshold
        return self.breaker.stats().consecutive_failures

    @property
    def closed(self) -> bool:
        return self.state == STATE_CLOSED

    @property
    def opened(self) -> bool:
        return self.state == STATE_OPEN

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def last_failure(self) -> BaseException | None:
        return self._last_failure

    @property
    def fallback_function(self) -> Callable[..., Any] | None:
        return self._fallback_function

    def __str__(self) -> str:
        return self._name or ""


class CircuitBreakerError(CircuitOpenError):
    """Raised by an open circuit (a lazybreaker.CircuitOpenError too)."""

    def __init__(self, circuit_breaker: CircuitBreaker, *args: object) -> None:
        ra = circuit_breaker.breaker.retry_after
        super().__init__(f'Circuit "{circuit_breaker.name}" OPEN', retry_after=ra, breaker=circuit_breaker.name)
        self._circuit_breaker = circuit_breaker

    def __str__(self) -> str:
        cb = self._circuit_breaker
        return (f'Circuit "{cb.name}" OPEN until {cb.open_until} ({cb.failure_count} failures, '
                f"{cb.open_remaining} sec remaining) (last_failure: {cb.last_failure!r})")


class CircuitBreakerMonitor:
    circuit_breakers: dict[str | None, CircuitBreaker] = {}

    @classmethod
    def register(cls, circuit_breaker: CircuitBreaker) -> None:
        cls.circuit_breakers[circuit_breaker.name] = circuit_breaker

    @classmethod
    def all_closed(cls) -> bool:
        return len(list(cls.get_open())) == 0

    @classmethod
    def get_circuits(cls) -> Iterator[CircuitBreaker]:
        return iter(list(cls.circuit_breakers.values()))

    @classmethod
    def get(cls, name: str) -> CircuitBreaker | None:
        return cls.circuit_breakers.get(name)

    @classmethod
    def get_open(cls) -> Iterator[CircuitBreaker]:
        return (c for c in cls.get_circuits() if c.opened)

    @classmethod
    def get_closed(cls) -> Iterator[CircuitBreaker]:
        return (c for c in cls.get_circuits() if c.closed)


def circuit(failure_threshold: int | Callable[..., Any] | None = None, recovery_timeout: float | None = None,
            expected_exception: object = None, name: str | None = None,
            fallback_function: Callable[..., Any] | None = None,
            cls: type[CircuitBreaker] = CircuitBreaker) -> Any:
    """@circuit or @circuit(failure_threshold=5, recovery_timeout=30,
    expected_exception=..., name=..., fallback_function=...)."""
    if callable(failure_threshold):
        return cls().decorate(failure_threshold)
    return cls(failure_threshold=failure_threshold, recovery_timeout=recovery_timeout,
               expected_exception=expected_exception, name=name, fallback_function=fallback_function)
