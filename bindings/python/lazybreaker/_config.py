"""Config: a breaker's configuration, in cb_config's names without units.

Every field of lists.h's CB_CONFIG_FIELDS is a keyword argument here, its
name the C name without the `_ns` unit (`open_duration_ns` is
`open_duration`, a `timedelta` or seconds). A field left at None keeps the
library's default (cb_config_init's); nothing here copies a default or a
bound: the types, units and bounds come from `_core.lb_config_fields()`, the
ABI's own list, and the library judges the whole configuration again when a
breaker is created (cb_last_error_field names what it refuses).
"""

from __future__ import annotations

import math
from decimal import Decimal
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Literal, NamedTuple, Union

from . import _core

Duration = Union[timedelta, int, float, Decimal]
"""A duration: a `timedelta`, or seconds as an int, a float or a Decimal
(exact to the nanosecond, where a float is not past 2**53 ns)."""

PolicyName = Literal["consecutive", "count_window", "time_window"]

_POLICIES: dict[str, int] = {
    "consecutive": _core.CB_POLICY_CONSECUTIVE,
    "count_window": _core.CB_POLICY_COUNT_WINDOW,
    "time_window": _core.CB_POLICY_TIME_WINDOW,
}
_POLICY_NAMES: dict[int, str] = {v: k for k, v in _POLICIES.items()}


class Field(NamedTuple):
    """One row of CB_CONFIG_FIELDS, with its Python name."""

    c_name: str
    py_name: str
    type: str
    since: str
    unit: str
    bounds: str
    lo: float
    hi: float
    default: float


def _load_fields() -> dict[str, Field]:
    out: dict[str, Field] = {}
    for c_name, ctype, since, unit, bounds, lo, hi, default in _core.lb_config_fields():
        py_name = c_name[: -len("_ns")] if unit == "ns" else c_name
        out[py_name] = Field(c_name, py_name, ctype, since, unit, bounds, lo, hi, default)
    return out


FIELDS: dict[str, Field] = _load_fields()
"""CB_CONFIG_FIELDS by Python name, in cb_config's order."""
BY_C_NAME: dict[str, Field] = {f.c_name: f for f in FIELDS.values()}

# How each policy reads each field (docs/policies.md, "Which settings a
# policy reads"): the library's own answers (cb_policy_reads), asked once per
# process so that a Config costs no crossing. Inference tries the policies in
# the order of their CB_POLICY_* values.
_INFERENCE_ORDER: tuple[str, ...] = tuple(sorted(_POLICIES, key=lambda name: _POLICIES[name]))


def _ask_policy_reads() -> dict[tuple[str, str], int]:
    return {(policy, f.c_name): _core.cb_policy_reads(_POLICIES[policy], f.c_name)
            for policy in _INFERENCE_ORDER for f in FIELDS.values()}


POLICY_READS: dict[tuple[str, str], int] = _ask_policy_reads()
"""cb_policy_reads by (policy name, C field name): CB_FIELD_READ,
CB_FIELD_IGNORED or CB_FIELD_READ_WITH_SLOW_CALLS."""
_SLOW_CALL: Field = BY_C_NAME["slow_call_ns"]


def _seconds_text(ns: float) -> str:
    return f"{ns / 1e9:.9g}"


def range_text(f: Field) -> str:
    """The field's bounds in Python's words (durations in seconds)."""
    lo, hi = f.lo, f.hi
    if f.unit == "ns":
        lo_t, hi_t, unit = _seconds_text(lo), _seconds_text(hi), " s"
    elif f.type == "double":
        lo_t, hi_t, unit = f"{lo:g}", f"{hi:g}", ""
    else:
        lo_t, hi_t, unit = str(int(lo)), str(int(hi)), ""
    text = {
        "closed": f"{lo_t}..{hi_t}",
        "above": f"above {lo_t}, at most {hi_t}",
        "below": f"{lo_t} or more, below {hi_t}",
        "zero_or": f"0 or {lo_t}..{hi_t}",
    }.get(f.bounds, f"{lo_t}..{hi_t}")
    if f.c_name == "open_duration_max_ns":
        # The one rule across fields (lists.h): a cap of at least the duration.
        text = f"0 or at least open_duration, at most {hi_t}"
    return text + unit


def duration_ns(name: str, value: object) -> int:
    """Nanoseconds from a timedelta or seconds; TypeError/ValueError name `name`."""
    if isinstance(value, timedelta):
        ns = (value.days * 86400 + value.seconds) * 1_000_000_000 + value.microseconds * 1000
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"lazybreaker: {name}: expected a finite duration, got {value!r}")
        ns = int((value * 1_000_000_000).to_integral_value())
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"lazybreaker: {name}: expected a timedelta or seconds (int, float or Decimal), "
                        f"got {type(value).__name__}")
    elif isinstance(value, int):
        ns = value * 1_000_000_000
    else:
        if not math.isfinite(value):
            raise ValueError(f"lazybreaker: {name}: expected a finite duration, got {value!r}")
        ns = round(value * 1e9)
    if ns < 0:
        raise ValueError(f"lazybreaker: {name}: expected a duration of 0 or more, got {value!r}")
    return ns


def _in_bounds(f: Field, v: float) -> bool:
    lo, hi = f.lo, f.hi
    if f.bounds == "above":
        return lo < v <= hi
    if f.bounds == "below":
        return lo <= v < hi
    if f.bounds == "zero_or":
        return v == 0 or lo <= v <= hi
    return lo <= v <= hi


def _c_value(f: Field, value: object) -> int | float:
    """The C value of one setting, its type and bounds checked."""
    name = f.py_name
    if f.unit == "ns":
        v: int | float = duration_ns(name, value)
    elif f.type == "double":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"lazybreaker: {name}: expected a number, got {type(value).__name__}")
        v = float(value)
    else:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"lazybreaker: {name}: expected an int, got {type(value).__name__}")
        v = value
    if not _in_bounds(f, v):
        raise ValueError(f"lazybreaker: {name} must be {range_text(f)}, got {value!r}")
    return v


def policy_reads(policy: str, c_name: str, slow_calls: bool) -> bool:
    """Whether `policy` reads the field `c_name`, slow calls on or off."""
    answer = POLICY_READS[policy, c_name]
    return answer == _core.CB_FIELD_READ or (slow_calls and answer == _core.CB_FIELD_READ_WITH_SLOW_CALLS)


def choose_policy(policy: str | None, given: list[str], slow_calls: bool) -> str | None:
    """The policy of a configuration whose settings are the C fields `given`
    (in cb_config's order): `policy`, else the first policy that reads the
    first setting given that some policy ignores; None when no setting given
    depends on the policy. Every setting must be read by it (a slow-call
    window's only with slow calls): ValueError names the one left unread."""
    if policy is not None:
        for c_name in given:
            if not policy_reads(policy, c_name, slow_calls):
                without = (f" without {_SLOW_CALL.py_name}"
                           if POLICY_READS[policy, c_name] == _core.CB_FIELD_READ_WITH_SLOW_CALLS else "")
                raise ValueError(f"lazybreaker: {BY_C_NAME[c_name].py_name} is not read by the {policy} policy"
                                 f"{without} (docs/policies.md): drop it or choose another policy")
        return policy
    deciding = [c for c in given if not all(policy_reads(p, c, False) for p in _INFERENCE_ORDER)]
    if not deciding:
        return None
    first = deciding[0]
    chosen = next((p for p in _INFERENCE_ORDER if policy_reads(p, first, False)), _INFERENCE_ORDER[0])
    unread = next((c for c in deciding if not policy_reads(chosen, c, slow_calls)), None)
    if unread is None:
        return chosen
    raise ValueError(f"lazybreaker: {BY_C_NAME[unread].py_name} is not read by the {chosen} policy, which "
                     f"{BY_C_NAME[first].py_name} chooses (docs/policies.md): set policy or drop one")


@dataclass(frozen=True, kw_only=True)
class Config:
    """A breaker's configuration: cb_config's fields without units.

    A field left at None keeps the library's default. Durations are a
    `timedelta` or seconds. Without `policy`, the first setting given that
    some policy ignores chooses the first of consecutive, count_window and
    time_window that reads it, as the library answers (cb_policy_reads); a
    setting the policy does not read is a ValueError (docs/policies.md,
    "Which settings a policy reads").
    """

    failure_threshold: int | None = None
    open_duration: Duration | None = None
    half_open_max_calls: int | None = None
    half_open_success_threshold: int | None = None
    half_open_timeout: Duration | None = None
    policy: PolicyName | None = None
    window_size: int | None = None
    window_duration: Duration | None = None
    window_buckets: int | None = None
    minimum_calls: int | None = None
    failure_rate_threshold: float | None = None
    slow_call: Duration | None = None
    slow_call_rate_threshold: float | None = None
    open_backoff_multiplier: float | None = None
    open_duration_max: Duration | None = None
    open_jitter: float | None = None

    def __post_init__(self) -> None:
        values: dict[str, int | float] = {}
        given: set[str] = set()
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or f.name == "policy":
                continue
            given.add(f.name)
            values[FIELDS[f.name].c_name] = _c_value(FIELDS[f.name], value)
        policy = self.policy
        if policy is not None:
            if not isinstance(policy, str):
                raise TypeError(f"lazybreaker: policy: expected one of {', '.join(_POLICIES)}, "
                                f"got {type(policy).__name__}")
            if policy not in _POLICIES:
                raise ValueError(f"lazybreaker: policy: expected one of {', '.join(_POLICIES)}, got {policy!r}")
        slow_calls = values.get(_SLOW_CALL.c_name, _SLOW_CALL.default) > 0
        chosen = choose_policy(policy, [FIELDS[name].c_name for name in FIELDS if name in given], slow_calls)
        if chosen is not None:
            values["policy"] = _POLICIES[chosen]
        object.__setattr__(self, "_c_values", values)

    def _to_c(self) -> _core.cb_config:
        """The cb_config, made once per Config (a Config is frozen; the
        library copies it at each create)."""
        cfg: _core.cb_config | None = self.__dict__.get("_c_struct")
        if cfg is None:
            cfg = _core.cb_config()
            values: dict[str, int | float] = getattr(self, "_c_values")
            for c_name, v in values.items():
                setattr(cfg, c_name, v)
            object.__setattr__(self, "_c_struct", cfg)
        return cfg

    @staticmethod
    def _from_c(cfg: _core.cb_config) -> Config:
        """The configuration a breaker uses (cb_config_get), as a Config: every
        field its policy reads, durations in seconds (an int when whole)."""
        policy = _POLICY_NAMES[int(cfg.policy)]
        slow = int(cfg.slow_call_ns) > 0
        kwargs: dict[str, object] = {"policy": policy}
        for f in FIELDS.values():
            if f.c_name == "policy":
                continue
            if not policy_reads(policy, f.c_name, slow):
                continue
            v = getattr(cfg, f.c_name)
            if f.unit == "ns":
                v = v // 1_000_000_000 if v % 1_000_000_000 == 0 else v / 1e9
            kwargs[f.py_name] = v
        return Config(**kwargs)  # type: ignore[arg-type]

    def as_c(self) -> dict[str, int | float]:
        """The settings given, by their C names (nanoseconds; the policy as
        its cb_policy_t value)."""
        return dict(getattr(self, "_c_values"))


def policy_name(value: int) -> str:
    return _POLICY_NAMES[value]
