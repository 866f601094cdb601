"""Bad arguments raise ValueError or TypeError naming the argument in
Python's words and change nothing; a closed registry's breakers raise
ClosedError; nothing crashes the interpreter."""

from __future__ import annotations

import gc
import os
import threading
from datetime import timedelta
from pathlib import Path

import pytest

import lazybreaker as lb
from lazybreaker import _core


@pytest.mark.parametrize("kwargs, error, words", [
    ({"failure_threshold": 0}, ValueError, "failure_threshold must be 1..65535, got 0"),
    ({"failure_threshold": 70000}, ValueError, "failure_threshold must be 1..65535"),
    ({"failure_threshold": "3"}, TypeError, "failure_threshold: expected an int, got str"),
    ({"failure_threshold": 2.5}, TypeError, "failure_threshold: expected an int"),
    ({"failure_threshold": True}, TypeError, "failure_threshold: expected an int, got bool"),
    ({"open_duration": 0}, ValueError, "open_duration must be 1e-06..31622400 s, got 0"),
    ({"open_duration": -1}, ValueError, "open_duration: expected a duration of 0 or more"),
    ({"open_duration": float("nan")}, ValueError, "open_duration: expected a finite duration"),
    ({"open_duration": "10s"}, TypeError, "open_duration: expected a timedelta or seconds"),
    ({"open_duration": timedelta(days=400)}, ValueError, "open_duration must be"),
    ({"half_open_max_calls": 33}, ValueError, "half_open_max_calls must be 1..32"),
    ({"failure_rate_threshold": 0}, ValueError, "failure_rate_threshold must be above 0, at most 1"),
    ({"failure_rate_threshold": "half"}, TypeError, "failure_rate_threshold: expected a number"),
    ({"open_jitter": 1.0}, ValueError, "open_jitter must be 0 or more, below 1"),
    ({"policy": "sliding"}, ValueError, "policy: expected one of consecutive, count_window, time_window"),
    ({"policy": 1}, TypeError, "policy: expected one of"),
    ({"failure_threshold": 3, "window_size": 10}, ValueError,
     "window_size is not read by the consecutive policy, which failure_threshold chooses"),
    ({"policy": "count_window", "failure_threshold": 3}, ValueError,
     "failure_threshold is not read by the count_window policy"),
    ({"policy": "time_window", "window_size": 3}, ValueError, "window_size is not read by the time_window policy"),
    ({"failure_rate_threshold": 0.5, "window_duration": 10}, ValueError, None),  # time window: reads both
])
def test_a_bad_setting_names_itself(kwargs: dict[str, object], error: type[Exception], words: str | None) -> None:
    if words is None:
        assert lb.Config(**kwargs).as_c()["policy"] == _core.CB_POLICY_TIME_WINDOW  # type: ignore[arg-type]
        return
    with pytest.raises(error) as e:
        lb.Config(**kwargs)  # type: ignore[arg-type]
    assert words in str(e.value)


def test_an_unknown_setting_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="failure_treshold"):
        lb.Config(failure_treshold=3)  # type: ignore[call-arg]


def test_slow_calls_let_the_consecutive_policy_read_its_window() -> None:
    cfg = lb.Config(failure_threshold=3, slow_call=0.5, window_size=20, minimum_calls=10)
    assert cfg._to_c().policy == _core.CB_POLICY_CONSECUTIVE
    lb.Config(policy="consecutive", failure_threshold=3, slow_call=0.5, window_size=20, minimum_calls=10)
    with pytest.raises(ValueError, match="window_size is not read by the consecutive policy, which failure_threshold"):
        lb.Config(failure_threshold=3, window_size=20)


def test_config_is_frozen_and_fields_are_the_abis() -> None:
    cfg = lb.Config(failure_threshold=3)
    with pytest.raises(AttributeError):
        cfg.failure_threshold = 4  # type: ignore[misc]
    from dataclasses import fields
    c_names = [row[0] for row in _core.lb_config_fields()]
    assert [lb.FIELDS[f.name].c_name for f in fields(lb.Config)] == c_names


def test_the_library_judges_across_fields_in_pythons_words() -> None:
    reg = lb.Registry.manual_clock()
    with pytest.raises(ValueError, match="open_duration_max must be 0 or at least open_duration") as e:
        reg.get_or_create("x", lb.Config(open_duration=5, open_duration_max=2))
    assert getattr(e.value, "field") == "open_duration_max_ns"
    assert reg.breakers() == []  # nothing changed


def test_another_configuration_names_the_field_that_differs() -> None:
    reg = lb.Registry.manual_clock()
    reg.get_or_create("x", lb.Config(failure_threshold=3, open_duration=5))
    with pytest.raises(ValueError, match="'x' exists with another configuration: its open_duration differs"):
        reg.get_or_create("x", lb.Config(failure_threshold=3, open_duration=6))


@pytest.mark.parametrize("name, error", [(42, TypeError), ("a\0b", ValueError), ("", ValueError),
                                         ("x" * 300, ValueError), (None, TypeError)])
def test_a_bad_name_is_refused(name: object, error: type[Exception]) -> None:
    reg = lb.Registry.manual_clock()
    with pytest.raises(error, match="name"):
        reg.get_or_create(name, None)  # type: ignore[arg-type]


def test_registry_open_arguments(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="capacity"):
        lb.Registry.open(capacity="big")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="capacity"):
        lb.Registry.open(capacity=-1)
    with pytest.raises(ValueError, match="capacity"):
        lb.Registry.open(capacity=_core.CB_MAX_CAPACITY + 1)
    with pytest.raises(FileNotFoundError):
        lb.Registry.open(tmp_path / "missing.lbr", create=False)
    path = tmp_path / "a.lbr"
    lb.Registry.open(path).close()
    with pytest.raises(FileExistsError):
        lb.Registry.open(path, exclusive=True)
    with pytest.raises(ValueError, match="manual_clock"):
        lb.Registry.open(path, manual_clock=True)
    with pytest.raises(ValueError, match="not manual"):
        lb.Registry.open().advance(1)
    with pytest.raises(TypeError, match="by"):
        lb.Registry.manual_clock().advance("1s")  # type: ignore[arg-type]


def test_trip_names_open_for() -> None:
    b = lb.Registry.manual_clock().create("t")
    with pytest.raises(ValueError, match="open_for must be 1e-06..31622400 s"):
        b.trip(open_for=0)
    with pytest.raises(TypeError, match="open_for"):
        b.trip(open_for="soon")  # type: ignore[arg-type]
    assert b.state == "closed"


def test_a_closed_registrys_breaker_raises_in_every_form() -> None:
    reg = lb.Registry.manual_clock()
    b = reg.get_or_create("c", lb.Config(failure_threshold=1))
    permit = b.acquire()

    @b
    def f() -> int:
        return 1

    reg.close()
    reg.close()  # twice: a no-op
    for use in (lambda: f(), lambda: b.call(f), b.try_acquire, lambda: b.state, lambda: b.retry_after,
                b.stats, b.reset, b.force_open, b.trip, permit.success, lambda: reg.lookup("c"),
                lambda: reg.get_or_create("d")):
        with pytest.raises(lb.ClosedError, match="closed"):
            use()
    with pytest.raises(lb.ClosedError):
        with b:
            pass


def test_a_registry_closed_by_another_thread_while_calls_run_never_crashes() -> None:
    for _ in range(20):
        reg = lb.Registry.manual_clock()
        b = reg.get_or_create("race", lb.Config(failure_threshold=1000))
        errors: list[BaseException] = []
        stop = threading.Event()

        def hammer() -> None:
            while not stop.is_set():
                try:
                    with b:
                        pass
                except lb.ClosedError:
                    return
                except BaseException as e:  # anything else fails the test
                    errors.append(e)
                    return

        threads = [threading.Thread(target=hammer) for _ in range(3)]
        for t in threads:
            t.start()
        reg.close()
        stop.set()
        for t in threads:
            t.join()
        assert errors == []


def test_a_dropped_registry_is_closed_by_the_collector(tmp_path: Path) -> None:
    reg = lb.Registry.open(tmp_path / "gc.lbr")
    reg.get_or_create("x")
    del reg
    gc.collect()
    again = lb.Registry.open(tmp_path / "gc.lbr", create=False)
    assert again.lookup("x") is not None
    assert os.stat(tmp_path / "gc.lbr").st_mode & 0o777 == 0o600
