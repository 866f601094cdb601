"""The server side of the HTTP convention (docs/http.md) for the ASGI 3
middleware (over a Starlette app) and the WSGI middleware: while the
breaker is open, 503 with Retry-After and a problem+json body, the app not
called; a 5xx or an exception is a failure, anything else a success. The
apps are driven in-process by httpx's ASGI and WSGI transports."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Iterable, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import lazybreaker as lb
import lazybreaker.asgi as lb_asgi
import lazybreaker.wsgi as lb_wsgi


class Boom(Exception):
    pass


def asgi_app(calls: list[str]) -> Any:
    async def endpoint(request: Request) -> PlainTextResponse:
        calls.append(request.url.path)
        if request.url.path == "/raise":
            raise Boom()
        return PlainTextResponse("ok", status_code=int(request.path_params["code"]))

    return Starlette(routes=[Route("/status/{code:int}", endpoint), Route("/raise", endpoint)])


def wsgi_app(calls: list[str]) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ["PATH_INFO"]
        calls.append(path)
        if path == "/raise":
            raise Boom()
        start_response(f"{path.rsplit('/', 1)[1]} X", [("content-type", "text/plain")])
        return [b"ok"]

    return app


class AsgiServer:
    def __init__(self, breaker: Any) -> None:
        self.calls: list[str] = []
        self.app = lb_asgi.Shed(asgi_app(self.calls), breaker)

    def get(self, path: str) -> httpx.Response:
        async def run() -> httpx.Response:
            async with httpx.AsyncClient(app=self.app, base_url="http://test") as client:
                return await client.get(path)

        return asyncio.run(run())


class WsgiServer:
    def __init__(self, breaker: Any) -> None:
        self.calls: list[str] = []
        self.app = lb_wsgi.Shed(wsgi_app(self.calls), breaker)

    def get(self, path: str) -> httpx.Response:
        with httpx.Client(app=self.app, base_url="http://test") as client:
            return client.get(path)


SERVERS: dict[str, Callable[[Any], Any]] = {"asgi": AsgiServer, "wsgi": WsgiServer}


@pytest.fixture
def reg() -> Iterator[lb.Registry]:
    with lb.Registry.manual_clock() as r:
        yield r


@pytest.fixture(params=sorted(SERVERS))
def serve(request: pytest.FixtureRequest) -> Callable[[Any], Any]:
    return SERVERS[request.param]


@pytest.fixture
def api(reg: lb.Registry) -> lb.Breaker:
    return reg.get_or_create("api", lb.Config(failure_threshold=2, open_duration=10))


def test_an_open_breaker_answers_503_with_retry_after_and_a_problem(serve: Any, api: lb.Breaker) -> None:
    server = serve(api)
    api.trip(7.2)
    r = server.get("/status/200")
    assert r.status_code == 503 and server.calls == []
    assert r.headers["retry-after"] == "8"  # whole seconds, rounded up
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json() == {"type": "about:blank", "title": "Service Unavailable", "status": 503,
                        "detail": "The circuit 'api' is open: retry after 8 s.", "instance": "/status/200",
                        "circuit": "api", "state": "open", "retryAfter": 8}


def test_a_forced_open_breaker_answers_503_without_retry_after(serve: Any, api: lb.Breaker) -> None:
    server = serve(api)
    api.force_open()
    r = server.get("/status/200")
    assert r.status_code == 503 and "retry-after" not in r.headers
    problem = json.loads(r.content)
    assert problem["retryAfter"] is None and problem["state"] == "forced_open"
    assert problem["detail"] == "The circuit 'api' is forced open until an operator resets it."


def test_a_5xx_response_is_a_failure(serve: Any, api: lb.Breaker) -> None:
    server = serve(api)
    assert [server.get("/status/500").status_code for _ in range(3)] == [500, 500, 503]
    assert server.calls == ["/status/500"] * 2 and api.stats().failures == 2


def test_any_other_response_is_a_success(serve: Any, api: lb.Breaker) -> None:
    server = serve(api)
    for code in (200, 302, 404, 429, 499):
        assert server.get(f"/status/{code}").status_code == code
    s = api.stats()
    assert (s.successes, s.failures, api.state) == (5, 0, "closed")


def test_an_exception_in_the_app_is_a_failure_and_propagates(serve: Any, api: lb.Breaker) -> None:
    server = serve(api)
    for _ in range(2):
        with pytest.raises(Boom):
            server.get("/raise")
    assert api.state == "open"


def test_the_breaker_after_its_open_duration_admits_the_probe(serve: Any, api: lb.Breaker,
                                                             reg: lb.Registry) -> None:
    server = serve(api)
    api.trip()
    assert server.get("/status/200").status_code == 503
    reg.advance(10)
    assert server.get("/status/200").status_code == 200
    assert api.state == "closed"


def test_a_function_chooses_the_breaker_and_none_leaves_a_request_unguarded(serve: Any, api: lb.Breaker) -> None:
    def choose(request: Any) -> lb.Breaker | None:
        path = request["path"] if "path" in request else request["PATH_INFO"]
        return api if path.startswith("/status/5") else None

    server = serve(choose)
    api.force_open()
    assert server.get("/status/200").status_code == 200
    assert server.get("/status/500").status_code == 503


@pytest.mark.parametrize("kind", sorted(SERVERS))
def test_bad_arguments_are_refused_by_name(kind: str, api: lb.Breaker) -> None:
    shed = lb_asgi.Shed if kind == "asgi" else lb_wsgi.Shed
    with pytest.raises(TypeError, match="lazybreaker: breaker: expected a lazybreaker.Breaker"):
        shed(asgi_app([]), "api")
    with pytest.raises(TypeError, match="lazybreaker: app: expected"):
        shed("app", api)  # type: ignore[arg-type]


# ---- ASGI alone ----------------------------------------------------------------------

def test_asgi_scopes_other_than_http_pass_through(api: lb.Breaker) -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    api.force_open()
    asyncio.run(lb_asgi.Shed(app, api)({"type": "lifespan"}, None, None))  # type: ignore[arg-type]
    assert seen == ["lifespan"] and api.stats().rejected == 0


def test_asgi_a_request_cancelled_by_the_server_is_ignored(api: lb.Breaker) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.Event().wait()  # the client went away meanwhile

    async def run() -> None:
        task = asyncio.create_task(lb_asgi.Shed(app, api)({"type": "http", "path": "/"}, None, None))  # type: ignore
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    s = api.stats()
    assert (s.ignored, s.failures, s.successes) == (1, 0, 0)


def test_asgi_an_app_that_sends_no_response_is_a_failure(api: lb.Breaker) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        return None

    asyncio.run(lb_asgi.Shed(app, api)({"type": "http", "path": "/"}, None, None))  # type: ignore[arg-type]
    assert api.stats().failures == 1


# ---- WSGI alone ----------------------------------------------------------------------

def test_wsgi_a_body_that_starts_its_response_late_is_judged_by_that_response(api: lb.Breaker) -> None:
    def app(environ: Any, start_response: Any) -> Iterator[bytes]:
        start_response("503 Service Unavailable", [])
        yield b"late"

    for _ in range(2):
        with httpx.Client(app=lb_wsgi.Shed(app, api), base_url="http://test") as client:
            assert client.get("/").status_code == 503
    assert api.state == "open" and api.stats().failures == 2


def test_wsgi_an_exception_while_the_body_is_produced_is_a_failure(api: lb.Breaker) -> None:
    def app(environ: Any, start_response: Any) -> Iterator[bytes]:
        start_response("200 OK", [])
        yield b"part"
        raise Boom()

    with httpx.Client(app=lb_wsgi.Shed(app, api), base_url="http://test") as client:
        with pytest.raises(Boom):
            client.get("/")
    s = api.stats()
    assert (s.failures, s.successes) == (1, 0)


def test_wsgi_the_body_is_closed_and_reported_once(api: lb.Breaker) -> None:
    closed: list[bool] = []

    class Body:
        def __iter__(self) -> Iterator[bytes]:
            yield b"ok"

        def close(self) -> None:
            closed.append(True)

    def app(environ: Any, start_response: Any) -> Body:
        start_response("200 OK", [])
        return Body()

    def start_response(status: str, headers: Any, exc_info: Any = None) -> Any:
        return lambda data: None

    body = lb_wsgi.Shed(app, api)({"PATH_INFO": "/"}, start_response)
    assert b"".join(body) == b"ok"
    body.close()  # type: ignore[attr-defined]
    body.close()  # type: ignore[attr-defined]
    assert closed == [True, True] and api.stats().successes == 1


def test_starlettes_add_middleware_takes_the_asgi_shed(api: lb.Breaker) -> None:
    app = asgi_app([])
    app.add_middleware(lb_asgi.Shed, breaker=api)  # as FastAPI's app.add_middleware
    api.force_open()

    async def run() -> httpx.Response:
        async with httpx.AsyncClient(app=app, base_url="http://test") as client:
            return await client.get("/status/200")

    assert asyncio.run(run()).status_code == 503
