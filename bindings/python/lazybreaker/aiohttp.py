"""aiohttp client requests with one breaker per upstream (docs/http.md).

    async with aiohttp.ClientSession() as session:
        client = lazybreaker.aiohttp.Client(session)
        async with client.get("http://inventory:8080/items") as response:
            items = await response.json()

Client wraps a ClientSession the application already has (aiohttp 3.8
warns against subclassing ClientSession and has no client middleware), and
answers as the session does: `client.get(...)`, `post`, `put`, `patch`,
`delete`, `head`, `options` and `request(method, url, ...)` take the
session's keywords and are awaited or used with `async with`. While an
upstream's breaker is open nothing is sent and the call raises
lazybreaker.CircuitOpenError (retry_after set).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Callable, Coroutine, Generator

import aiohttp
from yarl import URL

from ._breaker import report_raised
from ._config import Config
from ._registry import Registry
from ._upstreams import Upstreams
from .http import breaker_name_of


def url_breaker_name(url: URL) -> str:
    """The convention's name of a URL's upstream."""
    return breaker_name_of(url.scheme, url.host or "", url.port)  # yarl fills 80 and 443 in


class Client:
    """Requests of `session` through the breaker of each upstream: named by
    `name(url)` (a yarl.URL; default `http/<host>:<port>`), made in
    `registry` (default: the process's) with `config`. URLs are absolute."""

    def __init__(self, session: aiohttp.ClientSession, *, registry: Registry | None = None,
                 name: Callable[[URL], str] | None = None, config: Config | None = None) -> None:
        if not isinstance(session, aiohttp.ClientSession):
            raise TypeError(f"lazybreaker: session: expected an aiohttp.ClientSession, got {type(session).__name__}")
        self.session = session
        self.upstreams: Upstreams[URL] = Upstreams(registry, config, name, url_breaker_name, str)

    def request(self, method: str, url: str | URL, **kwargs: Any) -> RequestContext:
        return RequestContext(self._request(method, url, kwargs))

    def get(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("GET", url, **kwargs)

    def post(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("POST", url, **kwargs)

    def put(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("DELETE", url, **kwargs)

    def head(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("HEAD", url, **kwargs)

    def options(self, url: str | URL, **kwargs: Any) -> RequestContext:
        return self.request("OPTIONS", url, **kwargs)

    async def _request(self, method: str, url: str | URL, kwargs: dict[str, Any]) -> aiohttp.ClientResponse:
        target = URL(url)
        if not target.is_absolute():
            raise ValueError(f"lazybreaker: url: expected an absolute URL with a host, got {str(url)!r}")
        breaker = self.upstreams.breaker(target)
        permit = breaker.acquire()
        try:
            response = await self.session.request(method, target, **kwargs)
        except aiohttp.ClientResponseError as e:
            # raise_for_status: the answer is still the upstream's (a 4xx
            # is the caller's fault, a 5xx the host's)
            Upstreams.settle(breaker, permit, e.status, e.headers or {})
            raise
        except BaseException as e:
            report_raised(permit, e)
            raise
        Upstreams.settle(breaker, permit, response.status, response.headers)
        return response


class RequestContext:
    """A request, awaited (the response) or entered with `async with` (the
    response, released on exit), as aiohttp's own."""

    __slots__ = ("_coro", "_response")

    def __init__(self, coro: Coroutine[Any, Any, aiohttp.ClientResponse]) -> None:
        self._coro = coro
        self._response: aiohttp.ClientResponse | None = None

    def __await__(self) -> Generator[Any, None, aiohttp.ClientResponse]:
        return self._coro.__await__()

    async def __aenter__(self) -> aiohttp.ClientResponse:
        self._response = await self._coro
        return self._response

    async def __aexit__(self, et: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._response is not None:
            self._response.release()
            await self._response.wait_for_close()


__all__ = ["Client", "RequestContext", "url_breaker_name"]
