"""A pybreaker-shaped breaker in pure Python, the bench's baseline: one lock
per breaker and a time.monotonic() per call, as pybreaker takes its lock and
reads the clock (pybreaker reads datetime.now(); monotonic is the cheaper
of the two). Consecutive failures, or the failure rate over the last N calls
(a ring under the same lock, resilience4j's shape). Not a product: just the
shape the issue asks to measure against."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any, Callable


class BaselineOpenError(Exception):
    pass


class BaselineBreaker:
    def __init__(self, fail_max: int = 5, reset_timeout: float = 30.0, window: int = 0,
                 rate: float = 0.5, minimum: int = 100) -> None:
        self._lock = threading.Lock()
        self.fail_max = fail_max
        self.reset_timeout = reset_timeout
        self.state = "closed"
        self.fail_counter = 0
        self.opened_at = 0.0
        self.window = window
        self.ring = [False] * window
        self.pos = 0
        self.filled = 0
        self.failed = 0
        self.rate = rate
        self.minimum = minimum

    def _before(self) -> None:
        now = time.monotonic()
        with self._lock:
            if self.state == "open":
                if now - self.opened_at < self.reset_timeout:
                    raise BaselineOpenError("open")
                self.state = "half_open"

    def _record(self, failed: bool) -> None:
        now = time.monotonic()
        with self._lock:
            if self.window:
                if self.filled == self.window:
                    self.failed -= self.ring[self.pos]
                else:
                    self.filled += 1
                self.ring[self.pos] = failed
                self.failed += failed
                self.pos = (self.pos + 1) % self.window
                trip = self.filled >= self.minimum and self.failed >= self.rate * self.filled
            else:
                self.fail_counter = self.fail_counter + 1 if failed else 0
                trip = self.fail_counter >= self.fail_max
            if self.state == "half_open":
                trip = failed
                if not failed:
                    self.state = "closed"
            if trip:
                self.state = "open"
                self.opened_at = now

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._before()
        try:
            result = fn(*args, **kwargs)
        except Exception:
            self._record(True)
            raise
        self._record(False)
        return result

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self.call(fn, *args, **kwargs)

        return wrapper
