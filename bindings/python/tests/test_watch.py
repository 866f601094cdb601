"""Event listeners: Registry.watch_events (a thread the application starts)
and watch_events_async (a task), draining the registry's queue outside any
lock of the library, and EventLog for `logging` with structured extra."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Iterator

import pytest

import lazybreaker as lb


@pytest.fixture
def reg() -> Iterator[lb.Registry]:
    with lb.Registry.manual_clock() as r:
        yield r


def trip_and_recover(reg: lb.Registry) -> lb.Breaker:
    b = reg.get_or_create("db", lb.Config(failure_threshold=1, open_duration=5))
    b.acquire().failure()
    reg.advance(5)
    b.acquire().success()
    return b


def test_the_watcher_thread_hands_each_transition_to_the_listener(reg: lb.Registry) -> None:
    seen: list[lb.Event] = []
    watcher = reg.watch_events(seen.append, every=3600)
    trip_and_recover(reg)
    watcher.stop()  # drains once more: nothing recorded before stop() is lost
    assert [(e.breaker, e.from_state, e.to_state) for e in seen] == [
        ("db", "closed", "open"), ("db", "open", "half_open"), ("db", "half_open", "closed")]
    assert not watcher.is_alive()


def test_the_watcher_thread_drains_every_period(reg: lb.Registry) -> None:
    delivered = threading.Event()
    watcher = reg.watch_events(lambda e: delivered.set(), every=0.01)
    try:
        reg.get_or_create("db").trip()
        assert delivered.wait(60)  # a bound, not a timing: a period is 10 ms
    finally:
        watcher.stop()


def test_a_listener_that_raises_is_logged_and_the_next_event_still_delivered(
        reg: lb.Registry, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    def listener(event: lb.Event) -> None:
        seen.append(event.to_state)
        if event.to_state == "open":
            raise RuntimeError("listener bug")

    watcher = reg.watch_events(listener, every=3600)
    trip_and_recover(reg)
    watcher.stop()
    assert seen == ["open", "half_open", "closed"]
    assert "listener bug" in caplog.text


def test_the_watch_task_drains_when_cancelled(reg: lb.Registry) -> None:
    seen: list[lb.Event] = []

    async def run() -> None:
        task = asyncio.create_task(reg.watch_events_async(seen.append, every=3600))
        await asyncio.sleep(0)
        trip_and_recover(reg)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert [e.to_state for e in seen] == ["open", "half_open", "closed"]


def test_event_log_logs_with_the_events_fields_as_extra(reg: lb.Registry,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lazybreaker")
    watcher = reg.watch_events(lb.EventLog(), every=3600)
    trip_and_recover(reg)
    watcher.stop()
    records = [r for r in caplog.records if r.name == "lazybreaker"]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.WARNING, "breaker db: closed -> open (consecutive_failures)"),
        (logging.INFO, "breaker db: open -> half_open (open_elapsed)"),
        (logging.INFO, "breaker db: half_open -> closed (probes_succeeded)")]
    first: Any = records[0]
    assert (first.breaker, first.from_state, first.to_state) == ("db", "closed", "open")
    assert isinstance(first.sequence, int) and isinstance(first.at_ns, int)


def test_event_log_takes_a_logger_and_a_level(reg: lb.Registry, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="app.breakers")
    watcher = reg.watch_events(lb.EventLog(logging.getLogger("app.breakers"), logging.DEBUG), every=3600)
    reg.get_or_create("db").trip()
    watcher.stop()
    assert [(r.name, r.levelno) for r in caplog.records] == [("app.breakers", logging.DEBUG)]


def test_closing_the_registry_ends_the_watchers(monkeypatch: pytest.MonkeyPatch) -> None:
    died: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    reg = lb.Registry.manual_clock()
    watcher = reg.watch_events(print, every=0.01)

    async def run() -> None:
        task = asyncio.create_task(reg.watch_events_async(print, every=0.01))
        await asyncio.sleep(0)
        reg.close()
        await asyncio.wait_for(task, 60)  # ends by itself, without an error

    asyncio.run(run())
    watcher.join(60)
    assert not watcher.is_alive()
    watcher.stop()
    assert died == []  # ended, not killed by an exception


@pytest.mark.parametrize("every", [0, -1, "1s"])
def test_a_bad_period_is_refused_by_name_and_nothing_starts(reg: lb.Registry, every: Any) -> None:
    threads = threading.active_count()
    with pytest.raises((TypeError, ValueError), match="lazybreaker: every: "):
        reg.watch_events(print, every=every)
    assert threading.active_count() == threads


def test_a_listener_that_is_no_function_is_refused_by_name(reg: lb.Registry) -> None:
    with pytest.raises(TypeError, match="lazybreaker: listener: "):
        reg.watch_events("print")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="lazybreaker: listener: "):
        asyncio.run(reg.watch_events_async(None))  # type: ignore[arg-type]


def test_event_log_refuses_what_is_no_logger_or_level() -> None:
    with pytest.raises(TypeError, match="lazybreaker: logger: "):
        lb.EventLog("lazybreaker")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="lazybreaker: level: "):
        lb.EventLog(level="INFO")  # type: ignore[arg-type]
