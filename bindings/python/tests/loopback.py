"""A loopback HTTP upstream for the client integrations' tests: answers
GET /status/<code>[?retry_after=<value>] with that status (and Retry-After),
holds GET /hang until released (a timeout, a cancellation), and records
every request it received."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Upstream(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: list[str] = []
        self.release = threading.Event()
        self.hanging = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def breaker_name(self) -> str:
        return f"http/127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (a timeout, a cancellation) is expected here

    def stop(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Upstream
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        self.server.hits.append(url.path)
        if url.path == "/hang":
            self.server.hanging.set()
            self.server.release.wait(60)
            code = 200
        else:
            code = int(url.path.rsplit("/", 1)[1])
        self.send_response(code)
        for value in parse_qs(url.query).get("retry_after", []):
            self.send_header("Retry-After", value)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def closed_port_url() -> str:
    """A loopback URL nothing listens on: a connection error."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/status/200"
