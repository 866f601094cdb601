"""The pre-fork test: gunicorn with 4 sync workers on 127.0.0.1 serves
prefork_app.py, which protects a flaky upstream (a local HTTP server this
test controls) with one breaker in a shared registry file. The failures
counted across the workers trip it once; every worker then answers 503 with
Retry-After without calling the upstream; a `kill -HUP` (every worker
replaced) keeps the state; after the open duration exactly one request
probes the upstream and closes the breaker. Bounded in time (every request
has a timeout, CTest's TIMEOUT the whole), and everything it starts is
stopped. The transcript (requests, statuses, worker pids) goes to
LB_PREFORK_TRANSCRIPT when set."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest

import lazybreaker as lb

HERE = Path(__file__).resolve().parent
WORKERS = 4


class Upstream(http.server.ThreadingHTTPServer):
    """The flaky dependency: 500 or 200 as the test says, counting calls."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), UpstreamHandler)
        self.failing = True
        self.delay = 0.0
        self.calls = 0
        self.lock = threading.Lock()


class UpstreamHandler(http.server.BaseHTTPRequestHandler):
    server: Upstream

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        with self.server.lock:
            self.server.calls += 1
        time.sleep(self.server.delay)
        status = 500 if self.server.failing else 200
        self.send_response(status)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"bad" if self.server.failing else b"ok\n")

    def log_message(self, *args: object) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Transcript:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.start = time.monotonic()

    def note(self, text: str) -> None:
        self.lines.append(f"[{time.monotonic() - self.start:6.2f}s] {text}")

    def save(self) -> None:
        out = os.environ.get("LB_PREFORK_TRANSCRIPT")
        if out:
            Path(out).write_text("\n".join(self.lines) + "\n", encoding="utf-8")


class Pool:
    """The gunicorn master and how to ask it."""

    def __init__(self, tmp: Path, upstream_url: str, transcript: Transcript) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.t = transcript
        env = dict(os.environ, LB_PREFORK_REGISTRY=str(tmp / "app.lbr"), LB_PREFORK_UPSTREAM=upstream_url)
        self.log = open(tmp / "gunicorn.log", "w+b")
        self.master = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", str(WORKERS), "--worker-class", "sync",
             "--bind", f"127.0.0.1:{self.port}", "--chdir", str(HERE), "--timeout", "20",
             "--graceful-timeout", "5", "--log-level", "warning", "prefork_app:app"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def workers(self) -> set[int]:
        """The master's children, from /proc (no ps: under the sanitizer
        builds every child of this test inherits their preloaded runtime)."""
        pid = self.master.pid
        try:
            with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
                return {int(p) for p in f.read().split()}
        except FileNotFoundError:
            return set()

    def wait_for_workers(self, not_these: set[int] = frozenset()) -> set[int]:  # type: ignore[assignment]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.master.poll() is None, self.tail()
            pids = self.workers()
            if len(pids) == WORKERS and not pids & not_these:
                try:
                    self.get("/pid")
                    return pids
                except OSError:
                    pass
            time.sleep(0.1)
        raise AssertionError(f"gunicorn's {WORKERS} workers did not come up\n{self.tail()}")

    def get(self, path: str) -> tuple[int, str, str | None]:
        """(status, worker pid, Retry-After)"""
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as r:
                return r.status, r.headers["X-Worker-Pid"], r.headers["Retry-After"]
        except urllib.error.HTTPError as e:
            return e.code, e.headers["X-Worker-Pid"], e.headers["Retry-After"]

    def burst(self, n: int, hold: float, what: str) -> list[tuple[int, str, str | None]]:
        """n requests at once, each holding its worker `hold` seconds first:
        with WORKERS of them, each worker takes one."""
        with ThreadPoolExecutor(n) as ex:
            results = list(ex.map(lambda _: self.get(f"/call?hold={hold}"), range(n)))
        for status, pid, retry in results:
            self.t.note(f"GET /call ({what}) -> {status} worker {pid}" + (f" Retry-After: {retry}" if retry else ""))
        return results

    def tail(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.master.poll() is None:
            self.master.send_signal(signal.SIGTERM)
            try:
                self.master.wait(10)
            except subprocess.TimeoutExpired:
                self.master.kill()
                self.master.wait(5)
        for pid in self.workers():  # none should be left; never leave one
            os.kill(pid, signal.SIGKILL)
        self.log.close()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_gunicorn_workers_share_one_breaker_across_failures_restarts_and_the_probe(
        tmp_path: Path, upstream: Upstream) -> None:
    t = Transcript()
    url = f"http://127.0.0.1:{upstream.server_address[1]}/"
    pool = Pool(tmp_path, url, t)
    try:
        pids = pool.wait_for_workers()
        t.note(f"gunicorn master {pool.master.pid}, {WORKERS} sync workers {sorted(pids)} on {pool.base}")
        shared = lb.Registry.open(tmp_path / "app.lbr", create=False)
        breaker = shared.lookup("upstream")
        assert breaker is not None and breaker.state == "closed"

        # 1. the upstream fails; one failing request per worker trips the breaker once
        upstream.failing, upstream.delay = True, 0.0
        t.note("upstream now answers 500")
        first = pool.burst(WORKERS, 1.0, "upstream failing")
        assert [s for s, _, _ in first] == [502] * WORKERS
        assert {int(p) for _, p, _ in first} == pids, "the failures were not spread over every worker"
        assert upstream.calls == WORKERS
        t.note(f"upstream calls so far: {upstream.calls}")
        stats = breaker.stats()
        t.note(f"breaker {breaker.state}, trips={stats.trips} failures={stats.failures} "
               f"retry_after={breaker.retry_after}")
        assert breaker.state == "open" and stats.trips == 1 and stats.failures == WORKERS

        # 2. every worker answers 503 + Retry-After without calling the upstream
        rejected = pool.burst(WORKERS, 0.5, "breaker open")
        assert [s for s, _, _ in rejected] == [503] * WORKERS
        assert {int(p) for _, p, _ in rejected} == pids
        assert all(r is not None and 1 <= int(r) <= 5 for _, _, r in rejected)
        assert upstream.calls == WORKERS, "an open breaker let a call through"
        t.note(f"upstream calls so far: {upstream.calls}")

        # 3. kill -HUP: gunicorn replaces every worker; the state stays
        os.kill(pool.master.pid, signal.SIGHUP)
        new_pids = pool.wait_for_workers(not_these=pids)
        t.note(f"kill -HUP {pool.master.pid}: new workers {sorted(new_pids)}")
        assert not new_pids & pids
        after_hup = pool.burst(WORKERS, 0.5, "after HUP")
        assert [s for s, _, _ in after_hup] == [503] * WORKERS
        assert {int(p) for _, p, _ in after_hup} == new_pids
        assert upstream.calls == WORKERS and breaker.stats().trips == 1
        t.note(f"upstream calls so far: {upstream.calls}; trips={breaker.stats().trips}")

        # 4. after the open duration, exactly one request probes (the upstream
        #    is slow, so the others arrive while the probe is in flight)
        upstream.failing, upstream.delay = False, 1.0
        t.note("upstream now answers 200, slowly (1 s)")
        wait = breaker.retry_after
        assert wait is not None
        time.sleep(wait.total_seconds() + 0.05)
        t.note(f"open duration over: breaker {breaker.state}, retry_after={breaker.retry_after}")
        probe = pool.burst(WORKERS, 0.0, "probe window")
        statuses = sorted(s for s, _, _ in probe)
        assert statuses == [200] + [503] * (WORKERS - 1), statuses
        assert upstream.calls == WORKERS + 1, "not exactly one probe"
        assert breaker.state == "closed"
        t.note(f"breaker {breaker.state}; upstream calls in all: {upstream.calls}")

        # 5. closed again: every worker calls the upstream
        upstream.delay = 0.0
        healthy = pool.burst(WORKERS, 0.3, "closed again")
        assert [s for s, _, _ in healthy] == [200] * WORKERS
        shared.close()
    finally:
        pool.stop()
        t.note("gunicorn stopped")
        t.save()
    assert pool.master.returncode is not None
