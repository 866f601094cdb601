"""The convention's two readable rules (lazybreaker.http): an upstream's
breaker name, as Go's BreakerName writes it (the same vectors as
bindings/go/http_test.go), and Retry-After."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import lazybreaker as lb
from lazybreaker.http import breaker_name, retry_after_ns

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.mark.parametrize("url, name", [
    ("http://example.com/a", "http/example.com:80"),
    ("https://example.com", "http/example.com:443"),
    ("HTTPS://Example.COM:8443/x?y#z", "http/example.com:8443"),
    ("ws://example.com", "http/example.com:80"),
    ("wss://example.com", "http/example.com:443"),
    ("http://[::1]:8080/", "http/[::1]:8080"),
    ("https://[2001:DB8::1]/", "http/[2001:db8::1]:443"),
    ("http://127.0.0.1/", "http/127.0.0.1:80"),
    ("http://Bücher.example/", "http/xn--bcher-kva.example:80"),
    ("https://MÜNCHEN.de/", "http/xn--mnchen-3ya.de:443"),
    ("http://例え.テスト/", "http/xn--r8jz45g.xn--zckzah:80"),
    ("https://user:pw@api.example.com:444/", "http/api.example.com:444"),
])
def test_an_upstream_is_named_http_host_port(url: str, name: str) -> None:
    assert breaker_name(url) == name


@pytest.mark.parametrize("url", ["/relative", "http://", "not a url"])
def test_a_url_without_a_host_is_refused_by_name(url: str) -> None:
    with pytest.raises(ValueError, match="lazybreaker: url: expected an absolute URL"):
        breaker_name(url)


def test_a_port_that_is_no_number_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="lazybreaker: url: the port"):
        breaker_name("http://example.com:http/")


def test_a_url_that_is_no_str_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="lazybreaker: url: expected str"):
        breaker_name(b"http://example.com")  # type: ignore[arg-type]


def test_retry_after_in_seconds() -> None:
    assert retry_after_ns("7") == 7_000_000_000
    assert retry_after_ns(" 120 ") == 120_000_000_000


def test_retry_after_as_an_http_date_is_the_wait_until_then() -> None:
    assert retry_after_ns("Fri, 02 Jan 2026 03:05:35 GMT", NOW) == 90_000_000_000


@pytest.mark.parametrize("value", [None, "", "0", "-5", "1.5", "soon", "Fri, 02 Jan 2026 03:04:05 GMT",
                                   "Thu, 01 Jan 2026 00:00:00 GMT"])
def test_retry_after_absent_unreadable_or_not_in_the_future_is_none(value: str | None) -> None:
    assert retry_after_ns(value, NOW) is None


def test_retry_after_is_capped_by_the_longest_open_duration() -> None:
    longest = int(lb.FIELDS["open_duration"].hi)
    assert retry_after_ns("99999999999") == longest
    far = NOW + timedelta(days=4000)
    assert retry_after_ns(far.strftime("%a, %d %b %Y %H:%M:%S GMT"), NOW) == longest
