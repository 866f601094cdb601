"""The WSGI app of test_prefork.py, served by gunicorn's sync workers: it
protects a flaky upstream (LB_PREFORK_UPSTREAM) with one breaker in a
shared registry file (LB_PREFORK_REGISTRY). Each worker opens the file
itself, after the fork: every worker sees one breaker.

    GET /call[?hold=S]  waits S seconds (the request's own work), then calls
                        the upstream through the breaker: 200 and its body,
                        502 when it failed, 503 with Retry-After (whole
                        seconds, rounded up) when the breaker rejects.
    GET /pid            this worker's pid, without the breaker.
Every answer carries X-Worker-Pid.
"""

from __future__ import annotations

import math
import os
import time
import urllib.error
import urllib.request
from typing import Callable, Iterable
from urllib.parse import parse_qs

import lazybreaker as lb

registry = lb.Registry.open(os.environ["LB_PREFORK_REGISTRY"], create=True)
upstream = registry.get_or_create("upstream", lb.Config(failure_threshold=4, open_duration=5))
UPSTREAM = os.environ["LB_PREFORK_UPSTREAM"]

StartResponse = Callable[[str, list[tuple[str, str]]], object]


def app(environ: dict[str, object], start_response: StartResponse) -> Iterable[bytes]:
    pid = str(os.getpid())
    path = environ.get("PATH_INFO")
    if path == "/pid":
        start_response("200 OK", [("X-Worker-Pid", pid)])
        return [pid.encode()]
    query = parse_qs(str(environ.get("QUERY_STRING", "")))
    time.sleep(float(query.get("hold", ["0"])[0]))
    try:
        with upstream:
            with urllib.request.urlopen(UPSTREAM, timeout=5) as r:
                body = r.read()
    except lb.CircuitOpenError as e:
        retry = "0" if e.retry_after is None else str(math.ceil(e.retry_after.total_seconds()))
        start_response("503 Service Unavailable", [("X-Worker-Pid", pid), ("Retry-After", retry)])
        return [b"circuit open\n"]
    except (urllib.error.URLError, OSError) as e:
        start_response("502 Bad Gateway", [("X-Worker-Pid", pid)])
        return [f"upstream failed: {e}\n".encode()]
    start_response("200 OK", [("X-Worker-Pid", pid)])
    return [body]
