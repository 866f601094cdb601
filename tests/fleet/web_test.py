#!/usr/bin/python3
"""The agent's --listen answers only requests that name it (label fleet,
CTest fleet.web): a Host that is not the address bound, localhost or an
--allow-host name is 403 with a plain-text reason (a DNS-rebinding page
gets nothing), as is a request without Host and a POST whose Origin is
another site. The check is tools/fleet/host_check.cpp, which cbctl serve
shares (tests/cbctl/serve.sh covers that side).

    web_test.py        (AGENT, CBCTL, FLEET_LOAD, REDIS_SERVER from the environment)
"""

import http.client
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetlib import SLACK, Failure, Fleet, check, free_port, prog, wait_for  # noqa: E402


def ask(port, method, host, origin=None, body=None):
    """(status, content type, body) of one request with exactly these
    headers (http.client adds no Host of its own with skip_host)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5 * SLACK)
    try:
        c.putrequest(method, "/metrics", skip_host=True, skip_accept_encoding=True)
        if host is not None:
            c.putheader("Host", host)
        if origin is not None:
            c.putheader("Origin", origin)
        if body is not None:
            c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read().decode("utf-8", "replace")
    finally:
        c.close()


def http10(port):
    """An HTTP/1.0 request without Host: the status line's code."""
    with socket.create_connection(("127.0.0.1", port), timeout=5 * SLACK) as s:
        s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        data = b""
        while not data.endswith(b"\n") and len(data) < 4096:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else None


def agent_status(f, *args):
    """A refused command line: its status and standard error (not through
    f.spawn, whose way out wants status 0 from every agent)."""
    r = subprocess.run([prog("AGENT"), "--file", "/nonexistent.lbr", "--redis", f.redis.url()] +
                       list(args), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=10 * SLACK)
    return r.returncode, r.stderr


def web(f):
    f.start_redis()
    (a,) = f.add_hosts(1, ["pay"])
    port = free_port()
    a.start_agent("--listen", "127.0.0.1:%d" % port, "--allow-host", "metrics.example",
                  "--allow-host", "[::1]:9")
    me = "127.0.0.1:%d" % port
    wait_for(lambda: ask(port, "GET", me)[0] == 200, 3 * SLACK, 0.05, "/metrics")
    status, ctype, body = ask(port, "GET", me)
    check(status == 200 and "lazybreaker_agent_connected" in body,
          "Host %s (the address bound): 200 with the metrics" % me)
    for host in ("localhost:%d" % port, "LocalHost:%d" % port, "metrics.example",
                 "metrics.example:8080", "[::1]:9", "[0:0::1]:9"):
        status, _, _ = ask(port, "GET", host)
        check(status == 200, "Host %s: %d (loopback's localhost, an --allow-host name)" % (host, status))
    for host in ("rebound.example:%d" % port, "rebound.example", "127.0.0.1", "127.0.0.1:%d" % (port + 1),
                 "localhost", "[::1]:%d" % port, "[::1]:10", "metrics.example.evil:80",
                 "127.0.0.1:%d:1" % port, "", "a b"):
        status, ctype, body = ask(port, "GET", host)
        check(status == 403 and ctype.startswith("text/plain") and body.startswith("refused: ")
              and "lazybreaker" not in body,
              "Host %r: 403 text/plain, no metrics: %s" % (host, body.strip()[:90]))
    status, _, body = ask(port, "GET", "rebound.example:%d" % port)
    check("metrics.example" not in body and "127.0.0.1" not in body and "localhost" not in body,
          "the refusal names nothing the server would take (a rebinding page reads it)")
    status, _, body = ask(port, "GET", None)
    check(status == 403 and "no Host" in body, "no Host header: 403: %s" % body.strip())
    check(http10(port) == 403, "HTTP/1.0 without Host: 403")
    for origin in ("http://rebound.example", "http://127.0.0.1:%d" % (port + 1), "null",
                   "https://%s" % me, "http://%s/" % me, "ftp://%s" % me):
        status, ctype, body = ask(port, "POST", me, origin, b"")
        check(status == 403 and "Origin" in body,
              "POST with Origin %s: 403: %s" % (origin, body.strip()[:90]))
    for origin in ("http://%s" % me, "http://localhost:%d" % port, "https://metrics.example", None):
        status, _, _ = ask(port, "POST", me, origin, b"")
        check(status == 404, "POST with Origin %s passes the check (404: no such route)" % origin)
    check(a.agent.alive(), "the agent lives")

    # Bound to every address: the Host must be the one the request came in on.
    (b,) = f.add_hosts(1, ["pay"])
    any_port = free_port()
    b.start_agent("--listen", "0.0.0.0:%d" % any_port)
    for host, want in (("127.0.0.1:%d" % any_port, 200), ("localhost:%d" % any_port, 200),
                       ("0.0.0.0:%d" % any_port, 403), ("192.0.2.1:%d" % any_port, 403),
                       ("rebound.example:%d" % any_port, 403), ("127.0.0.1:%d" % port, 403)):
        status, _, body = ask(any_port, "GET", host)
        check(status == want, "--listen 0.0.0.0: Host %s: %d %s" % (host, status, body.strip()[:60]))

    for args, what in ((["--allow-host", "x.example"], "--allow-host without --listen"),
                       (["--listen", "127.0.0.1:0", "--allow-host", "a:b"], "--allow-host a:b"),
                       (["--listen", "127.0.0.1:0", "--allow-host", "x:70000"], "--allow-host x:70000"),
                       (["--listen", "127.0.0.1:0", "--allow-host", "[::1"], "--allow-host [::1")):
        rc, err = agent_status(f, *args)
        check(rc == 2 and "--allow-host" in err, "%s: status 2: %s" % (what, err.strip().splitlines()[0]))


def main():
    start = time.monotonic()
    try:
        with Fleet("web") as f:
            web(f)
    except Failure as e:
        print("FAIL: fleet.web: %s" % e, file=sys.stderr)
        return 1
    print("PASS: fleet.web in %.1f s" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
