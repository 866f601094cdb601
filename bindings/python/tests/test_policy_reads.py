"""Which settings a policy reads comes from the library (cb_policy_reads),
asked once per process; the policy of a Config follows the one rule of
docs/policies.md, "Which settings a policy reads"."""

from __future__ import annotations

import pytest

import lazybreaker as lb
from lazybreaker import _config, _core

POLICIES = {
    "consecutive": _core.CB_POLICY_CONSECUTIVE,
    "count_window": _core.CB_POLICY_COUNT_WINDOW,
    "time_window": _core.CB_POLICY_TIME_WINDOW,
}


def test_every_answer_the_binding_uses_is_the_librarys() -> None:
    assert set(_config.POLICY_READS) == {(p, f.c_name) for p in POLICIES for f in lb.FIELDS.values()}
    for (policy, c_name), answer in _config.POLICY_READS.items():
        assert answer == _core.cb_policy_reads(POLICIES[policy], c_name), (policy, c_name)
    assert set(_config.POLICY_READS.values()) == {
        _core.CB_FIELD_IGNORED, _core.CB_FIELD_READ, _core.CB_FIELD_READ_WITH_SLOW_CALLS}


@pytest.mark.parametrize("policy, field, named", [
    (_core.CB_POLICY_CONSECUTIVE, "window_sise", "field"),
    (_core.CB_POLICY_CONSECUTIVE, "window_duration", "field"),  # Python's name, not the C field's
    (_core.CB_POLICY_CONSECUTIVE, None, "field"),
    (7, "window_size", "policy"),
    (-1, "window_size", "policy"),
])
def test_the_library_refuses_an_unknown_policy_or_field(policy: int, field: str | None, named: str) -> None:
    with pytest.raises(_core.Error) as e:
        _core.cb_policy_reads(policy, field)
    assert getattr(e.value, "status") == _core.CB_EINVAL
    assert getattr(e.value, "field") == named


def test_a_config_asks_the_library_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(policy: int, field: str | None) -> int:
        raise AssertionError("cb_policy_reads asked again")

    monkeypatch.setattr(_core, "cb_policy_reads", refuse)
    assert lb.Config(failure_rate_threshold=0.5, window_size=10).as_c()["policy"] == _core.CB_POLICY_COUNT_WINDOW


@pytest.mark.parametrize("kwargs, policy", [
    ({"failure_threshold": 3}, "consecutive"),
    ({"window_size": 10}, "count_window"),
    ({"minimum_calls": 5}, "count_window"),
    ({"failure_rate_threshold": 0.5}, "count_window"),
    ({"failure_rate_threshold": 0.5, "minimum_calls": 5}, "count_window"),
    ({"window_duration": 10}, "time_window"),
    ({"window_buckets": 5, "minimum_calls": 5}, "time_window"),
    ({"failure_threshold": 3, "open_duration": 5, "slow_call": 1}, "consecutive"),
    ({"failure_threshold": 3, "slow_call": 1, "window_size": 10, "minimum_calls": 5}, "consecutive"),
])
def test_without_a_policy_the_first_setting_some_policy_ignores_chooses(kwargs: dict[str, object],
                                                                       policy: str) -> None:
    chosen = lb.Config(**kwargs).as_c()["policy"]  # type: ignore[arg-type]
    assert _config.policy_name(int(chosen)) == policy


def test_settings_every_policy_reads_choose_no_policy() -> None:
    assert "policy" not in lb.Config(open_duration=5, slow_call=1).as_c()


@pytest.mark.parametrize("kwargs, words", [
    ({"window_size": 10, "window_duration": 10},
     "window_duration is not read by the count_window policy, which window_size chooses"),
    ({"failure_threshold": 3, "window_buckets": 5, "minimum_calls": 5},
     "window_buckets is not read by the consecutive policy, which failure_threshold chooses"),
    # The consecutive policy's window is read only with slow calls.
    ({"failure_threshold": 3, "window_size": 10},
     "window_size is not read by the consecutive policy, which failure_threshold chooses"),
    ({"policy": "consecutive", "window_size": 10},
     "window_size is not read by the consecutive policy without slow_call"),
    ({"policy": "consecutive", "slow_call": 0, "minimum_calls": 10},
     "minimum_calls is not read by the consecutive policy without slow_call"),
    ({"policy": "time_window", "window_size": 10}, "window_size is not read by the time_window policy ("),
])
def test_a_setting_the_policy_does_not_read_is_named(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError) as e:
        lb.Config(**kwargs)  # type: ignore[arg-type]
    assert words in str(e.value)


def test_the_consecutive_policy_reads_its_slow_call_window_when_set() -> None:
    cfg = lb.Config(policy="consecutive", failure_threshold=3, slow_call=0.5, window_size=20, minimum_calls=10)
    assert cfg.as_c()["window_size"] == 20
    back = lb.Registry.manual_clock().create("slow", cfg).config()
    assert back.window_size == 20 and back.minimum_calls == 10 and back.failure_rate_threshold is None
