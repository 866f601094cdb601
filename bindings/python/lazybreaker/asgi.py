"""ASGI 3 middleware shedding load while a breaker is open (docs/http.md).

    app = lazybreaker.asgi.Shed(app, registry.get_or_create("api"))

While the breaker is open the app is not called: the answer is 503 with
Retry-After and an application/problem+json body. A response of 500 or
more, or an exception in the app (which propagates), is a failure; any
other response a success; a cancelled request (the client went away)
counts as nothing. Other scopes than "http" (websocket, lifespan) pass
through.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, MutableMapping

from ._breaker import report_raised
from ._errors import CircuitOpenError
from ._shed import BreakerChoice, breaker_picker, unavailable

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Shed:
    """Wraps an ASGI 3 app; `breaker` is a lazybreaker.Breaker or a function
    of the scope returning one (or None: unguarded)."""

    def __init__(self, app: ASGIApp, breaker: BreakerChoice[Scope]) -> None:
        if not callable(app):
            raise TypeError(f"lazybreaker: app: expected an ASGI application, got {type(app).__name__}")
        self.app = app
        self._pick = breaker_picker(breaker)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        breaker = self._pick(scope) if scope["type"] == "http" else None
        if breaker is None:
            await self.app(scope, receive, send)
            return
        try:
            permit = breaker.acquire()
        except CircuitOpenError as rejected:
            answer = unavailable(breaker, rejected, scope.get("path", ""))
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(k.encode(), v.encode()) for k, v in answer.headers]})
            await send({"type": "http.response.body", "body": answer.body})
            return
        status = 0

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        except BaseException as e:
            report_raised(permit, e)
            raise
        # No response at all: the server answers 500 for the app.
        if status == 0 or status >= 500:
            permit.failure()
        else:
            permit.success()


__all__ = ["Shed"]
