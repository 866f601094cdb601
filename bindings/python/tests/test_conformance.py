"""The conformance scenarios through the package: every step stream that
lb_conformance wrote (LB_CONFORMANCE_STEPS, set by CTest) passes, and every
mismatch self-test stream mismatches (the runner skips nothing)."""

from __future__ import annotations

import glob
import os

import pytest

from conformance import run_stream

STEPS = os.environ.get("LB_CONFORMANCE_STEPS", "")
STREAMS = sorted(glob.glob(os.path.join(STEPS, "*.steps")))
MISMATCH = sorted(glob.glob(os.path.join(STEPS, "selftest", "mismatch", "*.steps")))


def test_the_streams_are_there() -> None:
    assert STEPS and len(STREAMS) >= 20, f"no step streams in LB_CONFORMANCE_STEPS={STEPS!r}"
    assert MISMATCH, "no mismatch self-test streams"


@pytest.mark.parametrize("stream", STREAMS, ids=os.path.basename)
def test_scenario_passes(stream: str) -> None:
    lines: list[str] = []
    assert run_stream(stream, lines.append) == 0, "\n".join(lines)


@pytest.mark.parametrize("stream", MISMATCH, ids=os.path.basename)
def test_runner_finds_the_mismatch(stream: str) -> None:
    lines: list[str] = []
    assert run_stream(stream, lines.append) == 1, "\n".join(lines)
