"""Every rule of the HTTP convention (docs/http.md) for every client
integration: httpx's Transport and AsyncTransport, the requests Adapter and
the aiohttp Client, each against a loopback upstream (tests/loopback.py),
breakers in a manual-clock registry."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any, Callable, Iterator

import aiohttp
import httpx
import pytest
import requests
from loopback import Upstream, closed_port_url

import lazybreaker as lb
import lazybreaker.aiohttp as lb_aiohttp
import lazybreaker.httpx as lb_httpx
import lazybreaker.requests as lb_requests

Name = Callable[[Any], str]


class HttpxClient:
    cancellable = False

    def __init__(self, registry: lb.Registry, config: lb.Config | None, name: Name | None) -> None:
        self.client = httpx.Client(transport=lb_httpx.Transport(registry=registry, config=config, name=name))

    def get(self, url: str, timeout: float | None = None) -> int:
        return self.client.get(url, timeout=timeout).status_code

    def close(self) -> None:
        self.client.close()


class RequestsClient:
    cancellable = False

    def __init__(self, registry: lb.Registry, config: lb.Config | None, name: Name | None) -> None:
        self.session = requests.Session()
        self.session.mount("http://", lb_requests.Adapter(registry=registry, config=config, name=name))

    def get(self, url: str, timeout: float | None = None) -> int:
        return self.session.get(url, timeout=timeout).status_code

    def close(self) -> None:
        self.session.close()


class AsyncClient:
    """Runs each request in a loop of its own (asyncio.run)."""

    cancellable = True

    def get(self, url: str, timeout: float | None = None) -> int:
        return asyncio.run(self.get_async(url, timeout))

    async def get_async(self, url: str, timeout: float | None) -> int:
        raise NotImplementedError

    def cancel(self, upstream: Upstream) -> None:
        async def run() -> None:
            task = asyncio.create_task(self.get_async(upstream.base + "/hang", None))
            await asyncio.get_running_loop().run_in_executor(None, upstream.hanging.wait, 30)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(run())

    def close(self) -> None:
        pass


class HttpxAsyncClient(AsyncClient):
    def __init__(self, registry: lb.Registry, config: lb.Config | None, name: Name | None) -> None:
        self.make = lambda: lb_httpx.AsyncTransport(registry=registry, config=config, name=name)

    async def get_async(self, url: str, timeout: float | None) -> int:
        async with httpx.AsyncClient(transport=self.make()) as client:
            return (await client.get(url, timeout=timeout)).status_code


class AiohttpClient(AsyncClient):
    def __init__(self, registry: lb.Registry, config: lb.Config | None, name: Name | None) -> None:
        self.kwargs = {"registry": registry, "config": config, "name": name}

    async def get_async(self, url: str, timeout: float | None) -> int:
        async with aiohttp.ClientSession() as session:
            client = lb_aiohttp.Client(session, **self.kwargs)  # type: ignore[arg-type]
            async with client.get(url, timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                return response.status


CLIENTS = {"httpx": HttpxClient, "httpx_async": HttpxAsyncClient, "requests": RequestsClient,
           "aiohttp": AiohttpClient}


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    u = Upstream()
    yield u
    u.stop()


@pytest.fixture
def reg() -> Iterator[lb.Registry]:
    with lb.Registry.manual_clock() as r:
        yield r


@pytest.fixture(params=sorted(CLIENTS))
def make_client(request: pytest.FixtureRequest, reg: lb.Registry) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def make(failure_threshold: int = 5, name: Name | None = None) -> Any:
        client = CLIENTS[request.param](reg, lb.Config(failure_threshold=failure_threshold, open_duration=10), name)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def breaker(reg: lb.Registry, name: str) -> lb.Breaker:
    b = reg.lookup(name)
    assert b is not None, f"no breaker {name!r}: {[x.name for x in reg.breakers()]}"
    return b


def test_the_breaker_of_a_request_is_named_http_host_port(make_client: Any, upstream: Upstream,
                                                          reg: lb.Registry) -> None:
    assert make_client().get(upstream.base + "/status/200") == 200
    assert [b.name for b in reg.breakers()] == [upstream.breaker_name]
    assert breaker(reg, upstream.breaker_name).stats().successes == 1


def test_requests_to_one_upstream_share_its_breaker_however_written(make_client: Any, upstream: Upstream,
                                                                     reg: lb.Registry) -> None:
    client = make_client()
    port = upstream.server_address[1]
    for url in (f"http://127.0.0.1:{port}/status/200", f"http://127.0.0.1:{port}/status/201?x=1",
                f"HTTP://127.0.0.1:{port}/status/200", f"http://user@127.0.0.1:{port}/status/200"):
        client.get(url)
    assert [b.name for b in reg.breakers()] == [upstream.breaker_name]
    assert breaker(reg, upstream.breaker_name).stats().successes == 4


def test_a_5xx_is_a_failure_and_an_open_breaker_sends_nothing(make_client: Any, upstream: Upstream,
                                                              reg: lb.Registry) -> None:
    client = make_client(failure_threshold=2)
    assert client.get(upstream.base + "/status/500") == 500
    assert client.get(upstream.base + "/status/502") == 502
    with pytest.raises(lb.CircuitOpenError) as e:
        client.get(upstream.base + "/status/200")
    assert e.value.retry_after == timedelta(seconds=10)
    assert e.value.breaker == upstream.breaker_name
    assert upstream.hits == ["/status/500", "/status/502"]


def test_a_4xx_is_the_callers_fault_a_success(make_client: Any, upstream: Upstream, reg: lb.Registry) -> None:
    client = make_client(failure_threshold=1)
    for _ in range(3):
        assert client.get(upstream.base + "/status/404") == 404
    b = breaker(reg, upstream.breaker_name)
    assert b.state == "closed" and b.stats().successes == 3 and b.stats().failures == 0


def test_a_connection_error_is_a_failure(make_client: Any, reg: lb.Registry) -> None:
    url = closed_port_url()
    with pytest.raises(Exception) as e:
        make_client(failure_threshold=1).get(url)
    assert not isinstance(e.value, lb.CircuitOpenError)
    assert breaker(reg, lb.http.breaker_name(url)).state == "open"


def test_a_timeout_is_a_failure(make_client: Any, upstream: Upstream, reg: lb.Registry) -> None:
    with pytest.raises(Exception) as e:
        make_client(failure_threshold=1).get(upstream.base + "/hang", timeout=0.2)
    assert not isinstance(e.value, lb.CircuitOpenError)
    assert breaker(reg, upstream.breaker_name).state == "open"


def test_a_429_with_retry_after_seconds_trips_for_exactly_that_long(make_client: Any, upstream: Upstream,
                                                                     reg: lb.Registry) -> None:
    client = make_client()
    assert client.get(upstream.base + "/status/429?retry_after=7") == 429
    b = breaker(reg, upstream.breaker_name)
    assert b.state == "open" and b.retry_after_ns == 7_000_000_000
    reg.advance(7)
    assert client.get(upstream.base + "/status/200") == 200  # the probe
    assert b.state == "closed"


def test_a_503_with_an_http_date_trips_until_that_date(make_client: Any, upstream: Upstream,
                                                       reg: lb.Registry) -> None:
    date = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=120), usegmt=True)
    assert make_client().get(upstream.base + "/status/503?retry_after=" + date.replace(" ", "%20")) == 503
    b = breaker(reg, upstream.breaker_name)
    assert b.state == "open"
    assert timedelta(seconds=60) < b.retry_after <= timedelta(seconds=120)  # type: ignore[operator]


def test_a_retry_after_unreadable_or_on_another_status_does_not_trip(make_client: Any, upstream: Upstream,
                                                                     reg: lb.Registry) -> None:
    client = make_client()
    assert client.get(upstream.base + "/status/503?retry_after=soon") == 503
    assert client.get(upstream.base + "/status/500?retry_after=7") == 500
    assert client.get(upstream.base + "/status/200?retry_after=7") == 200
    b = breaker(reg, upstream.breaker_name)
    assert b.state == "closed" and b.stats().failures == 2


def test_a_retry_after_beyond_the_librarys_maximum_is_capped(make_client: Any, upstream: Upstream,
                                                             reg: lb.Registry) -> None:
    make_client().get(upstream.base + "/status/429?retry_after=99999999999")
    assert breaker(reg, upstream.breaker_name).retry_after_ns == lb.FIELDS["open_duration"].hi


@pytest.mark.parametrize("kind", sorted(CLIENTS))
def test_clients_opening_one_registry_file_share_each_upstreams_breaker(kind: str, upstream: Upstream,
                                                                        tmp_path: Any) -> None:
    path = tmp_path / "http.lbr"
    config = lb.Config(failure_threshold=5, open_duration=10)
    # two registries on one file: what two processes of any language do
    with lb.Registry.open(path) as first_registry, lb.Registry.open(path) as second_registry:
        first = CLIENTS[kind](first_registry, config, None)
        second = CLIENTS[kind](second_registry, config, None)
        assert first.get(upstream.base + "/status/429?retry_after=60") == 429
        with pytest.raises(lb.CircuitOpenError) as e:
            second.get(upstream.base + "/status/200")
        assert e.value.breaker == upstream.breaker_name
        assert timedelta(seconds=59) < e.value.retry_after <= timedelta(seconds=60)  # type: ignore[operator]
        assert upstream.hits == ["/status/429"]
        first.close()
        second.close()


def test_a_name_function_names_the_breaker(make_client: Any, upstream: Upstream, reg: lb.Registry) -> None:
    make_client(name=lambda _: "inventory").get(upstream.base + "/status/200")
    assert [b.name for b in reg.breakers()] == ["inventory"]


def test_a_name_function_returning_no_name_is_refused_and_nothing_is_sent(
        make_client: Any, upstream: Upstream, reg: lb.Registry) -> None:
    with pytest.raises(TypeError, match="name"):
        make_client(name=lambda _: "").get(upstream.base + "/status/200")
    assert upstream.hits == [] and reg.breakers() == []


def test_a_cancellation_by_the_caller_is_ignored(make_client: Any, upstream: Upstream, reg: lb.Registry) -> None:
    client = make_client(failure_threshold=1)
    if not client.cancellable:
        pytest.skip("a synchronous client cannot be cancelled")
    client.cancel(upstream)
    stats = breaker(reg, upstream.breaker_name).stats()
    assert (stats.ignored, stats.failures) == (1, 0)


def _make_aiohttp_client(**options: Any) -> None:
    async def run() -> None:
        async with aiohttp.ClientSession() as session:
            lb_aiohttp.Client(session, **options)

    asyncio.run(run())


INTEGRATIONS: dict[str, Callable[..., object]] = {
    "httpx": lb_httpx.Transport, "httpx_async": lb_httpx.AsyncTransport, "requests": lb_requests.Adapter,
    "aiohttp": _make_aiohttp_client}


@pytest.mark.parametrize("kind", sorted(INTEGRATIONS))
@pytest.mark.parametrize("option, value", [("registry", "/dev/shm/x.lbr"), ("config", {"failure_threshold": 1}),
                                           ("name", "inventory")])
def test_bad_options_are_refused_by_name(kind: str, option: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"lazybreaker: {option}: "):
        INTEGRATIONS[kind](**{option: value})


def test_the_aiohttp_client_wraps_a_client_session() -> None:
    with pytest.raises(TypeError, match="session"):
        lb_aiohttp.Client(requests.Session())  # type: ignore[arg-type]


def test_the_wrapped_transports_must_be_httpx_transports() -> None:
    with pytest.raises(TypeError, match="transport"):
        lb_httpx.Transport(httpx.AsyncHTTPTransport())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="transport"):
        lb_httpx.AsyncTransport(httpx.HTTPTransport())  # type: ignore[arg-type]


def test_httpx_mock_transport_is_wrapped_as_any_transport(reg: lb.Registry) -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(500)

    transport = lb_httpx.Transport(httpx.MockTransport(answer), registry=reg,
                                   config=lb.Config(failure_threshold=1))
    with httpx.Client(transport=transport) as client:
        assert client.get("https://Bücher.example/x").status_code == 500
        with pytest.raises(lb.CircuitOpenError):
            client.get("https://bücher.example/y")
    assert seen == ["https://xn--bcher-kva.example/x"]
    assert [b.name for b in reg.breakers()] == ["http/xn--bcher-kva.example:443"]


def test_an_aiohttp_url_must_be_absolute(reg: lb.Registry) -> None:
    async def run() -> None:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(ValueError, match="url"):
                await lb_aiohttp.Client(session, registry=reg).get("/relative")

    asyncio.run(run())


def test_aiohttp_raise_for_status_judges_the_status_not_the_exception(upstream: Upstream,
                                                                       reg: lb.Registry) -> None:
    async def run() -> None:
        async with aiohttp.ClientSession(raise_for_status=True) as session:
            client = lb_aiohttp.Client(session, registry=reg, config=lb.Config(failure_threshold=1))
            for _ in range(2):
                with contextlib.suppress(aiohttp.ClientResponseError):
                    await client.get(upstream.base + "/status/404")
            with pytest.raises(aiohttp.ClientResponseError):
                await client.get(upstream.base + "/status/429?retry_after=9")

    asyncio.run(run())
    b = breaker(reg, upstream.breaker_name)
    assert b.stats().successes == 3 and b.retry_after_ns == 9_000_000_000
