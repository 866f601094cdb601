"""Registry: the breakers of a process (private), or of every process that
opens the same file (shared: a pre-fork pool's workers, restarts)."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from . import _core
from ._breaker import Breaker, Classifier, default_classifier, exception_types
from ._config import Config, Duration, duration_ns
from ._errors import ClosedError, Error, file_error, invalid
from ._watch import EventWatcher, check_listener, every_seconds, watch_async

if TYPE_CHECKING:
    _Maker = Callable[[_core.cb_registry, str | None, _core.cb_config | None], int]
_default: Registry | None = None
_default_lock = threading.Lock()


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"lazybreaker: name: expected str, got {type(name).__name__}")
    if "\0" in name:
        raise ValueError("lazybreaker: name: a NUL character inside the name")
    return name


@dataclass(frozen=True)
class Event:
    """One event of a registry's queue: a transition (or, when selected, a
    rejected call: reason "rejected", from_state == to_state)."""

    sequence: int
    breaker: str
    from_state: str
    to_state: str
    reason: str
    at_ns: int


_STATES = {v: n for v in range(64) if (n := _core.cb_state_name(v)) is not None}


class Registry:
    """A registry of breakers. Registry.open() (a file every process on the
    host shares, or a private one), Registry.default() (the process's,
    never closed), Registry.manual_clock() (private, with a clock that
    moves only by advance(): for tests)."""

    __slots__ = ("_raw", "_path", "_owned", "_closed", "_manual", "__weakref__")

    def __init__(self, raw: _core.cb_registry, path: str | None, owned: bool, manual: bool) -> None:
        self._raw = raw
        self._path = path
        self._owned = owned
        self._closed = False
        self._manual = manual

    # ---- opening -----------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, create: bool = True, exclusive: bool = False,
             any_owner: bool = False, capacity: int = 0, manual_clock: bool = False, mode: int = 0,
             event_capacity: int = 0) -> Registry:
        """Opens a registry: the file at `path`, shared with every process
        that opens it (created if missing, with `create`), or a private one
        without a path. The GIL is released while the library opens the
        file (it may wait up to 5 s behind another process's lock)."""
        spath = None if path is None else os.fspath(path)
        if spath is not None and not isinstance(spath, str):
            raise TypeError(f"lazybreaker: path: expected str or os.PathLike[str], got {type(spath).__name__}")
        opts = _core.cb_registry_options()
        for arg, value in (("capacity", capacity), ("mode", mode), ("event_capacity", event_capacity)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"lazybreaker: {arg}: expected an int, got {type(value).__name__}")
            if value < 0:
                raise ValueError(f"lazybreaker: {arg}: expected 0 or more, got {value!r}")
        if not 0 <= mode <= 0o777:
            raise ValueError(f"lazybreaker: mode must be 0..0o777, got {oct(mode)}")
        try:
            opts.capacity = capacity
            opts.event_capacity = event_capacity
        except OverflowError:
            raise ValueError(f"lazybreaker: capacity and event_capacity must be below 2**32, "
                             f"got {capacity!r}, {event_capacity!r}") from None
        opts.mode = mode
        opts.clock = _core.CB_CLOCK_MANUAL if manual_clock else _core.CB_CLOCK_MONOTONIC
        flags = 0
        if create:
            flags |= _core.CB_REGISTRY_CREATE
        if exclusive:
            flags |= _core.CB_REGISTRY_EXCLUSIVE
        if any_owner:
            flags |= _core.CB_REGISTRY_ANY_OWNER
        opts.flags = flags if spath is not None else 0
        try:
            raw = _core.lb_registry_open_at(opts, spath)
        except Error as e:
            if spath is None:
                raise invalid(e, "Registry.open") from None
            raise file_error(e, spath) from None
        return cls(raw, spath, True, manual_clock)

    @classmethod
    def default(cls) -> Registry:
        """The process-wide registry (monotonic clock); never closed."""
        global _default
        with _default_lock:
            if _default is None:
                _default = cls(_core.lb_default_registry(), None, False, False)
            return _default

    @classmethod
    def manual_clock(cls, *, capacity: int = 0) -> Registry:
        """A private registry whose clock starts at 0 and moves only by
        advance(): deterministic tests, no sleeps."""
        return cls.open(capacity=capacity, manual_clock=True)

    # ---- life --------------------------------------------------------------------
    @property
    def path(self) -> str | None:
        return self._path

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Closes the registry: its breakers raise ClosedError from then on.
        Closing twice is a no-op; the default registry is never closed."""
        if not self._owned:
            raise ValueError("lazybreaker: the default registry is never closed")
        if self._closed:
            return
        self._closed = True
        _core.cb_registry_close(self._raw)

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_owned", False) and not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:  # interpreter shutdown: the process is going anyway
                pass

    def __repr__(self) -> str:
        where = self._path or ("default" if not self._owned else "private")
        return f"<lazybreaker.Registry {where}{' closed' if self._closed else ''}>"

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("lazybreaker: the registry is closed")

    # ---- the manual clock --------------------------------------------------------
    def advance(self, by: Duration) -> None:
        """Moves a manual clock forward by `by` (a timedelta or seconds)."""
        self.advance_ns(duration_ns("by", by))

    def advance_ns(self, ns: int) -> None:
        self._check_open()
        if not self._manual:
            raise ValueError("lazybreaker: advance: the registry's clock is not manual (Registry.manual_clock())")
        try:
            _core.cb_clock_advance(self._raw, ns)
        except OverflowError:
            raise ValueError(f"lazybreaker: advance: by must be below 2**64 ns, got {ns!r}") from None
        except Error as e:
            raise invalid(e, "advance") from None

    def now_ns(self) -> int:
        """The registry's clock, in nanoseconds."""
        self._check_open()
        return _core.cb_clock_now(self._raw)

    # ---- breakers ------------------------------------------------------------------
    def get_or_create(self, name: str, config: Config | None = None, *,
                      ignore: type[BaseException] | tuple[type[BaseException], ...] = ()) -> Breaker:
        """The breaker `name` if it exists with this configuration, else a new
        one; of concurrent calls with one name, in any process sharing the
        file, one creates and the others get its breaker. Another
        configuration is a ValueError naming the first setting that differs.
        Exceptions of the types in `ignore` are not failures."""
        return self._make(_core.cb_get_or_create, "get_or_create", _check_name(name), config,
                          default_classifier(exception_types("ignore", ignore)))

    def create(self, name: str | None = None, config: Config | None = None, *,
               ignore: type[BaseException] | tuple[type[BaseException], ...] = ()) -> Breaker:
        """A new breaker (anonymous without a name); a taken name is a
        ValueError."""
        return self._make(_core.cb_create, "create", None if name is None else _check_name(name), config,
                          default_classifier(exception_types("ignore", ignore)))

    def _make(self, make: _Maker, what: str, name: str | None, config: Config | None,
              classify: Classifier) -> Breaker:
        self._check_open()
        if config is not None and not isinstance(config, Config):
            raise TypeError(f"lazybreaker: config: expected a lazybreaker.Config, got {type(config).__name__}")
        cfg = config._to_c() if config is not None else None
        try:
            h = make(self._raw, name, cfg)
        except Error as e:
            given = {k: getattr(config, k) for k in config.__dataclass_fields__} if config else None
            if e.status == _core.CB_EEXIST and what == "get_or_create":
                differs = e.field and _py(e.field)
                raise _status(ValueError(f"lazybreaker: get_or_create: {name!r} exists with another configuration"
                                         + (f": its {differs} differs" if differs else "")), e) from None
            if e.status == _core.CB_EEXIST:
                raise _status(ValueError(f"lazybreaker: create: the name {name!r} is taken"), e) from None
            if e.status == _core.CB_EINVAL:
                raise invalid(e, what, given) from None
            raise
        return Breaker(self, h, name or "", classify)

    def lookup(self, name: str) -> Breaker | None:
        """The breaker of that name, or None."""
        self._check_open()
        h = _core.cb_lookup(self._raw, _check_name(name))
        return Breaker(self, h, name, default_classifier(())) if h else None

    def breakers(self) -> list[Breaker]:
        """Every live breaker of the registry (in a shared one, every
        process's)."""
        self._check_open()
        handles = _core.lb_handle_list(self._raw)
        out = []
        for i in range(handles.count):
            h = handles.get(i)
            try:
                name = _core.lb_name(h)
            except Error:
                continue  # destroyed meanwhile
            out.append(Breaker(self, h, name, default_classifier(())))
        return out

    def __iter__(self) -> Iterator[Breaker]:
        return iter(self.breakers())

    # ---- events ------------------------------------------------------------------------
    def select_events(self, *, transitions: bool = True, rejections: bool = False) -> None:
        """What the registry records in its event queue (transitions only, by
        default)."""
        self._check_open()
        kinds = (_core.CB_EVENTS_TRANSITIONS if transitions else 0) | (_core.CB_EVENTS_REJECTIONS if rejections else 0)
        _core.cb_events_select(self._raw, kinds)

    def poll_events(self, max: int = 64) -> list[Event]:
        """Up to `max` events, oldest first; nothing runs inside the library
        on an event: drain the queue when you like."""
        self._check_open()
        if isinstance(max, bool) or not isinstance(max, int):
            raise TypeError(f"lazybreaker: max: expected an int, got {type(max).__name__}")
        if max < 1:
            raise ValueError(f"lazybreaker: max must be 1 or more, got {max!r}")
        batch = _core.lb_event_batch(max)
        out = []
        for i in range(batch.poll(self._raw)):
            e = batch.get(i)
            out.append(Event(e.sequence, e.name, _STATES.get(e._from, str(e._from)), _STATES.get(e.to, str(e.to)),
                             _core.cb_reason_name(e.reason) or str(e.reason), e.at_ns))
        return out

    def watch_events(self, listener: Callable[[Event], object], every: Duration = 1.0) -> EventWatcher:
        """Starts a daemon thread handing each event to `listener` (a
        function of an Event, or lazybreaker.EventLog() for `logging`),
        polled every `every` (a timedelta or seconds), outside any lock of
        the library. Its stop() drains once more and waits for it."""
        check_listener(listener)
        seconds = every_seconds(every)
        self._check_open()
        watcher = EventWatcher(self, listener, seconds)
        watcher.start()
        return watcher

    async def watch_events_async(self, listener: Callable[[Event], object], every: Duration = 1.0) -> None:
        """watch_events as a coroutine, for an asyncio task the application
        starts (asyncio.create_task) and cancels: it drains once more when
        cancelled."""
        check_listener(listener)
        seconds = every_seconds(every)
        self._check_open()
        await watch_async(self, listener, seconds)

    def events_dropped(self) -> int:
        """Events the full queue dropped (it keeps the newest)."""
        self._check_open()
        return _core.cb_events_dropped(self._raw)

    def prometheus(self) -> str:
        """Every breaker in the Prometheus text format (docs/observability.md)."""
        self._check_open()
        return _core.lb_prometheus(self._raw)


def _py(field: str) -> str:
    from ._errors import py_name

    return py_name(field)


def _status(dst: ValueError, e: Error) -> ValueError:
    for attr in ("status", "status_name", "field"):
        setattr(dst, attr, getattr(e, attr, None))
    return dst
