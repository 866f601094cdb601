"""A requests adapter with one breaker per upstream (docs/http.md).

    session = requests.Session()
    adapter = lazybreaker.requests.Adapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)

While an upstream's breaker is open nothing is sent and the request raises
lazybreaker.CircuitOpenError (retry_after set).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import requests  # type: ignore[import]  # Debian ships requests without stubs
import requests.adapters  # type: ignore[import]

from ._breaker import report_raised
from ._config import Config
from ._registry import Registry
from ._upstreams import Upstreams
from .http import breaker_name


def request_breaker_name(request: requests.PreparedRequest) -> str:
    """The convention's name of a request's upstream."""
    return breaker_name(str(request.url))


def _url_text(request: requests.PreparedRequest) -> str:
    return str(request.url)


class Adapter(requests.adapters.HTTPAdapter):  # type: ignore[misc]
    """requests' HTTPAdapter (every keyword it takes, such as
    pool_maxsize and max_retries, passes through), sending by the breaker
    of each request's upstream: named by `name(request)` (default
    `http/<host>:<port>`), made in `registry` (default: the process's) with
    `config`. Each retry of max_retries is inside one breaker call."""

    def __init__(self, *, registry: Registry | None = None,
                 name: Callable[[requests.PreparedRequest], str] | None = None,
                 config: Config | None = None, **kwargs: Any) -> None:
        self.upstreams: Upstreams[requests.PreparedRequest] = Upstreams(registry, config, name,
                                                                         request_breaker_name, _url_text)
        super().__init__(**kwargs)

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: None | float | tuple[float, float] | tuple[float, None] = None,
             verify: bool | str = True, cert: None | bytes | str | tuple[bytes | str, bytes | str] = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        breaker = self.upstreams.breaker(request)
        permit = breaker.acquire()
        try:
            response = super().send(request, stream=stream, timeout=timeout, verify=verify, cert=cert,
                                    proxies=proxies)
        except BaseException as e:
            report_raised(permit, e)
            raise
        Upstreams.settle(breaker, permit, response.status_code, response.headers)
        return response


__all__ = ["Adapter", "request_breaker_name"]
