"""Every row of docs/python.md's tables for users of `circuitbreaker` and
pybreaker, one test each (named after the row), and the circuitbreaker shim
beside the real package (Debian's python3-circuitbreaker): the same calls,
the same answers."""

from __future__ import annotations

import asyncio
import inspect
import re
import types
from datetime import timedelta
from typing import Any, AsyncIterator, Callable, Iterator

import circuitbreaker as real
import pytest

import lazybreaker as lb
from lazybreaker import circuitbreaker as shim


@pytest.fixture
def reg() -> Iterator[lb.Registry]:
    r = lb.Registry.manual_clock()
    shim.use_registry(r)
    yield r
    shim.use_registry(None)
    shim.CircuitBreakerMonitor.circuit_breakers.clear()


# ---- circuitbreaker -> lazybreaker.circuitbreaker ---------------------------------

def test_row_circuit_decorator_with_its_arguments(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=2, recovery_timeout=30, expected_exception=IOError)
    def fetch(fail: bool) -> str:
        if fail:
            raise IOError("down")
        return "ok"

    assert fetch(False) == "ok"
    for _ in range(2):
        with pytest.raises(IOError):
            fetch(True)
    with pytest.raises(shim.CircuitBreakerError) as e:
        fetch(False)
    assert isinstance(e.value, lb.CircuitOpenError)  # row: CircuitBreakerError
    assert e.value.retry_after == timedelta(seconds=30)
    assert "OPEN" in str(e.value) and "2 failures" in str(e.value)


def test_row_bare_circuit_decorator_uses_the_defaults(reg: lb.Registry) -> None:
    @shim.circuit
    def f() -> int:
        return 1

    assert f() == 1
    c = shim.CircuitBreakerMonitor.get(f.__qualname__)
    assert c is not None
    assert c.breaker.config().failure_threshold == 5 and c.breaker.config().open_duration == 30


def test_row_unexpected_exceptions_count_as_successes(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=2, expected_exception=(IOError, TimeoutError))
    def f(exc: type[Exception]) -> None:
        raise exc()

    with pytest.raises(IOError):
        f(IOError)
    with pytest.raises(KeyError):
        f(KeyError)  # not expected: a success, the run starts over
    with pytest.raises(IOError):
        f(IOError)
    circuit = shim.CircuitBreakerMonitor.get(f.__qualname__)
    assert circuit is not None and circuit.closed and circuit.failure_count == 1


def test_row_expected_exception_as_a_predicate(reg: lb.Registry) -> None:
    def is_5xx(thrown: type, exc: BaseException) -> bool:
        return "5" in str(exc)

    @shim.circuit(failure_threshold=1, expected_exception=is_5xx, name="http")
    def f(code: str) -> None:
        raise RuntimeError(code)

    with pytest.raises(RuntimeError):
        f("404")
    assert shim.CircuitBreakerMonitor.get("http").closed  # type: ignore[union-attr]
    with pytest.raises(RuntimeError):
        f("503")
    assert shim.CircuitBreakerMonitor.get("http").opened  # type: ignore[union-attr]


def test_row_fallback_function(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=1, fallback_function=lambda x: f"cached {x}", name="fb")
    def f(x: int) -> str:
        raise IOError()

    with pytest.raises(IOError):
        f(1)
    assert f(2) == "cached 2"


def test_row_state_open_remaining_and_recovery(reg: lb.Registry) -> None:
    c = shim.CircuitBreaker(failure_threshold=1, recovery_timeout=10, name="s")
    with pytest.raises(IOError):
        with c:
            raise IOError()
    assert c.state == shim.STATE_OPEN and c.opened and c.open_remaining == 10
    assert isinstance(c.last_failure, IOError)
    reg.advance(10)
    assert c.state == shim.STATE_HALF_OPEN
    with c:
        pass
    assert c.state == shim.STATE_CLOSED and c.last_failure is None


def test_row_monitor(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=1, name="m1")
    def a() -> None:
        raise IOError()

    @shim.circuit(name="m2")
    def b() -> None:
        pass

    with pytest.raises(IOError):
        a()
    b()
    assert [c.name for c in shim.CircuitBreakerMonitor.get_open()] == ["m1"]
    assert [c.name for c in shim.CircuitBreakerMonitor.get_closed()] == ["m2"]
    assert not shim.CircuitBreakerMonitor.all_closed()


def test_row_generator_and_coroutine_functions(reg: lb.Registry) -> None:
    @shim.circuit(name="gen")
    def gen() -> Iterator[int]:
        yield from range(3)

    assert list(gen()) == [0, 1, 2]

    @shim.circuit(failure_threshold=1, name="co")
    async def co() -> None:
        raise IOError()

    async def main() -> None:
        with pytest.raises(IOError):
            await co()
        with pytest.raises(shim.CircuitBreakerError):
            await co()

    asyncio.run(main())


def test_row_use_registry_shares_the_circuit_through_a_file(tmp_path: Any) -> None:
    path = tmp_path / "shim.lbr"
    shim.use_registry(lb.Registry.open(path))
    try:
        c = shim.CircuitBreaker(failure_threshold=1, name="shared")
        with pytest.raises(IOError):
            with c:
                raise IOError()
        other = lb.Registry.open(path, create=False).lookup("shared")  # another process would do the same
        assert other is not None and other.state == "open"
    finally:
        shim.use_registry(None)


def test_the_shim_answers_as_the_real_package_does(reg: lb.Registry) -> None:
    """The same calls on circuitbreaker and on the shim: the same results."""
    def run(mod: Any) -> list[str]:
        out: list[str] = []

        @mod.circuit(failure_threshold=3, recovery_timeout=30, expected_exception=IOError, name=f"cmp-{mod.__name__}")
        def f(x: str) -> str:
            if x == "io":
                raise IOError()
            if x == "key":
                raise KeyError()
            return x

        for x in ["ok", "io", "io", "key", "io", "io", "io", "ok", "ok"]:
            try:
                out.append(f(x))
            except mod.CircuitBreakerError:
                out.append("OPEN")
            except (IOError, KeyError) as e:
                out.append(type(e).__name__)
        return out

    assert run(shim) == run(real)


# ---- the drop-in beside the real package, clock and all --------------------------------

@pytest.fixture
def clocks(reg: lb.Registry, monkeypatch: pytest.MonkeyPatch) -> Callable[[Any, float], None]:
    """advance(module, seconds): the shim's registry clock, or the real
    package's (its module-level monotonic, replaced by a manual one)."""
    now = [1000.0]
    monkeypatch.setattr(real, "monotonic", lambda: now[0])

    def advance(mod: Any, seconds: float) -> None:
        if mod is shim:
            reg.advance(seconds)
        else:
            now[0] += seconds

    return advance


def _open_until_free(text: str) -> str:
    return re.sub(r"OPEN until [^(]*\(", "OPEN until <t> (", text)


def test_the_shims_properties_read_as_the_real_packages_through_a_recovery(
        reg: lb.Registry, clocks: Callable[[Any, float], None]) -> None:
    def run(mod: Any) -> list[Any]:
        c = mod.CircuitBreaker(failure_threshold=2, recovery_timeout=10, expected_exception=IOError,
                               name="props")
        out: list[Any] = []

        def look(step: str) -> None:
            out.append((step, c.state, c.closed, c.opened, c.open_remaining, c.failure_count, repr(c.last_failure)))

        def attempt(exc: type[BaseException] | None) -> None:
            try:
                with c:
                    if exc is not None:
                        raise exc("x")
            except (IOError, KeyError):
                pass

        look("fresh")
        clocks(mod, 4)
        look("4 s after it was made")
        attempt(IOError)
        look("one failure")
        attempt(KeyError)
        look("an exception not expected: a success")
        attempt(IOError)
        attempt(IOError)
        look("tripped")
        try:
            c.decorate(lambda: None)()
        except mod.CircuitBreakerError as e:
            out.append(("rejected", _open_until_free(str(e)), e.args))
        clocks(mod, 3.5)
        look("3.5 s later")
        clocks(mod, 6.5)
        look("at the recovery timeout")
        clocks(mod, 2.5)
        look("2.5 s past it")
        attempt(None)
        look("the probe succeeded")
        return out

    assert run(shim) == run(real)


def test_the_error_and_an_unnamed_circuit_read_as_the_real_packages(reg: lb.Registry,
                                                                    clocks: Callable[[Any, float], None]) -> None:
    def run(mod: Any) -> list[Any]:
        unnamed = mod.CircuitBreaker(failure_threshold=1)
        out: list[Any] = []
        try:
            str(unnamed)
        except TypeError as e:
            out.append(("str", type(e).__name__))
        with pytest.raises(OSError):
            with unnamed:
                raise OSError("disk")
        e = mod.CircuitBreakerError(unnamed)
        out.append((_open_until_free(str(e)), e.args, unnamed.name))
        return out

    assert run(shim) == run(real)


def test_the_fallback_gets_the_calls_arguments_as_in_the_real_package(reg: lb.Registry) -> None:
    def run(mod: Any) -> Any:
        @mod.circuit(failure_threshold=1, fallback_function=lambda *a, **k: ("fallback", a, k), name=f"fa-{mod}")
        def f(x: int, *, y: int) -> None:
            raise IOError()

        with pytest.raises(IOError):
            f(1, y=2)
        return f(3, y=4)

    assert run(shim) == run(real) == ("fallback", (3,), {"y": 4})


def _module_with_fetch(mod: Any, module_name: str) -> Any:
    """A module of its own defining a decorated `fetch`, as two packages of
    one application would."""
    module = types.ModuleType(module_name)
    module.circuit = mod.circuit  # type: ignore[attr-defined]
    exec("@circuit(failure_threshold=1)\ndef fetch(fail):\n    if fail:\n        raise IOError()\n    return 'ok'\n",
         module.__dict__)
    return module


def test_functions_of_one_name_in_two_modules_each_have_their_own_circuit(reg: lb.Registry) -> None:
    def run(mod: Any) -> list[str]:
        a = _module_with_fetch(mod, "orders.client")
        b = _module_with_fetch(mod, "billing.client")
        out = []
        with pytest.raises(IOError):
            a.fetch(True)
        for fetch in (a.fetch, b.fetch):
            try:
                out.append(fetch(False))
            except mod.CircuitBreakerError:
                out.append("OPEN")
        return out

    assert run(shim) == run(real) == ["OPEN", "ok"]


def test_two_circuits_given_one_name_are_two_circuits_as_in_the_real_package(reg: lb.Registry) -> None:
    def run(mod: Any) -> list[bool]:
        first = mod.CircuitBreaker(failure_threshold=1, name="same")
        second = mod.CircuitBreaker(failure_threshold=1, name="same")
        with pytest.raises(IOError):
            with first:
                raise IOError()
        return [first.opened, second.opened]

    assert run(shim) == run(real) == [True, False]


def test_a_second_circuit_of_a_name_is_named_in_making_order_so_workers_share_each(reg: lb.Registry) -> None:
    shim.CircuitBreaker(name="same")
    shim.CircuitBreaker(name="same")
    assert sorted(b.name for b in reg.breakers()) == ["same", "same#2"]


def test_a_decorated_function_keeps_its_kind(reg: lb.Registry) -> None:
    @shim.circuit
    def gen() -> Iterator[int]:
        yield 1

    @shim.circuit
    async def agen() -> AsyncIterator[int]:
        yield 1

    @shim.circuit
    async def co() -> int:
        return 1

    assert inspect.isgeneratorfunction(gen)
    assert inspect.isasyncgenfunction(agen)
    assert inspect.iscoroutinefunction(co)


def test_a_generator_is_admitted_when_iterated_and_its_failure_counts(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=1, name="gen-fail")
    def gen() -> Iterator[int]:
        yield 1
        raise IOError()

    items = gen()
    assert next(items) == 1
    with pytest.raises(IOError):
        next(items)
    rejected = gen()  # nothing happens until it is iterated
    with pytest.raises(shim.CircuitBreakerError):
        next(rejected)


def test_an_open_generator_circuit_yields_the_fallbacks_items(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=1, name="gen-fb", fallback_function=lambda n: iter(["cached", n]))
    def gen(n: int) -> Iterator[Any]:
        raise IOError()
        yield n

    with pytest.raises(IOError):
        list(gen(1))
    assert list(gen(2)) == ["cached", 2]


def test_an_async_generator_circuit_counts_and_falls_back(reg: lb.Registry) -> None:
    async def cached(n: int) -> AsyncIterator[Any]:
        yield "cached"
        yield n

    @shim.circuit(failure_threshold=1, name="agen", fallback_function=cached)
    async def agen(n: int) -> AsyncIterator[int]:
        yield n
        raise IOError()

    async def main() -> list[Any]:
        got = []
        with pytest.raises(IOError):
            async for x in agen(1):
                got.append(x)
        return got + [x async for x in agen(2)]

    assert asyncio.run(main()) == [1, "cached", 2]


def test_an_async_fallback_is_awaited(reg: lb.Registry) -> None:
    async def cached(n: int) -> str:
        return f"cached {n}"

    @shim.circuit(failure_threshold=1, name="co-fb", fallback_function=cached)
    async def co(n: int) -> str:
        raise IOError()

    async def main() -> str:
        with pytest.raises(IOError):
            await co(1)
        return await co(2)

    assert asyncio.run(main()) == "cached 2"


def test_call_call_generator_call_async_and_call_async_generator(reg: lb.Registry) -> None:
    c = shim.CircuitBreaker(failure_threshold=4, name="forms")

    async def co(x: int) -> int:
        return x

    async def agen(x: int) -> AsyncIterator[int]:
        yield x

    async def main() -> list[int]:
        return [await c.call_async(co, 3)] + [x async for x in c.call_async_generator(agen, 4)]

    assert c.call(lambda x: x, 1) == 1
    assert list(c.call_generator(lambda x: iter([x]), 2)) == [2]
    assert asyncio.run(main()) == [3, 4]
    assert c.breaker.stats().successes == 4


def test_half_open_admits_one_probe_unless_half_open_max_calls_says_more(reg: lb.Registry) -> None:
    def second_caller_while_probing(**kwargs: Any) -> str:
        c = shim.CircuitBreaker(failure_threshold=1, recovery_timeout=10, **kwargs)
        with pytest.raises(IOError):
            with c:
                raise IOError()
        reg.advance(10)
        with c:  # the probe, still running when
            try:
                with c:  # another caller comes
                    return "admitted"
            except shim.CircuitBreakerError:
                return "rejected"

    assert second_caller_while_probing() == "rejected"
    assert second_caller_while_probing(half_open_max_calls=2) == "admitted"

    @shim.circuit(half_open_max_calls=32)
    def f() -> None:
        pass

    assert shim.CircuitBreakerMonitor.get(f.__qualname__).breaker.config().half_open_max_calls == 32  # type: ignore


def test_bad_arguments_are_refused_by_name(reg: lb.Registry) -> None:
    with pytest.raises(ValueError, match="half_open_max_calls"):
        shim.CircuitBreaker(half_open_max_calls=1000)
    with pytest.raises(ValueError, match="open_duration"):
        shim.CircuitBreaker(recovery_timeout=-1)
    with pytest.raises(TypeError, match="lazybreaker: registry: "):
        shim.use_registry("/dev/shm/app.lbr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected_exception cannot be a string"):
        shim.CircuitBreaker(expected_exception="IOError")


def test_a_cancelled_call_counts_as_nothing(reg: lb.Registry) -> None:
    @shim.circuit(failure_threshold=1, name="cancel")
    async def co() -> None:
        raise asyncio.CancelledError()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(co())
    c = shim.CircuitBreakerMonitor.get("cancel")
    assert c is not None and c.closed and c.breaker.stats().ignored == 1


def test_with_and_call_are_admitted_by_the_breaker_as_the_decorator_is(reg: lb.Registry) -> None:
    c = shim.CircuitBreaker(failure_threshold=1, name="with-open")
    with pytest.raises(IOError):
        c.call(lambda: (_ for _ in ()).throw(IOError()))
    ran: list[bool] = []
    with pytest.raises(shim.CircuitBreakerError):
        with c:
            ran.append(True)
    with pytest.raises(shim.CircuitBreakerError):
        c.call(ran.append, True)
    assert ran == []


def test_a_circuit_forced_open_reads_open_with_no_end(reg: lb.Registry) -> None:
    c = shim.CircuitBreaker(name="forced")
    c.breaker.force_open()
    assert (c.state, c.opened, c.open_remaining) == ("open", True, 2**31 - 1)
    with pytest.raises(shim.CircuitBreakerError) as e:
        with c:
            pass
    assert e.value.retry_after is None


# ---- pybreaker -> lazybreaker --------------------------------------------------------

def test_row_pybreaker_circuitbreaker_fail_max_reset_timeout(reg: lb.Registry) -> None:
    # pybreaker.CircuitBreaker(fail_max=5, reset_timeout=60)
    b = reg.get_or_create("db", lb.Config(failure_threshold=5, open_duration=60))
    assert b.config().failure_threshold == 5 and b.config().open_duration == 60


def test_row_pybreaker_decorator_and_call(reg: lb.Registry) -> None:
    b = reg.get_or_create("db", lb.Config(failure_threshold=1))

    @b
    def q(x: int) -> int:
        return x

    assert q(1) == 1 and b.call(q, 2) == 2


def test_row_pybreaker_exclude(reg: lb.Registry) -> None:
    b = reg.get_or_create("db", lb.Config(failure_threshold=1), ignore=(ValueError,))
    with pytest.raises(ValueError):
        b.call(int, "x")
    assert b.state == "closed"


def test_row_pybreaker_circuitbreakererror_and_current_state(reg: lb.Registry) -> None:
    b = reg.get_or_create("db", lb.Config(failure_threshold=1))
    with pytest.raises(ZeroDivisionError):
        b.call(lambda: 1 / 0)
    assert b.state == "open"  # pybreaker: current_state == "open"
    with pytest.raises(lb.CircuitOpenError):
        b.call(lambda: 1)


def test_row_pybreaker_open_close_and_fail_counter(reg: lb.Registry) -> None:
    b = reg.get_or_create("db", lb.Config(failure_threshold=3))
    with pytest.raises(ZeroDivisionError):
        b.call(lambda: 1 / 0)
    assert b.stats().consecutive_failures == 1  # pybreaker: fail_counter
    b.trip()  # pybreaker: open()
    assert b.state == "open"
    b.reset()  # pybreaker: close()
    assert b.state == "closed"


def test_row_pybreaker_calling_context_manager(reg: lb.Registry) -> None:
    b = reg.get_or_create("db", lb.Config(failure_threshold=1))
    with b:  # pybreaker: with db_breaker.calling():
        pass
    assert b.stats().successes == 1


def test_row_pybreaker_redis_storage_becomes_a_shared_file(tmp_path: Any) -> None:
    # pybreaker: CircuitBreaker(state_storage=CircuitRedisStorage(...))
    a = lb.Registry.open(tmp_path / "app.lbr")
    b = lb.Registry.open(tmp_path / "app.lbr", create=False)
    a.get_or_create("db", lb.Config(failure_threshold=1)).trip()
    assert b.get_or_create("db", lb.Config(failure_threshold=1)).state == "open"
