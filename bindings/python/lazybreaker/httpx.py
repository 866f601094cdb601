"""httpx transports with one breaker per upstream (docs/http.md).

    client = httpx.Client(transport=lazybreaker.httpx.Transport())
    client = httpx.AsyncClient(transport=lazybreaker.httpx.AsyncTransport())

Each wraps another transport (default httpx.HTTPTransport() or
httpx.AsyncHTTPTransport()). While an upstream's breaker is open nothing is
sent and the request raises lazybreaker.CircuitOpenError (retry_after set).
"""

from __future__ import annotations

from typing import Callable

import httpx

from ._breaker import report_raised
from ._config import Config
from ._registry import Registry
from ._upstreams import Upstreams
from .http import breaker_name_of


def request_breaker_name(request: httpx.Request) -> str:
    """The convention's name of a request's upstream."""
    url = request.url
    return breaker_name_of(url.scheme, url.host, url.port)


def _url_text(request: httpx.Request) -> str:
    return str(request.url)


class Transport(httpx.BaseTransport):
    """An httpx transport that sends through `transport` by the breaker of
    each request's upstream: named by `name(request)` (default
    `http/<host>:<port>`), made in `registry` (default: the process's) with
    `config`."""

    def __init__(self, transport: httpx.BaseTransport | None = None, *, registry: Registry | None = None,
                 name: Callable[[httpx.Request], str] | None = None, config: Config | None = None) -> None:
        if transport is not None and not isinstance(transport, httpx.BaseTransport):
            raise TypeError(f"lazybreaker: transport: expected an httpx.BaseTransport, got {type(transport).__name__}")
        self.upstreams: Upstreams[httpx.Request] = Upstreams(registry, config, name, request_breaker_name,
                                                                     _url_text)
        self._transport = transport or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        breaker = self.upstreams.breaker(request)
        permit = breaker.acquire()
        try:
            response = self._transport.handle_request(request)
        except BaseException as e:
            report_raised(permit, e)
            raise
        Upstreams.settle(breaker, permit, response.status_code, response.headers)
        return response

    def close(self) -> None:
        self._transport.close()


class AsyncTransport(httpx.AsyncBaseTransport):
    """Transport for httpx.AsyncClient; a cancelled request
    (asyncio.CancelledError) counts as nothing."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None, *, registry: Registry | None = None,
                 name: Callable[[httpx.Request], str] | None = None, config: Config | None = None) -> None:
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise TypeError(f"lazybreaker: transport: expected an httpx.AsyncBaseTransport, "
                            f"got {type(transport).__name__}")
        self.upstreams: Upstreams[httpx.Request] = Upstreams(registry, config, name, request_breaker_name,
                                                                     _url_text)
        self._transport = transport or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        breaker = self.upstreams.breaker(request)
        permit = breaker.acquire()
        try:
            response = await self._transport.handle_async_request(request)
        except BaseException as e:
            report_raised(permit, e)
            raise
        Upstreams.settle(breaker, permit, response.status_code, response.headers)
        return response

    async def aclose(self) -> None:
        await self._transport.aclose()


__all__: list[str] = ["AsyncTransport", "Transport", "request_breaker_name"]
