"""The Python runner of the conformance scenarios: it interprets the step
streams that lb_conformance writes at build time from tests/conformance/
*.scn (tests/conformance/README.md, "Step streams") through the package
`lazybreaker` as a Python user calls it, each scenario on a fresh
manual-clock registry.

    python3 conformance.py [--expect mismatch] STREAM...

Exit status 0 (pass), 1 (mismatch), 2 (not a step stream); with --expect
mismatch, 0 when every stream mismatches. test_conformance.py runs it
under pytest. Each step is a method of Scenario taking the line's tokens
(t[0] the step, t[1] its .scn line); it returns a mismatch text or None.
"""

from __future__ import annotations

import math
from decimal import Decimal
import sys
from typing import Callable

import lazybreaker as lb
from lazybreaker import _core


class Mismatch(Exception):
    pass


class NotAStream(Exception):
    pass


def _expect(want: str, got: object, what: str = "") -> str | None:
    return None if str(got) == want else f"{what}expected {want}, got {got}"


class Scenario:
    def __init__(self, name: str) -> None:
        self.name = name
        self.reg = lb.Registry.manual_clock(capacity=1)
        # Each cb_config field as a Python user sets it, by its Python name.
        self.settings: dict[str, object] = {}
        self.breaker: lb.Breaker | None = None
        self.permits: dict[str, lb.Permit] = {}

    @property
    def b(self) -> lb.Breaker:
        assert self.breaker is not None, "a step before create"
        return self.breaker

    def config(self, t: list[str]) -> None:
        if t[4] != "set":
            return
        field = lb.FIELDS.get(t[2][:-3] if t[2].endswith("_ns") else t[2])
        if field is None or field.c_name != t[2]:
            raise NotAStream(f"no option for the config key {t[2]}")
        if field.unit == "ns":
            # seconds, exact: an int when whole, else a Decimal
            ns = int(t[3])
            value: object = ns // 10**9 if ns % 10**9 == 0 else Decimal(ns).scaleb(-9)
        elif field.c_name == "policy":
            value = t[3]
        elif field.type == "double":
            value = float(t[3])
        else:
            value = int(t[3])
        self.settings[field.py_name] = value

    def create(self, t: list[str]) -> None:
        self.breaker = self.reg.create(self.name, lb.Config(**self.settings))  # type: ignore[arg-type]

    def allow(self, t: list[str]) -> str | None:
        p = self.b.try_acquire()
        got = "ok" if p else "rejected"
        if p is not None:
            self.permits[t[3] if len(t) > 3 else f"#{len(self.permits)}"] = p
        return None if got == t[2] else f"expected {t[2]}, got {got} ({self.b.state})"

    def done(self, t: list[str]) -> None:
        p = self.permits[t[2]]
        if p.reported:  # the same ticket again, as the library sees it
            _core.cb_done(self.b.handle, p.ticket, {"success": 0, "failure": 1, "ignored": 2}[t[3]])
        else:
            p.report(t[3])

    def advance(self, t: list[str]) -> None:
        self.reg.advance_ns(int(t[2]))

    def state(self, t: list[str]) -> str | None:
        return _expect(t[2], self.b.state)

    def retry_after(self, t: list[str]) -> str | None:
        return _expect(t[2], self.b.retry_after_ns)

    def force_open(self, t: list[str]) -> None:
        self.b.force_open()

    def disable(self, t: list[str]) -> None:
        self.b.disable()

    def reset(self, t: list[str]) -> None:
        self.b.reset()

    def trip(self, t: list[str]) -> None:
        self.b.trip_ns(int(t[2]))

    def count(self, t: list[str]) -> str | None:
        return _expect(t[3], getattr(self.b.stats(), t[2]), t[2] + ": ")

    def rate(self, t: list[str]) -> str | None:
        got = getattr(self.b.stats(), t[2])
        return None if math.fabs(got - float(t[3])) <= 1e-9 else f"{t[2]}: expected {t[3]}, got {got:.17g}"


STEPS = {"config", "create", "allow", "done", "advance", "state", "retry_after", "force_open", "disable",
         "reset", "trip", "count", "rate"}


def run_stream(path: str, out: Callable[[str], None] = print) -> int:
    """0 pass, 1 mismatch, 2 not a step stream."""
    with open(path, encoding="utf-8") as f:
        first = f.readline().rstrip("\n")
        if not first.startswith("lbsteps 1 "):
            out(f"{path}: not a step stream of version 1")
            return 2
        source = first[len("lbsteps 1 "):]
        scenarios = failed = 0
        s: Scenario | None = None
        mismatch: str | None = None
        for line in f:
            t = line.split()
            if t[0] == "scenario":
                s, mismatch = Scenario(t[2]), None
                continue
            assert s is not None
            if t[0] == "end":
                s.reg.close()
                scenarios += 1
                if mismatch:
                    out(mismatch)
                    failed += 1
                continue
            if mismatch:
                continue  # the rest of the scenario is skipped
            if t[0] not in STEPS:
                out(f"{path}: not a step: {line.rstrip()}")
                return 2
            try:
                result = getattr(s, t[0])(t)
            except NotAStream as e:
                out(f"{path}: {e}")
                return 2
            except Exception as e:  # a refusal or a rejection the stream did not expect
                result = f"{type(e).__name__}: {e}"
            if result:
                mismatch = f"{source}:{t[1]}: mismatch: {t[0]}: {result}"
    out(f"{source}: {scenarios} scenarios, {scenarios - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    expect_mismatch = argv[:1] == ["--expect"]
    streams = argv[2:] if expect_mismatch else argv
    if (expect_mismatch and argv[1:2] != ["mismatch"]) or not streams:
        print("usage: conformance.py [--expect mismatch] STREAM...", file=sys.stderr)
        return 2
    status = 0
    for path in streams:
        rc = run_stream(path)
        if expect_mismatch and rc != 1:
            print(f"{path}: expected a mismatch, but there was none")
            status = 1
        elif not expect_mismatch:
            status = max(status, rc)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
