"""Threads: one breaker object used by many threads at once reports each
entry once; the GIL is released while Registry.open waits behind another
process's lock on the file, and held by nothing else longer than a call."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import lazybreaker as lb

THREADS = 4
CALLS = 5000


def test_one_breaker_in_many_threads_counts_every_entry_once() -> None:
    reg = lb.Registry.manual_clock()
    b = reg.get_or_create("threads", lb.Config(failure_threshold=60000))

    @b
    def work(i: int) -> int:
        if i % 5 == 0:
            raise ValueError(i)
        return i

    def run() -> None:
        for i in range(CALLS):
            try:
                if i % 2:
                    with b:
                        if i % 5 == 0:
                            raise ValueError(i)
                else:
                    work(i)
            except ValueError:
                pass

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = b.stats()
    assert s.admitted == THREADS * CALLS
    assert s.failures == THREADS * (CALLS // 5)
    assert s.successes == THREADS * CALLS - s.failures


def test_a_trip_in_one_thread_is_seen_by_every_other() -> None:
    reg = lb.Registry.manual_clock()
    b = reg.get_or_create("seen", lb.Config(failure_threshold=1, open_duration=60))
    b.acquire().failure()
    seen: list[str] = []

    def look() -> None:
        seen.append("rejected" if b.try_acquire() is None else "admitted")

    threads = [threading.Thread(target=look) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["rejected"] * THREADS


HOLD = """
import fcntl, sys, time
fd = open(sys.argv[1], "rb+")
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_registry_open_releases_the_gil_while_it_waits_for_the_files_lock(tmp_path: Path) -> None:
    path = tmp_path / "locked.lbr"
    lb.Registry.open(path).close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), "1.0"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        ticks = 0
        done = threading.Event()

        def count() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                time.sleep(0.001)

        counter = threading.Thread(target=count)
        counter.start()
        start = time.monotonic()
        before = ticks
        reg = lb.Registry.open(path, create=False)  # waits until the holder lets go
        waited = time.monotonic() - start
        during = ticks - before
        done.set()
        counter.join()
        reg.close()
    finally:
        holder.kill()
        holder.wait()
    assert waited >= 0.5, f"the open did not wait for the lock ({waited:.3f} s)"
    # with the GIL held across the wait, the counter would not tick at all
    assert during >= 10, f"only {during} ticks in {waited:.3f} s: the GIL was held"
