"""bench/python: lazybreaker's Python forms side by side with the pure-Python
breakers, in one run: the decorator and the two-step permit against the
`circuitbreaker` package (Debian's python3-circuitbreaker) and a
pybreaker-shaped baseline (baseline.py: a lock and time.monotonic() per
call); consecutive failures and a count window; 1 thread and 4 threads;
OPEN rejections; creating 100,000 breakers. Each figure is the median of
REPEATS runs, in ns per call (for threads: wall time / all calls, so 4
threads on 2 cores under the GIL show contention, not speed-up). The
ratio is the peer's time / lazybreaker's (above 1: lazybreaker is faster).

    python3 bench/python/bench.py [--quick]
(`make bench` runs it with this build's package on PYTHONPATH.)
"""

from __future__ import annotations

import gc
import statistics
import sys
import threading
import time
from typing import Any, Callable

import circuitbreaker

import lazybreaker as lb
from baseline import BaselineBreaker, BaselineOpenError

QUICK = "--quick" in sys.argv
N = 20_000 if QUICK else 200_000
REPEATS = 3 if QUICK else 7
CREATE = 10_000 if QUICK else 100_000
THREADS = 4


def noop() -> None:
    return None


def per_call(run: Callable[[int], None], n: int = N) -> float:
    """Median ns per call of run(n), over REPEATS runs."""
    times = []
    for _ in range(REPEATS):
        gc.collect()
        start = time.perf_counter_ns()
        run(n)
        times.append((time.perf_counter_ns() - start) / n)
    return statistics.median(times)


def loop(f: Callable[[], Any]) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            f()
    return run


def threaded(f: Callable[[], Any]) -> Callable[[int], None]:
    def run(n: int) -> None:
        each = n // THREADS
        # each thread runs `each` calls
        ts = [threading.Thread(target=lambda: loop(f)(each)) for _ in range(THREADS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return run


def rejecting(f: Callable[[], Any], exc: type[BaseException]) -> Callable[[], None]:
    def g() -> None:
        try:
            f()
        except exc:
            pass
    return g


def two_step(b: lb.Breaker) -> Callable[[], None]:
    acquire = b.try_acquire

    def g() -> None:
        p = acquire()
        if p is not None:
            p.success()
    return g


def lazy_breaker(reg: lb.Registry, name: str, window: bool) -> lb.Breaker:
    if window:
        cfg = lb.Config(window_size=100, minimum_calls=100, failure_rate_threshold=0.5, open_duration=30)
    else:
        cfg = lb.Config(failure_threshold=5, open_duration=30)
    return reg.get_or_create(name, cfg)


def rows() -> list[tuple[str, dict[str, float | None]]]:
    reg = lb.Registry.open(capacity=CREATE + 64)
    out: list[tuple[str, dict[str, float | None]]] = []
    floor = per_call(loop(noop))
    out.append(("a plain call (the floor)", {"lazybreaker decorator": floor}))
    for window in (False, True):
        policy = "count window" if window else "consecutive"
        b = lazy_breaker(reg, f"bench-{policy}", window)
        deco = b(noop)
        two = two_step(b)
        cb = None if window else circuitbreaker.CircuitBreaker(failure_threshold=5, recovery_timeout=30,
                                                               name=f"cb-{policy}")(noop)
        base = (BaselineBreaker(window=100, minimum=100) if window else BaselineBreaker(fail_max=5))(noop)
        for threads in (1, THREADS):
            wrap = threaded if threads > 1 else loop
            name = f"CLOSED {policy}, {threads} thread{'s' if threads > 1 else ''}"
            out.append((name, {
                "lazybreaker decorator": per_call(wrap(deco)),
                "lazybreaker two-step": per_call(wrap(two)),
                "circuitbreaker": per_call(wrap(cb)) if cb else None,
                "pybreaker-shaped": per_call(wrap(base)),
            }))
    # OPEN: every call rejected
    b = lazy_breaker(reg, "bench-open", False)
    b.trip(open_for=3600)
    cbo = circuitbreaker.CircuitBreaker(failure_threshold=1, recovery_timeout=3600, name="cb-open")
    cb_f = cbo(noop)
    try:
        with cbo:
            raise IOError()
    except IOError:
        pass
    bo = BaselineBreaker(fail_max=1, reset_timeout=3600)
    try:
        bo.call(lambda: 1 / 0)
    except ZeroDivisionError:
        pass
    out.append(("OPEN rejection, 1 thread", {
        "lazybreaker decorator": per_call(loop(rejecting(b(noop), lb.CircuitOpenError))),
        "lazybreaker two-step": per_call(loop(two_step(b))),
        "circuitbreaker": per_call(loop(rejecting(cb_f, circuitbreaker.CircuitBreakerError))),
        "pybreaker-shaped": per_call(loop(rejecting(bo(noop), BaselineOpenError))),
    }))

    # creating CREATE breakers (each a fresh registry / set of objects)
    def create_lazy(n: int) -> None:
        r = lb.Registry.open(capacity=n + 16)
        cfg = lb.Config(failure_threshold=5, open_duration=30)
        for i in range(n):
            r.get_or_create(f"host-{i}", cfg)
        r.close()

    def create_cb(n: int) -> None:
        keep = [circuitbreaker.CircuitBreaker(failure_threshold=5, recovery_timeout=30, name=f"host-{i}")
                for i in range(n)]
        del keep

    def create_base(n: int) -> None:
        keep = [BaselineBreaker(fail_max=5) for _ in range(n)]
        del keep

    out.append((f"create {CREATE:,} (per breaker)", {
        "lazybreaker decorator": per_call(create_lazy, CREATE),
        "circuitbreaker": per_call(create_cb, CREATE),
        "pybreaker-shaped": per_call(create_base, CREATE),
    }))
    reg.close()
    return out


def fmt(ns: float | None) -> str:
    return "-" if ns is None else (f"{ns:,.0f} ns" if ns < 100_000 else f"{ns / 1000:,.0f} us")


def ratio(peer: float | None, ours: float | None) -> str:
    return "-" if peer is None or not ours else f"{peer / ours:.1f}x"


def main() -> None:
    print(f"bench/python: Python {sys.version.split()[0]}, lazybreaker {lb.__version__}, "
          f"median of {REPEATS} runs of {N:,} calls; ratio = peer / lazybreaker (decorator; two-step)")
    cols = ["lazybreaker decorator", "lazybreaker two-step", "circuitbreaker", "pybreaker-shaped"]
    print("| case | " + " | ".join(cols) + " | circuitbreaker ratio | pybreaker-shaped ratio |")
    print("|---|" + "---|" * (len(cols) + 2))
    for name, r in rows():
        d, t = r.get("lazybreaker decorator"), r.get("lazybreaker two-step")
        cells = [fmt(r.get(c)) for c in cols]
        ratios = []
        for peer in ("circuitbreaker", "pybreaker-shaped"):
            p = r.get(peer)
            ratios.append(ratio(p, d) + ("" if t is None else f"; {ratio(p, t)}"))
        print(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
