"""Event listeners: a registry's event queue drained every so often by a
thread or an asyncio task that the application starts (the library runs
nothing on an event). Registry.watch_events and Registry.watch_events_async
are the entry points; EventLog turns events into `logging` records."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING, Callable

from ._config import Duration, duration_ns
from ._errors import ClosedError

if TYPE_CHECKING:
    from ._registry import Event, Registry

Listener = Callable[["Event"], object]
_log = logging.getLogger("lazybreaker")
_BATCH = 256  # events per poll: a full batch means more may be queued


def every_seconds(every: Duration) -> float:
    ns = duration_ns("every", every)
    if ns == 0:
        raise ValueError(f"lazybreaker: every: expected a duration above 0, got {every!r}")
    return ns / 1e9


def check_listener(listener: object) -> None:
    if not callable(listener):
        raise TypeError(f"lazybreaker: listener: expected a function of an Event, got {type(listener).__name__}")


def drain(registry: Registry, listener: Listener) -> None:
    """Hands every queued event to the listener, oldest first; a listener
    that raises is logged and the next event still delivered."""
    while True:
        events = registry.poll_events(_BATCH)
        for event in events:
            try:
                listener(event)
            except Exception:
                _log.exception("lazybreaker: event listener %r raised on %r", listener, event)
        if len(events) < _BATCH:
            return


class EventWatcher(threading.Thread):
    """A daemon thread draining a registry's events every `every` seconds
    until stop(), which drains once more: every event recorded before
    stop() reaches the listener. It ends by itself when the registry is
    closed."""

    def __init__(self, registry: Registry, listener: Listener, every: float) -> None:
        super().__init__(name="lazybreaker-events", daemon=True)
        self._registry = registry
        self._listener = listener
        self._every = every
        self._stopping = threading.Event()

    def run(self) -> None:
        try:
            while not self._stopping.wait(self._every):
                drain(self._registry, self._listener)
            drain(self._registry, self._listener)
        except ClosedError:
            return  # the registry was closed: nothing more will come

    def stop(self) -> None:
        """Stops the thread after a last drain, and waits for it."""
        self._stopping.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join()


async def watch_async(registry: Registry, listener: Listener, every: float) -> None:
    """Drains every `every` seconds until cancelled; a cancelled watch
    drains once more before it ends; a closed registry ends it."""
    try:
        while True:
            drain(registry, listener)
            await asyncio.sleep(every)
    except ClosedError:
        return  # the registry was closed: nothing more will come
    finally:
        if not registry.closed:
            drain(registry, listener)


class EventLog:
    """A listener logging each event to `logger` (default "lazybreaker") at
    `level` (WARNING for a trip to open, INFO otherwise unless given), with
    the event's fields in the record's `extra` (breaker, from_state,
    to_state, reason, sequence, at_ns) for structured handlers."""

    def __init__(self, logger: logging.Logger | None = None, level: int | None = None) -> None:
        if logger is not None and not isinstance(logger, logging.Logger):
            raise TypeError(f"lazybreaker: logger: expected a logging.Logger, got {type(logger).__name__}")
        if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
            raise TypeError(f"lazybreaker: level: expected a logging level (int), got {type(level).__name__}")
        self._logger = logger or _log
        self._level = level

    def __call__(self, event: Event) -> None:
        level = self._level
        if level is None:
            level = logging.WARNING if event.to_state in ("open", "forced_open") else logging.INFO
        self._logger.log(level, "breaker %s: %s -> %s (%s)", event.breaker, event.from_state, event.to_state,
                         event.reason, extra={"breaker": event.breaker, "from_state": event.from_state,
                                              "to_state": event.to_state, "reason": event.reason,
                                              "sequence": event.sequence, "at_ns": event.at_ns})
