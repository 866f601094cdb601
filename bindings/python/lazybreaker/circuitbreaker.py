"""A drop-in for the `circuitbreaker` package, over lazybreaker.

    from lazybreaker.circuitbreaker import circuit, CircuitBreakerError

    @circuit(failure_threshold=5, recovery_timeout=30, expected_exception=IOError)
    def fetch(url): ...

Migrating is the import: the decorator (on def, async def, generator and
async generator functions), its arguments (failure_threshold,
recovery_timeout, expected_exception as a class, classes or a predicate,
name, fallback_function, cls), CircuitBreaker with its forms (with, call,
call_generator, call_async, call_async_generator) and properties,
CircuitBreakerError and CircuitBreakerMonitor keep their names and
meaning. What is lazybreaker's: the state machine is the library's, in a
registry (the process's default, or a shared file: use_registry(), and
then every worker of a pool sees one circuit per name); half-open admits
one probe at a time (half_open_max_calls lets more through); a call the
circuit rejects is refused by `with` and call() as by the decorator; an
asyncio.CancelledError or KeyboardInterrupt counts as nothing.
docs/python.md has the table.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
import weakref
from datetime import datetime, timedelta
from typing import Any, AsyncIterator, Callable, Iterator, TypeVar, cast

from . import _core
from ._breaker import Breaker, Permit
from ._config import Config, duration_ns
from ._errors import CircuitOpenError
from ._registry import Registry

STATE_CLOSED = "closed"
STATE_OPEN = "open"
STATE_HALF_OPEN = "half_open"

F = TypeVar("F", bound=Callable[..., Any])
FailurePredicate = Callable[[type, BaseException], bool]

_UINT64_MAX = (1 << 64) - 1
_NAME_BYTES = 240  # below the library's CB_MAX_NAME_BYTES, with room for "#n"
_FORCED_OPEN_REMAINING = 2**31 - 1  # forced open: no end `circuitbreaker` could name

_registry: Registry | None = None
# Registry names taken by this process's circuits, per registry: a second
# circuit of one name (a `fetch` in two modules, two instances given one
# name) gets a breaker of its own, as in `circuitbreaker`.
_taken: weakref.WeakKeyDictionary[Registry, dict[str, int]] = weakref.WeakKeyDictionary()


def use_registry(registry: Registry | None) -> None:
    """The registry that circuits made from now on live in (None: the
    process's default). A pre-fork pool opens a shared file here in each
    worker, before its circuits are made."""
    global _registry
    if registry is not None and not isinstance(registry, Registry):
        raise TypeError(f"lazybreaker: registry: expected a lazybreaker.Registry or None, "
                        f"got {type(registry).__name__}")
    _registry = registry


def _build_failure_predicate(expected: object) -> FailurePredicate:
    if inspect.isclass(expected) and issubclass(expected, Exception):
        exc_types: tuple[type, ...] = (expected,)
    elif isinstance(expected, (str, bytes)):
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


def _registry_name(registry: Registry, wanted: str) -> str:
    """`wanted`, or `wanted#2`, `#3`... for this process's next circuits of
    that name: in the order a program makes them, so every worker of a
    pool running the same code names its circuits alike."""
    if len(wanted.encode()) > _NAME_BYTES:
        digest = hashlib.sha1(wanted.encode()).hexdigest()[:16]
        wanted = wanted.encode()[: _NAME_BYTES - 17].decode(errors="ignore") + "~" + digest
    taken = _taken.setdefault(registry, {})
    n = taken.get(wanted, 0) + 1
    taken[wanted] = n
    return wanted if n == 1 else f"{wanted}#{n}"


def _function_name(function: Callable[..., Any]) -> str:
    return getattr(function, "__qualname__", None) or function.__name__


class CircuitBreaker:
    """circuitbreaker.CircuitBreaker's interface over one lazybreaker breaker."""

    FAILURE_THRESHOLD = 5
    RECOVERY_TIMEOUT = 30
    EXPECTED_EXCEPTION: object = Exception
    FALLBACK_FUNCTION: Callable[..., Any] | None = None
    HALF_OPEN_MAX_CALLS = 1

    def __init__(self, failure_threshold: int | None = None, recovery_timeout: float | None = None,
                 expected_exception: object = None, name: str | None = None,
                 fallback_function: Callable[..., Any] | None = None,
                 half_open_max_calls: int | None = None) -> None:
        self._failure_threshold = failure_threshold or self.FAILURE_THRESHOLD
        self._recovery_timeout = recovery_timeout or self.RECOVERY_TIMEOUT
        if not expected_exception:
            expected_exception = type(self).__dict__.get("EXPECTED_EXCEPTION", CircuitBreaker.EXPECTED_EXCEPTION)
        self.is_failure = _build_failure_predicate(expected_exception)
        self._fallback_function = fallback_function or self.FALLBACK_FUNCTION
        self._name = name
        self._last_failure: BaseException | None = None
        # Checked now, so that a bad argument fails where it is written.
        self._config = Config(failure_threshold=self._failure_threshold, open_duration=self._recovery_timeout,
                              half_open_max_calls=half_open_max_calls or self.HALF_OPEN_MAX_CALLS)
        self._recovery_ns = duration_ns("recovery_timeout", self._recovery_timeout)
        self._breaker: Breaker | None = None
        self._opened_ns = 0
        if name is not None:
            self._bind(name)

    # ---- the lazybreaker breaker under it -------------------------------------------
    def _bind(self, wanted: str | None) -> Breaker:
        registry = _registry or Registry.default()
        if wanted is None:
            b = registry.create(None, self._config)  # anonymous, as an unnamed `with` circuit
        else:
            b = registry.get_or_create(_registry_name(registry, wanted), self._config)
        self._breaker = Breaker(registry, b.handle, b.name, self._classify)
        self._opened_ns = registry.now_ns()  # `circuitbreaker` counts its first timeout from here
        return self._breaker

    def _classify(self, e: BaseException) -> int:
        if not isinstance(e, Exception):
            return _core.CB_IGNORED
        if self.is_failure(type(e), e):
            self._last_failure = e
            return _core.CB_FAILURE
        self._last_failure = None
        return _core.CB_SUCCESS

    @property
    def breaker(self) -> Breaker:
        """The lazybreaker Breaker (an anonymous one when the circuit is used
        before it has a name)."""
        return self._breaker or self._bind(None)

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
        if exc is not None and exc is self._last_failure:
            self._note_opening()

    def decorate(self, function: F) -> F:
        if self._name is None:
            self._name = _function_name(function)
        if self._breaker is None:
            module = getattr(function, "__module__", None)
            self._bind(f"{module}.{self._name}" if module else self._name)
        CircuitBreakerMonitor.register(self)
        if inspect.isasyncgenfunction(function):
            return cast(F, self._decorate_async_generator(function))
        if inspect.iscoroutinefunction(function):
            return cast(F, self._decorate_async(function))
        if inspect.isgeneratorfunction(function):
            return cast(F, self._decorate_generator(function))
        return cast(F, self._decorate_sync(function))

    def _admit(self) -> Permit:
        try:
            return self.breaker.acquire()
        except CircuitOpenError:
            raise CircuitBreakerError(self) from None

    def _decorate_sync(self, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                permit = self._admit()
            except CircuitBreakerError:
                if self.fallback_function is None:
                    raise
                return self.fallback_function(*args, **kwargs)
            with _Settling(self, permit):
                return function(*args, **kwargs)

        return wrapper

    def _decorate_generator(self, function: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        @functools.wraps(function)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                permit = self._admit()
            except CircuitBreakerError:
                if self.fallback_function is None:
                    raise
                yield from self.fallback_function(*args, **kwargs)
                return
            with _Settling(self, permit):
                yield from function(*args, **kwargs)

        return gen_wrapper

    def _decorate_async(self, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                permit = self._admit()
            except CircuitBreakerError:
                if self.fallback_function is None:
                    raise
                result = self.fallback_function(*args, **kwargs)
                return await result if inspect.isawaitable(result) else result
            with _Settling(self, permit):
                return await function(*args, **kwargs)

        return awrapper

    def _decorate_async_generator(self, function: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
        @functools.wraps(function)
        async def gen_awrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            try:
                permit = self._admit()
            except CircuitBreakerError:
                if self.fallback_function is None:
                    raise
                async for el in self.fallback_function(*args, **kwargs):
                    yield el
                return
            with _Settling(self, permit):
                async for el in function(*args, **kwargs):
                    yield el

        return gen_awrapper

    def call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with _Settling(self, self._admit()):
            return func(*args, **kwargs)

    def call_generator(self, func: Callable[..., Iterator[Any]], *args: Any, **kwargs: Any) -> Iterator[Any]:
        with _Settling(self, self._admit()):
            yield from func(*args, **kwargs)

    async def call_async(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with _Settling(self, self._admit()):
            return await func(*args, **kwargs)

    async def call_async_generator(self, func: Callable[..., AsyncIterator[Any]], *args: Any,
                                   **kwargs: Any) -> AsyncIterator[Any]:
        with _Settling(self, self._admit()):
            async for el in func(*args, **kwargs):
                yield el

    def _settle(self, permit: Permit, exc: BaseException | None) -> None:
        if exc is None:
            self._last_failure = None
            permit.success()
        else:
            outcome = self._classify(exc)
            (permit.success, permit.failure, permit.ignore)[outcome]()
            if outcome == _core.CB_FAILURE:
                self._note_opening()

    def _note_opening(self) -> None:
        """After a failure: when it tripped the breaker, the moment it opened
        (open_remaining counts from it, after the circuit closes too)."""
        b = self.breaker
        if b.state == "open":
            self._opened_ns = b.registry.now_ns() - b.stats().state_ns

    # ---- circuitbreaker's properties -----------------------------------------------
    def _remaining_ns(self) -> int | None:
        """`circuitbreaker`'s open_remaining in ns: from the last opening seen
        (or the circuit's making) plus the recovery timeout, minus now;
        exact from the library while open; None when forced open."""
        b = self.breaker
        state = b.state
        now = b.registry.now_ns()
        if state in ("open", "forced_open"):
            wait = b.retry_after_ns
            if wait == _UINT64_MAX:
                return None
            self._opened_ns = now - b.stats().state_ns
            if wait > 0:
                return wait
        remaining = self._opened_ns + self._recovery_ns - now
        return min(remaining, 0) if state == "half_open" else remaining

    @property
    def state(self) -> str:
        """closed, open or half_open: half_open once the recovery timeout has
        passed (the next call is the probe)."""
        s = self.breaker.state
        if s == "forced_open":
            return STATE_OPEN
        if s == "open":
            return STATE_OPEN if self.breaker.retry_after_ns > 0 else STATE_HALF_OPEN
        return STATE_HALF_OPEN if s == "half_open" else STATE_CLOSED

    @property
    def open_remaining(self) -> int:
        """Seconds until the circuit tries to recover: rounded up while
        ahead, down (negative) once the recovery timeout has passed."""
        ns = self._remaining_ns()
        if ns is None:
            return _FORCED_OPEN_REMAINING
        return math.ceil(ns / 1e9) if ns > 0 else math.floor(ns / 1e9)

    @property
    def open_until(self) -> datetime:
        """The approximate datetime when the circuit will try to recover."""
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
        # As `circuitbreaker`: the name; an unnamed circuit's str() raises
        # TypeError there too (__str__ returned non-string).
        return cast(str, self._name)


class _Settling:
    """Reports one admitted call of a circuit when its block ends (the
    decorator's and call()'s forms hold their permit, so a generator
    resumed in another thread or task reports it all the same)."""

    __slots__ = ("_circuit", "_permit")

    def __init__(self, circuit: CircuitBreaker, permit: Permit) -> None:
        self._circuit = circuit
        self._permit = permit

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self._circuit._settle(self._permit, exc)


class CircuitBreakerError(CircuitOpenError):
    """Raised by an open circuit (a lazybreaker.CircuitOpenError too)."""

    def __init__(self, circuit_breaker: CircuitBreaker, *args: object) -> None:
        ns = circuit_breaker.breaker.retry_after_ns
        super().__init__(None, retry_after=None if ns == _UINT64_MAX else timedelta(microseconds=-(-ns // 1000)),
                         breaker=circuit_breaker.name)
        self.args = args
        self._circuit_breaker = circuit_breaker

    def __str__(self) -> str:
        cb = self._circuit_breaker
        return 'Circuit "%s" OPEN until %s (%d failures, %d sec remaining) (last_failure: %r)' % (
            cb.name, cb.open_until, cb.failure_count, round(cb.open_remaining), cb.last_failure)


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
            cls: type[CircuitBreaker] = CircuitBreaker, half_open_max_calls: int | None = None) -> Any:
    """@circuit or @circuit(failure_threshold=5, recovery_timeout=30,
    expected_exception=..., name=..., fallback_function=...)."""
    if callable(failure_threshold):
        return cls().decorate(failure_threshold)
    extra = {} if half_open_max_calls is None else {"half_open_max_calls": half_open_max_calls}
    return cls(failure_threshold=failure_threshold, recovery_timeout=recovery_timeout,
               expected_exception=expected_exception, name=name, fallback_function=fallback_function, **extra)
