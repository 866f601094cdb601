"""WSGI middleware shedding load while a breaker is open (docs/http.md).

    app = lazybreaker.wsgi.Shed(app, registry.get_or_create("api"))

While the breaker is open the app is not called: the answer is 503 with
Retry-After and an application/problem+json body. A response of 500 or
more, or an exception in the app or while its body is produced (which
propagates), is a failure; any other response a success. The outcome is
reported once the server has closed the body, since a WSGI app may start
its response only as the body is iterated.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional

from ._breaker import Permit, report_raised
from ._errors import CircuitOpenError
from ._shed import BreakerChoice, breaker_picker, unavailable

Environ = dict[str, Any]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


class Shed:
    """Wraps a WSGI app; `breaker` is a lazybreaker.Breaker or a function of
    the environ returning one (or None: unguarded)."""

    def __init__(self, app: WSGIApp, breaker: BreakerChoice[Environ]) -> None:
        if not callable(app):
            raise TypeError(f"lazybreaker: app: expected a WSGI application, got {type(app).__name__}")
        self.app = app
        self._pick = breaker_picker(breaker)

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        breaker = self._pick(environ)
        if breaker is None:
            return self.app(environ, start_response)
        try:
            permit = breaker.acquire()
        except CircuitOpenError as rejected:
            answer = unavailable(breaker, rejected, environ.get("PATH_INFO", ""))
            start_response("503 Service Unavailable", answer.headers)
            return [answer.body]
        body = _ReportedBody(permit, start_response)
        try:
            body.result = self.app(environ, body.start_response)
        except BaseException as e:
            body.report(e)
            raise
        return body


class _ReportedBody:
    """The app's body, reporting the call once the server closes it."""

    def __init__(self, permit: Permit, start_response: StartResponse) -> None:
        self._permit = permit
        self._start_response = start_response
        self._status = 0
        self.result: Iterable[bytes] = ()

    def start_response(self, status: str, headers: list[tuple[str, str]],
                       exc_info: Optional[Any] = None) -> Callable[[bytes], object]:
        self._status = int(status[:3])
        return self._start_response(status, headers, exc_info)

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self.result
        except BaseException as e:
            self.report(e)
            raise

    def close(self) -> None:
        try:
            close = getattr(self.result, "close", None)
            if close is not None:
                close()
        finally:
            self.report(None)

    def report(self, error: BaseException | None) -> None:
        if self._permit.reported:
            return
        if error is not None:
            report_raised(self._permit, error)
        elif self._status == 0 or self._status >= 500:
            self._permit.failure()  # no response: the server answers 500
        else:
            self._permit.success()


__all__ = ["Shed"]
