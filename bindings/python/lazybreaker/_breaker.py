"""Breaker: one breaker of a registry; Permit: one admitted call.

Every transition is the library's: a Breaker holds a handle and asks the
C ABI (cb_allow, cb_done, cb_state, ...), with the GIL held (each is a few
atomic operations). The request path (the decorator, call(), the permits)
is C, in the extension (bindings/python/fastpath.c): one crossing per
protected call. What is Python's alone: the forms, the context managers'
per-entry permits, which exceptions are failures, and the errors.
"""

from __future__ import annotations

import functools
import inspect
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ParamSpec, TypeVar, Union, cast

from . import _core
from ._config import FIELDS, Config, Duration, duration_ns, range_text
from ._errors import CircuitOpenError, ClosedError, Error

if TYPE_CHECKING:
    from ._registry import Registry

P = ParamSpec("P")
R = TypeVar("R")

_UINT64_MAX = (1 << 64) - 1
_SUCCESS = _core.CB_SUCCESS
_FAILURE = _core.CB_FAILURE
_IGNORED = _core.CB_IGNORED
_allow = _core.cb_allow
_done = _core.cb_done
_STATE_NAMES: dict[int, str] = {}
for _v in range(64):
    _n = _core.cb_state_name(_v)
    if _n is not None:
        _STATE_NAMES[_v] = _n

Classifier = Union[tuple[type[BaseException], ...], Callable[[BaseException], int]]
"""Which outcome an exception is: a tuple of ignored types (any other
Exception is a failure; a BaseException that is no Exception, such as
asyncio.CancelledError, is ignored), or a callable returning the outcome."""


@dataclass(frozen=True)
class Stats:
    """A breaker's counters (cb_stats), counted in every state."""

    admitted: int
    rejected: int
    successes: int
    failures: int
    ignored: int
    trips: int
    consecutive_failures: int
    slow: int
    failure_rate: float
    slow_rate: float
    state_ns: int

    @property
    def state_duration(self) -> timedelta:
        """Time since the last transition (to the microsecond)."""
        return timedelta(microseconds=self.state_ns // 1000)


def _retry_after(ns: int) -> timedelta | None:
    return None if ns == _UINT64_MAX else timedelta(microseconds=-(-ns // 1000))


Permit = _core.Permit
"""One admitted call (lazybreaker._core, bindings/python/fastpath.c): report
it once, with success(), failure(), ignore() or report(outcome); a second
report raises RuntimeError. A permit never reported is a call the library
times out (a probe's lease, half_open_timeout)."""


def exception_types(name: str, value: object) -> tuple[type[BaseException], ...]:
    """An exception class or a tuple of them; TypeError naming `name`."""
    items = value if isinstance(value, tuple) else (value,)
    for item in items:
        if not (isinstance(item, type) and issubclass(item, BaseException)):
            raise TypeError(f"lazybreaker: {name}: expected an exception class or a tuple of them, got {item!r}")
    return cast("tuple[type[BaseException], ...]", items)


def default_classifier(ignore: tuple[type[BaseException], ...]) -> Classifier:
    """An Exception is a failure unless it is one of `ignore`; any other
    BaseException (asyncio.CancelledError, KeyboardInterrupt, SystemExit,
    GeneratorExit) is ignored: it says nothing about the dependency. (The
    tuple itself: the C request path applies that rule.)"""
    return ignore


def outcome_of(classify: Classifier, e: BaseException) -> int:
    if isinstance(classify, tuple):
        if isinstance(e, Exception) and not isinstance(e, classify):
            return _FAILURE
        return _IGNORED
    return classify(e)


class Breaker:
    """A circuit breaker of a registry (Registry.get_or_create).

    Use it as a decorator (`@breaker` on def or async def), a context manager
    (`with breaker:` / `async with breaker:`), with `call(fn, *args)`, or in
    two steps (`permit = breaker.try_acquire()`). An exception is a failure
    and propagates; asyncio.CancelledError and the exceptions in `ignore`
    are not. A rejected call raises CircuitOpenError.
    """

    __slots__ = ("_h", "_registry", "_name", "_classify", "_stack", "_reject", "__weakref__")

    def __init__(self, registry: Registry, handle: int, name: str, classify: Classifier) -> None:
        self._h = handle
        self._registry = registry
        self._name = name
        self._classify = classify
        self._stack: ContextVar[tuple[Permit, ...]] | None = None
        self._reject = (CircuitOpenError, name)

    # ---- identity ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def handle(self) -> int:
        return self._h

    @property
    def registry(self) -> Registry:
        return self._registry

    def __repr__(self) -> str:
        try:
            state = self.state
        except Error:
            state = "closed registry" if self._registry.closed else "destroyed"
        return f"<lazybreaker.Breaker {self._name!r} state={state}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Breaker) and other._h == self._h

    def __hash__(self) -> int:
        return hash(self._h)

    # ---- errors ------------------------------------------------------------------
    def _failed(self, e: Error) -> BaseException:
        if e.status == _core.CB_EHANDLE:
            why = "its registry is closed" if self._registry.closed else "it was destroyed"
            err = ClosedError(f"lazybreaker: breaker {self._name!r}: {why}")
            err.status, err.status_name, err.field = e.status, e.status_name, e.field
            return err
        return e

    def _open_error(self) -> CircuitOpenError:
        try:
            ra = _retry_after(_core.cb_retry_after(self._h))
        except Error as e:
            raise self._failed(e) from None
        return CircuitOpenError(retry_after=ra, breaker=self._name)

    # ---- two steps ---------------------------------------------------------------
    def try_acquire(self) -> Permit | None:
        """A permit for one call, or None when the breaker rejects it."""
        return _core.try_acquire(self._h, self._failed)

    def acquire(self) -> Permit:
        """A permit for one call; CircuitOpenError when rejected."""
        return _core.acquire(self._h, self._failed, self._reject)

    # ---- one step ----------------------------------------------------------------
    def call(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """fn(*args, **kwargs) through the breaker."""
        result: R = _core.guarded_call(self._h, self._classify, self._reject, self._failed, fn, *args, **kwargs)
        return result

    async def call_async(self, fn: Callable[..., Awaitable[R]], /, *args: Any, **kwargs: Any) -> R:
        """await fn(*args, **kwargs) through the breaker."""
        h = self._h
        try:
            ticket = _allow(h)
        except Error as e:
            raise self._failed(e) from None
        if not ticket:
            raise self._open_error()
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            _done(h, ticket, outcome_of(self._classify, exc))
            raise
        _done(h, ticket, _SUCCESS)
        return result

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        """The decorator: every call of fn (a def or an async def) goes
        through the breaker."""
        if inspect.iscoroutinefunction(fn):
            afn = cast("Callable[P, Awaitable[Any]]", fn)

            @functools.wraps(fn)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                return await self.call_async(afn, *args, **kwargs)

            return cast("Callable[P, R]", async_wrapper)
        guard = _core.guard(self._h, fn, self._classify, self._reject, self._failed)
        functools.update_wrapper(guard, fn)
        return cast("Callable[P, R]", guard)

    # ---- context managers: a permit per entry, on a contextvars stack -------------
    def _var(self) -> ContextVar[tuple[Permit, ...]]:
        var = self._stack
        if var is None:
            var = self._stack = ContextVar(f"lazybreaker.permits.{self._h}", default=())
        return var

    def __enter__(self) -> Breaker:
        permit = self.acquire()
        var = self._var()
        var.set(var.get() + (permit,))
        return self

    def __exit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        var = self._var()
        stack = var.get()
        if not stack:
            raise RuntimeError(f"lazybreaker: breaker {self._name!r}: exit without an entry in this context")
        permit = stack[-1]
        var.set(stack[:-1])
        if exc is None:
            permit.success()
        else:
            (permit.success, permit.failure, permit.ignore)[outcome_of(self._classify, exc)]()

    async def __aenter__(self) -> Breaker:
        return self.__enter__()

    async def __aexit__(self, et: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.__exit__(et, exc, tb)

    # ---- reading -----------------------------------------------------------------
    @property
    def state(self) -> str:
        """"closed", "open", "half_open", "forced_open" or "disabled"
        (cb_state_name); reading never moves the breaker."""
        try:
            return _STATE_NAMES[_core.cb_state(self._h)]
        except Error as e:
            raise self._failed(e) from None

    @property
    def retry_after(self) -> timedelta | None:
        """How long until a call could be admitted (0 when one would be now),
        rounded up to the microsecond; None when forced open."""
        return _retry_after(self.retry_after_ns)

    @property
    def retry_after_ns(self) -> int:
        """retry_after in nanoseconds, exact; 2**64 - 1 when forced open."""
        try:
            return _core.cb_retry_after(self._h)
        except Error as e:
            raise self._failed(e) from None

    def stats(self) -> Stats:
        s = _core.cb_stats()
        try:
            _core.cb_stats_get(self._h, s)
        except Error as e:
            raise self._failed(e) from None
        return Stats(s.admitted, s.rejected, s.successes, s.failures, s.ignored, s.trips, s.consecutive_failures,
                     s.slow, s.failure_rate, s.slow_rate, s.state_ns)

    def config(self) -> Config:
        """The configuration the breaker uses (cb_config_get)."""
        cfg = _core.cb_config()
        try:
            _core.cb_config_get(self._h, cfg)
        except Error as e:
            raise self._failed(e) from None
        return Config._from_c(cfg)

    # ---- manual states -------------------------------------------------------------
    def trip(self, open_for: Duration | None = None) -> None:
        """OPEN now for `open_for` (a timedelta or seconds; default: the
        configured open duration), then probing as usual."""
        if open_for is None:
            cfg = _core.cb_config()
            try:
                _core.cb_config_get(self._h, cfg)
            except Error as e:
                raise self._failed(e) from None
            ns = int(cfg.open_duration_ns)
        else:
            ns = duration_ns("open_for", open_for)
        self.trip_ns(ns, open_for)

    def trip_ns(self, open_for_ns: int, _given: object = None) -> None:
        try:
            _core.cb_trip(self._h, open_for_ns)
        except (OverflowError, Error) as e:
            if isinstance(e, Error) and e.status != _core.CB_EINVAL:
                raise self._failed(e) from None
            # cb_trip takes an open duration's bounds (lazybreaker.h)
            given = open_for_ns if _given is None else _given
            raise ValueError(f"lazybreaker: trip: open_for must be {range_text(FIELDS['open_duration'])}, "
                             f"got {given!r}") from None

    def _manual(self, fn: Callable[[int], int]) -> None:
        try:
            fn(self._h)
        except Error as e:
            raise self._failed(e) from None

    def force_open(self) -> None:
        """FORCED_OPEN: rejects everything until reset()."""
        self._manual(_core.cb_force_open)

    def disable(self) -> None:
        """DISABLED: admits everything, trips never, until reset()."""
        self._manual(_core.cb_disable)

    def reset(self) -> None:
        """CLOSED with a fresh failure run, from any state."""
        self._manual(_core.cb_reset)

    def destroy(self) -> None:
        """Destroys the breaker in its registry (every process sharing the
        file loses it); its name becomes free."""
        self._manual(_core.cb_destroy)


def report_raised(permit: Permit, error: BaseException) -> None:
    """Reports a call that raised, by the default rule: an Exception is a
    failure; a BaseException that is no Exception (asyncio.CancelledError,
    KeyboardInterrupt) is the caller giving up, ignored."""
    if isinstance(error, Exception):
        permit.failure()
    else:
        permit.ignore()
