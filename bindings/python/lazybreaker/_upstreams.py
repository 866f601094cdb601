"""Upstreams: the breakers of an HTTP client's upstreams, one per name, and
how one exchange reports to its breaker (docs/http.md). Every client
integration (httpx, requests, aiohttp) holds one; the transitions are the
library's (acquire, report, trip)."""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

from ._breaker import Breaker, Permit
from ._config import Config
from ._registry import Registry
from .http import retry_after_ns

Req = TypeVar("Req")

_TRIPPING_STATUSES = (429, 503)


class Upstreams(Generic[Req]):
    """Breakers by upstream name, made on first use with one `config` in
    `registry` (default: the process's). `name(request)` names a request's
    breaker; `default_name(request)` is the convention's name."""

    __slots__ = ("_registry", "_config", "_name", "_breakers", "_lock")

    def __init__(self, registry: Registry | None, config: Config | None,
                 name: Callable[[Req], str] | None, default_name: Callable[[Req], str]) -> None:
        if registry is not None and not isinstance(registry, Registry):
            raise TypeError(f"lazybreaker: registry: expected a lazybreaker.Registry, got {type(registry).__name__}")
        if config is not None and not isinstance(config, Config):
            raise TypeError(f"lazybreaker: config: expected a lazybreaker.Config, got {type(config).__name__}")
        if name is not None and not callable(name):
            raise TypeError(f"lazybreaker: name: expected a function of the request, got {type(name).__name__}")
        self._registry = registry
        self._config = config
        self._name = name or default_name
        self._breakers: dict[str, Breaker] = {}
        self._lock = threading.Lock()

    def breaker(self, request: Req) -> Breaker:
        """The breaker of the request's upstream."""
        name = self._name(request)
        b = self._breakers.get(name)
        if b is not None:
            return b
        if not isinstance(name, str) or not name:
            raise TypeError(f"lazybreaker: name: the function must return a non-empty str, got {name!r}")
        registry = self._registry or Registry.default()
        b = registry.get_or_create(name, self._config)
        with self._lock:
            return self._breakers.setdefault(name, b)

    @staticmethod
    def settle(breaker: Breaker, permit: Permit, status: int, retry_after: str | None) -> None:
        """Reports a response: 5xx a failure, else a success; a 429 or 503
        with a Retry-After in the future then trips the breaker for exactly
        that long."""
        if status >= 500:
            permit.failure()
        else:
            permit.success()
        if status in _TRIPPING_STATUSES:
            wait = retry_after_ns(retry_after)
            if wait is not None:
                breaker.trip_ns(wait)
