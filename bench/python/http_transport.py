"""bench/python/http_transport.py: what lazybreaker.httpx.Transport adds to
one request, beside the bare transport it wraps.

Two measures, each the median of REPEATS runs:
- over a loopback round trip (httpx.Client, keep-alive, a minimal HTTP/1.1
  server in a thread answering 200 at once): ns per request, bare
  httpx.HTTPTransport and wrapped, the runs interleaved; the ratio is
  wrapped / bare;
- the Transport's own cost, without the network: ns per handle_request
  over an inner transport that answers at once, bare and wrapped (the
  difference is what the breaker adds), and that difference as a share of
  the loopback round trip.

    python3 bench/python/http_transport.py [--quick]
(`make bench` runs it with this build's package on PYTHONPATH.)
"""

from __future__ import annotations

import gc
import socket
import statistics
import sys
import threading
import time
from typing import Callable

import httpx

import lazybreaker as lb
import lazybreaker.httpx

QUICK = "--quick" in sys.argv
ROUND_TRIPS = 500 if QUICK else 5_000
CALLS = 20_000 if QUICK else 200_000
REPEATS = 3 if QUICK else 7
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


def serve(listener: socket.socket) -> None:
    """Answers every request of every keep-alive connection at once."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=answer, args=(conn,), daemon=True).start()


def answer(conn: socket.socket) -> None:
    with conn:
        pending = b""
        while True:
            data = conn.recv(65536)
            if not data:
                return
            pending += data
            while b"\r\n\r\n" in pending:
                _, pending = pending.split(b"\r\n\r\n", 1)
                conn.sendall(RESPONSE)


class Instant(httpx.BaseTransport):
    """An inner transport that answers at once, with one response made
    beforehand: what is left is the cost of the layers above it."""

    def __init__(self) -> None:
        self.response = httpx.Response(200)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.response


def ns_per(run: Callable[[], None], n: int) -> float:
    gc.collect()
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / n


def round_trips(url: str) -> tuple[float, float]:
    """Medians (bare, wrapped) of ns per request over loopback, interleaved."""
    bare_client = httpx.Client(transport=httpx.HTTPTransport())
    wrapped_client = httpx.Client(transport=lazybreaker.httpx.Transport(httpx.HTTPTransport()))
    bare, wrapped = [], []
    for client in (bare_client, wrapped_client):
        for _ in range(100):  # warm: connections open, breaker made
            client.get(url)
    for _ in range(REPEATS):
        for client, out in ((bare_client, bare), (wrapped_client, wrapped)):
            def run(c: httpx.Client = client) -> None:
                for _ in range(ROUND_TRIPS):
                    c.get(url)
            out.append(ns_per(run, ROUND_TRIPS))
    bare_client.close()
    wrapped_client.close()
    return statistics.median(bare), statistics.median(wrapped)


def transport_cost() -> tuple[float, float]:
    """Medians (bare, wrapped) of ns per handle_request over Instant."""
    request = httpx.Request("GET", "http://127.0.0.1:8080/")
    bare_transport = Instant()
    wrapped_transport = lazybreaker.httpx.Transport(Instant())
    bare, wrapped = [], []
    for _ in range(REPEATS):
        for transport, out in ((bare_transport, bare), (wrapped_transport, wrapped)):
            def run(t: httpx.BaseTransport = transport) -> None:
                handle = t.handle_request
                for _ in range(CALLS):
                    handle(request)
            out.append(ns_per(run, CALLS))
    return statistics.median(bare), statistics.median(wrapped)


def main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener,), daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    rt_bare, rt_wrapped = round_trips(url)
    own_bare, own_wrapped = transport_cost()
    listener.close()
    added = own_wrapped - own_bare
    print(f"bench/python/http_transport.py: Python {sys.version.split()[0]}, httpx {httpx.__version__}, "
          f"lazybreaker {lb.__version__}; medians of {REPEATS} runs "
          f"({ROUND_TRIPS:,} round trips, {CALLS:,} transport calls)")
    print("| case | bare httpx.HTTPTransport | lazybreaker.httpx.Transport | ratio (wrapped / bare) |")
    print("|---|---|---|---|")
    print(f"| a loopback round trip (httpx.Client, keep-alive) | {rt_bare / 1000:,.1f} us | "
          f"{rt_wrapped / 1000:,.1f} us | {rt_wrapped / rt_bare:.3f} |")
    print(f"| handle_request over a transport that answers at once | {own_bare:,.0f} ns | "
          f"{own_wrapped:,.0f} ns | {own_wrapped / own_bare:.2f} |")
    print(f"| the breaker's added cost per request | - | {added:,.0f} ns | "
          f"{100 * added / rt_bare:.2f} % of the bare round trip |")


if __name__ == "__main__":
    main()
