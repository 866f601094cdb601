"""What the server middleware (lazybreaker.asgi, lazybreaker.wsgi) share:
which breaker guards a request, and the 503 they answer while it is open,
with the same headers and RFC 9457 problem+json body in every language
(docs/http.md)."""

from __future__ import annotations

import json
import math
from typing import Callable, NamedTuple, TypeVar, Union

from ._breaker import Breaker
from ._errors import CircuitOpenError


Req = TypeVar("Req")
BreakerChoice = Union[Breaker, Callable[[Req], Union[Breaker, None]]]
"""A middleware's breaker: one for every request, or a function of the
request (an ASGI scope, a WSGI environ) choosing one, or None to let the
request through unguarded."""


def breaker_picker(breaker: BreakerChoice[Req]) -> Callable[[Req], Breaker | None]:
    if isinstance(breaker, Breaker):
        one = breaker
        return lambda _: one
    if callable(breaker):
        return breaker
    raise TypeError(f"lazybreaker: breaker: expected a lazybreaker.Breaker or a function of the request, "
                    f"got {type(breaker).__name__}")


class Unavailable(NamedTuple):
    headers: list[tuple[str, str]]
    body: bytes


def unavailable(breaker: Breaker, rejected: CircuitOpenError, path: str) -> Unavailable:
    """Retry-After in whole seconds, rounded up (at least 1; none when
    forced open) and the problem: type, title, status, detail, instance
    (the path), circuit, state, retryAfter (seconds or null)."""
    state = breaker.state
    name = breaker.name
    headers = [("content-type", "application/problem+json"), ("cache-control", "no-store")]
    ns = rejected.retry_after_ns
    seconds: int | None = None
    if ns is None:
        detail = f"The circuit '{name}' is forced open until an operator resets it."
    else:
        seconds = max(1, math.ceil(ns / 1e9))
        detail = f"The circuit '{name}' is {state}: retry after {seconds} s."
        headers.append(("retry-after", str(seconds)))
    problem = {"type": "about:blank", "title": "Service Unavailable", "status": 503, "detail": detail,
               "instance": path, "circuit": name, "state": state, "retryAfter": seconds}
    body = json.dumps(problem).encode()
    headers.append(("content-length", str(len(body))))
    return Unavailable(headers, body)
