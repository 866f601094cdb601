#!/usr/bin/env python3
"""Processes in several languages call one failing upstream through their
HTTP integrations (docs/http.md) over one registry file: one trip, every
process rejecting, exactly one probe when the open period ends.

    one_upstream.py REGISTRY_FILE LANGUAGE=COMMAND ...

Each COMMAND (split as a shell would) starts a client that is given the
registry file and the upstream's URL as its last two arguments, prints
"ready", then reads lines from stdin: for each "call" it makes one GET of
the URL through its language's HTTP integration, with the breaker's
settings every client shares (one failure trips it, open for
OPEN_SECONDS), and prints "sent <status>" or "rejected". A client that
exits 77 before "ready" is skipped (its integration is not installed),
unless CI=true.
"""

import http.server
import os
import shlex
import subprocess
import sys
import threading
import time

OPEN_SECONDS = 2  # every client's open duration


class Upstream(http.server.ThreadingHTTPServer):
    """Answers every request 500, counting them."""

    def __init__(self):
        self.requests = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with self.server.lock:
            self.server.requests += 1
        body = b"down"
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Client:
    def __init__(self, language, command, registry, url):
        self.language = language
        self.process = subprocess.Popen(
            shlex.split(command) + [registry, url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ready(self):
        line = self.process.stdout.readline().strip()
        if line == "ready":
            return True
        status = self.process.wait()
        if status == 77 and not line:
            return False
        raise SystemExit(f"{self.language}: did not start (exit {status}, said {line!r})")

    def ask(self):
        self.process.stdin.write("call\n")
        self.process.stdin.flush()

    def answer(self):
        line = self.process.stdout.readline().strip()
        if not line:
            raise SystemExit(f"{self.language}: exited (status {self.process.wait()}) without answering")
        return line

    def call(self):
        self.ask()
        return self.answer()

    def close(self):
        self.process.stdin.close()
        if self.process.wait(timeout=60) != 0:
            raise SystemExit(f"{self.language}: exited with {self.process.returncode}")


def expect(what, got, want):
    print(f"{what}: {got}")
    if got != want:
        raise SystemExit(f"{what}: expected {want!r}, got {got!r}")


def main():
    registry, specs = sys.argv[1], sys.argv[2:]
    if not specs:
        raise SystemExit("usage: one_upstream.py REGISTRY_FILE LANGUAGE=COMMAND ...")
    if os.path.exists(registry):  # a former run's breaker would be open
        os.remove(registry)
    upstream = Upstream()
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{upstream.server_address[1]}/charge"
    clients = []
    for spec in specs:
        language, command = spec.split("=", 1)
        client = Client(language, command, registry, url)
        if client.ready():
            clients.append(client)
        elif CI:
            raise SystemExit(f"{language}: its HTTP integration is not installed (CI=true: a failure)")
        else:
            print(f"{language}: SKIPPED (its HTTP integration is not installed)")
    if len(clients) < 2:
        print("fewer than two languages could run: nothing shared to check")
        return 77

    first, rest = clients[0], clients[1:]
    expect(f"{first.language} calls the failing upstream", first.call(), "sent 500")
    for client in rest:
        expect(f"{client.language} calls while {first.language}'s trip holds", client.call(), "rejected")
    expect("requests the upstream received", upstream.requests, 1)

    time.sleep(OPEN_SECONDS + 0.5)
    for client in clients:  # all at once: one of them is the probe
        client.ask()
    answers = {client.language: client.answer() for client in clients}
    print(f"after the open period, every language at once: {answers}")
    probes = [language for language, answer in answers.items() if answer == "sent 500"]
    if len(probes) != 1 or any(a not in ("sent 500", "rejected") for a in answers.values()):
        raise SystemExit(f"expected exactly one probe and the rest rejected, got {answers}")
    expect("requests the upstream received", upstream.requests, 2)
    for client in clients:
        client.close()
    upstream.shutdown()
    print(f"one trip seen by {', '.join(c.language for c in clients)}; one probe ({probes[0]})")
    return 0


CI = os.environ.get("CI") == "true"

if __name__ == "__main__":
    sys.exit(main())
