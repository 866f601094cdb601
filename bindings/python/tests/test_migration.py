"""Every row of docs/python.md's tables for users of `circuitbreaker` and
pybreaker, one test each (named after the row), and the circuitbreaker shim
beside the real package (Debian's python3-circuitbreaker): the same calls,
the same answers."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, Iterator

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
