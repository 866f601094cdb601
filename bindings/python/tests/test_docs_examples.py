"""Every example of docs/python.md's "HTTP clients and servers, metrics,
events" section runs as written: each ```python block is a whole program,
run by this interpreter in a process of its own, and prints what its
comments and the page say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(os.environ.get("LB_SOURCE_DIR", Path(__file__).parents[3])) / "docs" / "python.md"
SECTION = "## HTTP clients and servers, metrics, events"


def examples() -> list[tuple[str, str]]:
    text = PAGE.read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    out = []
    heading = ""
    for block in re.finditer(r"^### ([^\n]+)$|^```python\n(.*?)^```$", text[start:end], re.M | re.S):
        if block.group(1):
            heading = block.group(1)
        else:
            out.append((heading, block.group(2)))
    return out


NOT_SENT = "not sent: http/127.0.0.1:9"

# What each example prints (as its comments and the page say), in the
# page's order; the WSGI one only makes its app; of Prometheus's exposition,
# the sample the example makes.
EXPECTED: list[tuple[str, list[str]]] = [
    ("httpx", ["failure: ConnectError"] * 3 + ["not sent: http/127.0.0.1:9 retry after 30 s"] * 2
     + ["not sent: http/127.0.0.1:9"]),
    ("requests", ["failure"] * 3 + [NOT_SENT] * 2),
    ("aiohttp", ["failure"] * 3 + [NOT_SENT] * 2),
    ("ASGI (Starlette, FastAPI) and WSGI (Flask, Django)", ["503 5 The circuit 'api' is open: retry after 5 s."]),
    ("ASGI (Starlette, FastAPI) and WSGI (Flask, Django)", []),
    ("Prometheus", ['lazybreaker_state{breaker="payments",state="open"} 1.0']),
    ("Events", ["WARNING breaker payments: closed -> open (tripped)", "payments closed"]),
]


def test_the_section_has_an_example_per_integration() -> None:
    assert [h for h, _ in examples()] == [h for h, _ in EXPECTED]


@pytest.mark.parametrize("index", range(len(EXPECTED)), ids=[f"{i}-{h.split()[0]}" for i, (h, _) in enumerate(EXPECTED)])
def test_the_example_runs_as_written(index: int, tmp_path: Path) -> None:
    heading, code = examples()[index]
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = (run.stderr + run.stdout).splitlines()  # logging writes to stderr
    printed = EXPECTED[index][1]
    if heading == "Prometheus":
        assert set(printed) <= set(lines), run.stdout
    else:
        assert lines == printed
