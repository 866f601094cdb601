"""The forms a breaker is used in: decorator (def and async def), context
manager (with and async with, a permit per entry), call(), the two-step
permit; which exceptions are failures; the manual states; retry_after."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

import lazybreaker as lb


@pytest.fixture
def reg() -> lb.Registry:
    return lb.Registry.manual_clock()


def breaker(reg: lb.Registry, **cfg: object) -> lb.Breaker:
    cfg.setdefault("failure_threshold", 2)
    cfg.setdefault("open_duration", 10)
    return reg.get_or_create("b", lb.Config(**cfg))  # type: ignore[arg-type]


class Boom(Exception):
    pass


def test_a_decorated_function_counts_its_exceptions_and_trips(reg: lb.Registry) -> None:
    b = breaker(reg)

    @b
    def f(fail: bool) -> str:
        if fail:
            raise Boom()
        return "ok"

    assert f(False) == "ok"
    assert f.__name__ == "f"
    for _ in range(2):
        with pytest.raises(Boom):
            f(True)
    assert b.state == "open"
    with pytest.raises(lb.CircuitOpenError) as e:
        f(False)
    assert e.value.retry_after == timedelta(seconds=10)
    assert e.value.breaker == "b"
    assert isinstance(e.value, lb.Error)
    assert b.stats().rejected == 1


def test_a_decorated_coroutine_function_is_awaited_through_the_breaker(reg: lb.Registry) -> None:
    b = breaker(reg)

    @b
    async def f(fail: bool) -> str:
        await asyncio.sleep(0)
        if fail:
            raise Boom()
        return "ok"

    async def main() -> None:
        assert await f(False) == "ok"
        for _ in range(2):
            with pytest.raises(Boom):
                await f(True)
        with pytest.raises(lb.CircuitOpenError):
            await f(False)

    asyncio.run(main())
    assert b.stats().failures == 2 and b.stats().successes == 1


def test_with_reports_a_success_and_an_exception_as_a_failure_that_propagates(reg: lb.Registry) -> None:
    b = breaker(reg)
    with b:
        pass
    with pytest.raises(Boom):
        with b:
            raise Boom()
    s = b.stats()
    assert (s.successes, s.failures) == (1, 1)


def test_nested_entries_take_a_permit_each_and_report_each_once(reg: lb.Registry) -> None:
    b = breaker(reg, failure_threshold=5)
    with pytest.raises(Boom):
        with b:
            with b:
                pass  # the inner entry succeeds
            raise Boom()  # the outer one fails
    s = b.stats()
    assert (s.admitted, s.successes, s.failures) == (2, 1, 1)


def test_async_with_in_many_tasks_reports_each_entry_once(reg: lb.Registry) -> None:
    b = breaker(reg, failure_threshold=1000)

    async def task(i: int) -> None:
        try:
            async with b:
                await asyncio.sleep(0.001 * (i % 3))
                if i % 2:
                    raise Boom()
        except Boom:
            pass

    async def main() -> None:
        await asyncio.gather(*(task(i) for i in range(100)))

    asyncio.run(main())
    s = b.stats()
    assert (s.admitted, s.successes, s.failures) == (100, 50, 50)


def test_cancelled_error_is_not_a_failure(reg: lb.Registry) -> None:
    b = breaker(reg, failure_threshold=1)

    async def slow() -> None:
        async with b:
            await asyncio.sleep(10)

    async def main() -> None:
        t = asyncio.ensure_future(slow())
        await asyncio.sleep(0.01)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t

    asyncio.run(main())
    assert b.state == "closed"
    assert b.stats().ignored == 1


def test_exceptions_listed_as_ignored_are_not_failures(reg: lb.Registry) -> None:
    b = reg.get_or_create("i", lb.Config(failure_threshold=1), ignore=(KeyError, LookupError))
    with pytest.raises(KeyError):
        with b:
            raise KeyError("client error")
    with pytest.raises(IndexError):
        b.call(lambda: [][1])
    assert b.state == "closed"
    assert b.stats().ignored == 2
    with pytest.raises(TypeError, match="ignore"):
        reg.get_or_create("j", None, ignore=42)  # type: ignore[arg-type]


def test_call_passes_arguments_and_returns_the_result(reg: lb.Registry) -> None:
    b = breaker(reg)
    assert b.call(lambda a, k=0: a + k, 1, k=2) == 3


def test_the_two_step_permit_is_none_when_rejected_and_reports_once(reg: lb.Registry) -> None:
    b = breaker(reg, failure_threshold=1)
    p = b.try_acquire()
    assert p is not None
    p.failure()
    with pytest.raises(RuntimeError, match="already reported"):
        p.success()
    assert b.try_acquire() is None
    reg.advance(timedelta(seconds=10))
    probe = b.try_acquire()
    assert probe is not None and b.state == "half_open"
    assert b.try_acquire() is None  # one probe at a time
    probe.success()
    assert b.state == "closed"
    with pytest.raises(ValueError, match="outcome"):
        b.acquire().report("maybe")


def test_retry_after_is_exact_and_none_when_forced_open(reg: lb.Registry) -> None:
    b = breaker(reg)
    assert b.retry_after == timedelta(0)
    b.trip(open_for=timedelta(seconds=3))
    reg.advance(1.5)
    assert b.retry_after == timedelta(seconds=1.5)
    assert b.retry_after_ns == 1_500_000_000
    b.force_open()
    assert b.state == "forced_open" and b.retry_after is None
    with pytest.raises(lb.CircuitOpenError) as e:
        with b:
            pass
    assert e.value.retry_after is None
    b.disable()
    assert b.state == "disabled"
    for _ in range(5):
        with pytest.raises(Boom):
            b.call(lambda: (_ for _ in ()).throw(Boom()))
    assert b.state == "disabled"
    b.reset()
    assert b.state == "closed"
    b.trip()  # the configured open duration
    assert b.retry_after == timedelta(seconds=10)


def test_config_reads_back_and_finds_the_same_breaker(reg: lb.Registry) -> None:
    cfg = lb.Config(failure_rate_threshold=0.25, window_size=20, minimum_calls=10, open_duration=timedelta(seconds=7))
    b = reg.get_or_create("w", cfg)
    back = b.config()
    assert back.policy == "count_window" and back.window_size == 20 and back.open_duration == 7
    assert back.failure_threshold is None  # not read by the count window
    assert reg.get_or_create("w", back) == b


def test_registry_lookup_breakers_and_prometheus(reg: lb.Registry) -> None:
    b = breaker(reg)
    assert reg.lookup("b") == b
    assert reg.lookup("nope") is None
    anon = reg.create()
    assert {x.name for x in reg.breakers()} == {"b", ""}
    assert anon in reg.breakers()
    assert 'breaker="b"' in reg.prometheus()
    b.destroy()
    assert reg.lookup("b") is None
    with pytest.raises(lb.ClosedError, match="destroyed"):
        b.state


def test_the_default_registry_is_shared_and_never_closed() -> None:
    assert lb.Registry.default() is lb.Registry.default()
    with pytest.raises(ValueError, match="never closed"):
        lb.Registry.default().close()
    b = lb.Registry.default().get_or_create("tests.default", lb.Config(failure_threshold=3))
    assert b.state == "closed"


def test_events_come_in_order_and_only_when_polled(reg: lb.Registry) -> None:
    b = breaker(reg, failure_threshold=1)
    reg.select_events(transitions=True, rejections=True)
    with pytest.raises(Boom):
        b.call(lambda: (_ for _ in ()).throw(Boom()))
    assert b.try_acquire() is None
    reg.advance(10)
    with b:
        pass
    got = [(e.breaker, e.from_state, e.to_state, e.reason) for e in reg.poll_events()]
    assert got == [("b", "closed", "open", "consecutive_failures"), ("b", "open", "open", "rejected"),
                   ("b", "open", "half_open", "open_elapsed"), ("b", "half_open", "closed", "probes_succeeded")]
    assert reg.poll_events() == [] and reg.events_dropped() == 0
    with pytest.raises(ValueError, match="max"):
        reg.poll_events(0)


def test_a_decorated_method_binds_self_and_keeps_the_functions_identity(reg: lb.Registry) -> None:
    b = breaker(reg)

    class Client:
        def __init__(self) -> None:
            self.base = 10

        @b
        def get(self, x: int, *, plus: int = 0) -> int:
            """Gets."""
            return self.base + x + plus

    c = Client()
    assert c.get(1, plus=2) == 13
    assert Client.get(c, 1) == 11
    assert Client.get.__name__ == "get" and Client.get.__doc__ == "Gets."
    assert Client.get.__wrapped__ is not None  # type: ignore[attr-defined]
    import inspect
    assert list(inspect.signature(Client.get).parameters) == ["self", "x", "plus"]
    assert b.stats().successes == 2


def test_a_classify_callable_that_raises_replaces_the_error_and_counts_a_failure(reg: lb.Registry) -> None:
    from lazybreaker import _core

    b = breaker(reg, failure_threshold=5)

    def classify(e: BaseException) -> int:
        raise LookupError("classify broke")

    g = _core.guard(b.handle, lambda: 1 / 0, classify, (lb.CircuitOpenError, "b"), lambda e: e)
    with pytest.raises(LookupError, match="classify broke"):
        g()
    assert b.stats().failures == 1


def test_a_permit_from_try_acquire_names_its_state(reg: lb.Registry) -> None:
    b = breaker(reg)
    p = b.try_acquire()
    assert p is not None and not p.reported and p.ticket > 0
    p.ignore()
    assert p.reported and b.stats().ignored == 1


registry_for_pickle = lb.Registry.manual_clock()


@registry_for_pickle.get_or_create("pickled")
def module_level(x: int) -> int:
    return x * 2


def test_a_decorated_function_pickles_by_reference_as_a_function_does() -> None:
    import pickle

    again = pickle.loads(pickle.dumps(module_level))
    assert again is module_level and again(2) == 4
    assert "guard of <function module_level" in repr(module_level)
