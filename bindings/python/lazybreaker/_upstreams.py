"""Upstreams: the breakers of an HTTP client's upstreams, one per name, and
how one exchange reports to its breaker (docs/http.md). Every client
integration (httpx, requests, aiohttp) holds one; the transitions are the
library's (acquire, report, trip)."""

from __future__ import annotations

import threading
from typing import Callable, Generic, Protocol, TypeVar

from ._breaker import Breaker, Permit
from ._config import Config
from ._registry import Registry
from .http import retry_after_ns

Req = TypeVar("Req")

_TRIPPING_STATUSES = (429, 503)


class Headers(Protocol):
    def get(self, key: str) -> str | None: ...


def origin(url: str) -> str:
    """The scheme and authority of an absolute URL's text, as written
    (`http://user@Host:8080`): a key that determines the upstream, found
    without parsing the URL."""
    end = url.find("/", url.find("//") + 2)
    return url if end < 0 else url[:end]


class Upstreams(Generic[Req]):
    """Breakers by upstream, made on first use with one `config` in
    `registry` (default: the process's). `name(request)` names a request's
    breaker; without it, `default_name(request)` (the convention's name)
    names it once per origin (`url_text(request)`), since parsing a URL on
    every request would cost more than the breaker."""

    __slots__ = ("_registry", "_config", "_name", "_default_name", "_url_text", "_breakers", "_lock")

    def __init__(self, registry: Registry | None, config: Config | None, name: Callable[[Req], str] | None,
                 default_name: Callable[[Req], str], url_text: Callable[[Req], str]) -> None:
        if registry is not None and not isinstance(registry, Registry):
            raise TypeError(f"lazybreaker: registry: expected a lazybreaker.Registry, got {type(registry).__name__}")
        if config is not None and not isinstance(config, Config):
            raise TypeError(f"lazybreaker: config: expected a lazybreaker.Config, got {type(config).__name__}")
        if name is not None and not callable(name):
            raise TypeError(f"lazybreaker: name: expected a function of the request, got {type(name).__name__}")
        self._registry = registry
        self._config = config
        self._name = name
        self._default_name = default_name
        self._url_text = url_text
        self._breakers: dict[str, Breaker] = {}  # by the user's name, or by origin
        self._lock = threading.Lock()

    def breaker(self, request: Req) -> Breaker:
        """The breaker of the request's upstream."""
        key = origin(self._url_text(request)) if self._name is None else self._name(request)
        b = self._breakers.get(key)
        if b is not None:
            return b
        name = self._default_name(request) if self._name is None else key
        if not isinstance(name, str) or not name:
            raise TypeError(f"lazybreaker: name: the function must return a non-empty str, got {name!r}")
        registry = self._registry or Registry.default()
        b = registry.get_or_create(name, self._config)
        with self._lock:
            return self._breakers.setdefault(key, b)

    @staticmethod
    def settle(breaker: Breaker, permit: Permit, status: int, headers: Headers) -> None:
        """Reports a response: 5xx a failure, else a success; a 429 or 503
        with a Retry-After in the future then trips the breaker for exactly
        that long."""
        if status >= 500:
            permit.failure()
        else:
            permit.success()
        if status in _TRIPPING_STATUSES:
            wait = retry_after_ns(headers.get("Retry-After"))
            if wait is not None:
                breaker.trip_ns(wait)
