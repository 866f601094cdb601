"""The HTTP convention every language's integration follows (docs/http.md):
the name of an upstream's breaker, and how a Retry-After header reads.

    >>> breaker_name("https://Example.COM/v1")
    'http/example.com:443'

The clients (lazybreaker.httpx, lazybreaker.requests, lazybreaker.aiohttp)
and the server middleware (lazybreaker.asgi, lazybreaker.wsgi) build on
these two rules, so a Python job, a Go sidecar and PHP workers sharing a
registry file share one breaker per upstream.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from ._config import FIELDS

_DEFAULT_PORTS = {"https": 443, "wss": 443}
_MAX_OPEN_NS = int(FIELDS["open_duration"].hi)
_MIN_OPEN_NS = int(FIELDS["open_duration"].lo)


def breaker_name_of(scheme: str, host: str, port: int | None) -> str:
    """`http/<host>:<port>` from a URL's parts: the host lowercased, each
    non-ASCII label in its punycode form with the "xn--" prefix (IDNA's
    ToASCII, as every binding encodes it), an IPv6 address in brackets, the
    port always written (443 for https and wss, else 80, when absent)."""
    host = host.strip("[]").lower()
    if port is None:
        port = _DEFAULT_PORTS.get(scheme.lower(), 80)
    return f"http/{_ascii_host(host)}:{port}"


def breaker_name(url: str) -> str:
    """The breaker name of an absolute URL (a str); ValueError naming `url`
    when it has no host or its port is not a number."""
    if not isinstance(url, str):
        raise TypeError(f"lazybreaker: url: expected str, got {type(url).__name__}")
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"lazybreaker: url: expected an absolute URL with a host, got {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"lazybreaker: url: the port is not a number 0..65535, got {url!r}") from None
    return breaker_name_of(parts.scheme, parts.hostname, port)


def _ascii_host(host: str) -> str:
    if ":" in host:
        return f"[{host}]"
    if host.isascii():
        return host
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                    for label in host.split("."))


def retry_after_ns(value: str | None, now: datetime | None = None) -> int | None:
    """A Retry-After header's wait in nanoseconds: delta-seconds or an HTTP
    date (from `now`, default the wall clock), capped by the longest open
    duration the library takes; None when absent, unreadable or not in the
    future."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        seconds = int(value)
        if seconds == 0:
            return None
        return min(seconds * 1_000_000_000, _MAX_OPEN_NS)
    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)  # an HTTP date is GMT
    wait = at - (now or datetime.now(timezone.utc))
    ns = (wait.days * 86400 + wait.seconds) * 1_000_000_000 + wait.microseconds * 1000
    if ns <= 0:
        return None
    return min(max(ns, _MIN_OPEN_NS), _MAX_OPEN_NS)
