#!/usr/bin/python3
"""TLS to the fleet's Redis (label fleet, CTest fleet.tls): rediss:// with
--tls-ca-file, --tls-cert-file and --tls-key-file against real
redis-servers on TLS ports, with certificates this test makes with the
openssl command (an expired one under faketime).

    tls_test.py tls

It checks that a trip propagates between two hosts over TLS (with the
agents' /metrics and cbctl fleet and serve reading over TLS too), that
mutual TLS works with a client certificate and is refused without one or
with a foreign one, that each wrong peer is refused with a clear
`disconnected why=` line and never `connected` (a foreign CA, a host name
or IP address the certificate does not name, an expired certificate,
plain text to a TLS port, TLS to a plain port), that the options are
usage errors (status 2) where they do not fit, and that a server turned
replica (READONLY) sends the agents away to reconnect.

The programs come from the environment as for fleet_test.py, with
OPENSSL_PROGRAM and FAKETIME_PROGRAM (FAKETIME itself is libfaketime's setting).
"""

import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetlib import (SLACK, Failure, Fleet, check, free_port, prog, run_scenario,  # noqa: E402
                      tls_client, wait_for)


def openssl(*args, faked=None):
    argv = [prog("OPENSSL_PROGRAM")] + list(args)
    if faked:
        argv = [prog("FAKETIME_PROGRAM"), "-f", faked] + argv
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise Failure("openssl %s: status %d: %s" % (" ".join(args[:2]), p.returncode, p.stderr.strip()))


class Pki:
    """A CA and the certificates of this test, in `work`. Elliptic-curve
    keys: quick to make."""

    def __init__(self, work):
        self.dir = os.path.join(work, "pki")
        os.makedirs(self.dir)
        self.ca = self.self_signed("ca", "lazybreaker test CA")
        self.other_ca = self.self_signed("other-ca", "an unrelated CA")
        # The server's: both of the names the agents use for loopback.
        self.server = self.issued("server", "localhost", "DNS:localhost,IP:127.0.0.1")
        # The same, valid ten days ago for two days: expired now.
        self.expired = self.issued("expired", "localhost", "DNS:localhost,IP:127.0.0.1",
                                   faked="-10d", key="server")
        # One that names the address alone: "localhost" is not its name.
        self.ip_only = self.issued("ip-only", "127.0.0.1", "IP:127.0.0.1")
        self.client = self.issued("client", "lazybreaker-agent", None)
        self.foreign_client = self.issued("foreign-client", "lazybreaker-agent", None,
                                          ca="other-ca")

    def path(self, name, ext):
        return os.path.join(self.dir, "%s.%s" % (name, ext))

    def new_key(self, name):
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", self.path(name, "key"))

    def self_signed(self, name, cn):
        self.new_key(name)
        # Back-dated, so the expired certificate's issuer was valid when it was.
        openssl("req", "-x509", "-new", "-key", self.path(name, "key"), "-out", self.path(name, "pem"),
                "-days", "30", "-subj", "/CN=" + cn, faked="-20d")
        return self.path(name, "pem")

    def issued(self, name, cn, san, faked=None, key=None, ca="ca"):
        key = key or name
        if key == name:
            self.new_key(name)
        openssl("req", "-new", "-key", self.path(key, "key"), "-out", self.path(name, "csr"),
                "-subj", "/CN=" + cn)
        ext = self.path(name, "ext")
        with open(ext, "w") as f:
            f.write(("subjectAltName=%s\n" % san) if san else "extendedKeyUsage=clientAuth\n")
        openssl("x509", "-req", "-in", self.path(name, "csr"), "-CA", self.path(ca, "pem"),
                "-CAkey", self.path(ca, "key"), "-CAcreateserial", "-out", self.path(name, "pem"),
                "-days", "2", "-extfile", ext, faked=faked)
        return (self.path(name, "pem"), self.path(key, "key"))


def start_tls_redis(f, pki, name, cert, auth_clients="no", plain_port=0, bind="127.0.0.1"):
    """A redis-server with a TLS port (and a plain one when plain_port);
    its TLS port, once it accepts connections."""
    port = free_port()
    argv = [prog("REDIS_SERVER"), "--port", str(plain_port), "--tls-port", str(port),
            "--bind", bind, "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--protected-mode", "no", "--loglevel", "warning", "--tls-cert-file", cert[0],
            "--tls-key-file", cert[1], "--tls-ca-cert-file", pki.ca,
            "--tls-auth-clients", auth_clients]
    proc = f.spawn(argv, "redis-%s.log" % name)

    def up():
        if not proc.alive():
            raise Failure("redis-server %s exited (built without TLS?): %s" % (name, proc.errtext()[-2000:]))
        import socket
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    wait_for(up, 10, 0.02, "redis-server %s on TLS port %d" % (name, port))
    return port


def disconnected_why(host):
    """The why= of the agent's first disconnected line."""
    line = host.wait_log("disconnected", 5 * SLACK)[0]
    return line.split(" why=", 1)[1].rsplit(" retry_ms=", 1)[0]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.read().decode()
    except OSError:
        return None


def tls(f):
    pki = Pki(f.work)
    ca = ["--tls-ca-file", pki.ca]
    plain = free_port()
    # 127.0.0.2 too: a loopback address the certificate does not name.
    main = start_tls_redis(f, pki, "main", pki.server, plain_port=plain, bind="127.0.0.1 127.0.0.2")
    expired = start_tls_redis(f, pki, "expired", pki.expired)
    mutual = start_tls_redis(f, pki, "mutual", pki.ip_only, auth_clients="yes")
    url = "rediss://localhost:%d" % main

    # A trip crosses from A to B over TLS.
    a, b, c = f.add_hosts(3, ["payments"], "--open-for", "30s")
    metrics = free_port()
    a.start_agent(*ca, "--listen", "127.0.0.1:%d" % metrics, redis=url)
    b.start_agent(*ca, redis=url)
    check("rediss://localhost:%d/0" % main in a.log_lines("connected")[0],
          "A says connected to %s" % url)
    t0 = time.monotonic()
    a.cb("trip", "payments", "--for", "20s")
    wait_for(lambda: b.state("payments") == "OPEN", 3 * SLACK, 0.01, "B's payments to be OPEN")
    lat = (time.monotonic() - t0) * 1000
    check(lat <= 1000 * SLACK, "a trip on A is OPEN on B over TLS %.0f ms later (bound %d ms)" % (lat, 1000 * SLACK))
    r = tls_client(main, pki.ca)
    fleet = r.hgetall(f.key("b:payments"))
    check(fleet.get("state") == "open" and fleet.get("trips") == "1",
          "Redis (read over TLS) holds the fleet's payments open, one trip (%s)" % fleet)
    body = wait_for(lambda: get("http://127.0.0.1:%d/metrics" % metrics), 3 * SLACK, 0.05, "/metrics")
    check('breaker="payments"' in body and "not readable" not in body,
          "A's /metrics shows the fleet's payments, heard over TLS")

    # Mutual TLS, and the IP address as the name checked.
    mutual_url = "rediss://127.0.0.1:%d" % mutual
    c.start_agent(*ca, "--tls-cert-file", pki.client[0], "--tls-key-file", pki.client[1],
                  redis=mutual_url)
    check(bool(c.log_lines("connected")), "with --tls-cert-file/--tls-key-file, mutual TLS connects")

    # cbctl over TLS: fleet list, serve --redis; refusals are status 7 with the reason.
    rc, out, err = f.cbctl("fleet", "list", "--redis", "rediss://127.0.0.1:%d" % main, *ca)
    check(rc == 0 and "payments" in out and "OPEN" in out,
          "cbctl fleet list --redis rediss://127.0.0.1 --tls-ca-file: status %d" % rc)
    rc, out, err = f.cbctl("fleet", "list", "--redis", url, "--tls-ca-file", pki.other_ca)
    check(rc == 7 and "certificate verify failed" in err,
          "cbctl fleet list with a foreign CA: status %d, %s" % (rc, err.strip()))
    rc, out, err = f.cbctl("fleet", "list", "--redis", mutual_url, *ca,
                           "--tls-cert-file", pki.client[0], "--tls-key-file", pki.client[1])
    check(rc == 0, "cbctl fleet list with a client certificate: status %d %s" % (rc, err.strip()))
    serve_port = free_port()
    serve = f.spawn([prog("CBCTL"), "serve", "--redis", url, *ca, "--listen",
                     "127.0.0.1:%d" % serve_port], "serve.log")
    body = wait_for(lambda: get("http://127.0.0.1:%d/metrics" % serve_port), 5 * SLACK, 0.05,
                    "cbctl serve --redis rediss://")
    check('breaker="payments"' in body, "cbctl serve --redis rediss:// --tls-ca-file serves the fleet")
    serve.end()
    rc, out, err = f.cbctl("serve", "--redis", url, "--tls-ca-file", pki.other_ca, "--listen",
                           "127.0.0.1:0")
    check(rc == 7 and "certificate verify failed" in err,
          "cbctl serve with a foreign CA: status %d, %s" % (rc, err.strip()))

    # Usage errors: status 2, naming the option (and the file).
    missing = os.path.join(f.work, "missing.pem")
    for args, said in (
            (["--redis", "redis://127.0.0.1:%d" % plain, *ca], "rediss://"),
            (["--redis", url, "--tls-cert-file", pki.client[0]], "--tls-key-file"),
            (["--redis", url, "--tls-ca-file", missing], missing),
            (["--redis", url, "--tls-ca-file", pki.path("client", "ext")], "--tls-ca-file"),
            (["--redis", url, "--tls-cert-file", pki.client[0], "--tls-key-file",
              pki.path("server", "key")], "not the key of --tls-cert-file")):
        rc, out, err = f.cbctl("fleet", "list", *args)
        check(rc == 2 and said in err, "cbctl fleet list %s: status %d, %s" % (
            " ".join(args[2:]), rc, err.strip()))
        p = subprocess.run([prog("AGENT"), "--file", a.file, "--host", "x"] + args,
                           capture_output=True, text=True, timeout=10 * SLACK)
        check(p.returncode == 2 and said in p.stderr, "lazybreaker-agent %s: status %d, %s" % (
            " ".join(args[2:]), p.returncode, p.stderr.strip()))

    # Each wrong peer refused, at once and all together, with why.
    refusals = [
        # (Redis sends its CA with its certificate: OpenSSL finds that one
        # self-signed and untrusted, rather than no issuer at all.)
        ("a foreign CA", url, ["--tls-ca-file", pki.other_ca], "TLS: certificate verify failed: "),
        ("the system's CAs", url, [], "TLS: certificate verify failed"),
        ("an address the certificate does not name", "rediss://127.0.0.2:%d" % main, ca,
         "TLS: certificate verify failed: IP address mismatch"),
        ("a name the certificate does not name", "rediss://localhost:%d" % mutual, ca,
         "TLS: certificate verify failed: hostname mismatch"),
        ("an expired certificate", "rediss://localhost:%d" % expired, ca,
         "TLS: certificate verify failed: certificate has expired"),
        ("plain text to a TLS port", "redis://localhost:%d" % main, [], "a TLS port? use rediss://"),
        ("TLS to a plain port", "rediss://localhost:%d" % plain, ca,
         "TLS: the server did not answer TLS"),
        ("mutual TLS without a client certificate", mutual_url, ca,
         "the server requires a client certificate"),
        ("mutual TLS with a foreign client certificate", mutual_url,
         ca + ["--tls-cert-file", pki.foreign_client[0], "--tls-key-file", pki.foreign_client[1]],
         "the server refused this client certificate"),
    ]
    hosts = f.add_hosts(len(refusals), ["payments"])
    for h, (what, u, extra, said) in zip(hosts, refusals):
        h.start_agent(*extra, redis=u, wait_connected=False)
    for h, (what, u, extra, said) in zip(hosts, refusals):
        why = disconnected_why(h)
        check(said in why, "%s: refused, disconnected why=%s" % (what, why))
        check(not h.log_lines("connected"), "%s: never connected" % what)

    # A failover made the server a replica: READONLY sends the agents
    # away, and they come back when it is a primary again.
    r.command("REPLICAOF", "127.0.0.1", str(free_port()))
    for h in (a, b):
        line = wait_for(lambda: [l for l in h.log_lines("disconnected") if "READONLY" in l],
                        5 * SLACK, 0.02, "%s to leave the replica" % h.id)[0]
        check("READONLY: the server is a replica now" in line, "%s on a replica: %s" % (h.id, line))
    r.command("REPLICAOF", "NO", "ONE")
    for h in (a, b):
        wait_for(lambda: len(h.log_lines("connected")) >= 2, 5 * SLACK, 0.02,
                 "%s to reconnect to the primary" % h.id)
    check(True, "A and B connected again once the server was a primary")
    r.close()


SCENARIOS = {"tls": tls}


def main(argv):
    if len(argv) != 2 or argv[1] not in SCENARIOS:
        print("usage: tls_test.py %s" % "|".join(SCENARIOS), file=sys.stderr)
        return 2
    return run_scenario(argv[1], SCENARIOS[argv[1]])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
