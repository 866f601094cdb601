"""The Python half of tests/cross_language, run as its own process by CTest
(cross_language.python_sees_the_c_trip): the registry file a C program
made and tripped "payments" in is opened here, "payments" is open and
rejects, and "tripped-by-python" is tripped for the C program to see. The
settings equal the C program's configuration field for field, or
get_or_create would refuse them."""

from __future__ import annotations

import os

import lazybreaker as lb

path = os.environ["LB_CROSS_LANGUAGE_FILE"]
language = os.environ["LB_CROSS_LANGUAGE"]
config = lb.Config(failure_threshold=1, open_duration=300)

with lb.Registry.open(path, create=False, manual_clock=True) as shared:
    payments = shared.get_or_create("payments", config)
    assert payments.state == "open", payments.state
    assert payments.try_acquire() is None, "payments admitted a call"
    try:
        payments.call(lambda: "never")
        raise AssertionError("call ran on an open breaker")
    except lb.CircuitOpenError as e:
        print(f"{language}: payments rejects, retry after {e.retry_after}")
    mine = shared.get_or_create(f"tripped-by-{language}", config)
    mine.acquire().failure()
    assert mine.state == "open", mine.state
