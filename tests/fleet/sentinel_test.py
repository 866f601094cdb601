#!/usr/bin/python3
"""fleet.sentinel: the fleet through Redis Sentinel (docs/fleet.md,
"Sentinel"). On loopback: a primary, its replica, three sentinels (quorum
2, the primary judged down after 1 s) and three hosts whose agents are
given the sentinels, not the primary. The primary is SIGKILLed; once a
sentinel names the replica:

  the Connector's failover watch (sentinel_watch.cpp: one Connector,
  polled as the agent polls it) announces the promoted replica within
  500 ms of the promotion (+switch-master);
  (a) a trip made after the failover reaches every host within 5 s of the
      promotion;
  (b) a trip made on a host just before the kill, which the promoted
      replica never received (its link was cut first, and the other hosts'
      agents were stopped, so only the old primary held it), is not lost:
      every host is OPEN for it after the failover (the agent publishes
      its state again when the primary's replication id changed).

Also: cbctl fleet list through the sentinels (before and after), cbctl
serve --sentinel after the failover, a
sentinel that names a server whose ROLE is not master (a fake sentinel of
our own) is passed over for the next one, and bad --sentinel options are
status 2 with a message for the agent and cbctl.

    AGENT=... CBCTL=... FLEET_LOAD=... REDIS_SERVER=/usr/bin/redis-server \\
      /usr/bin/python3 tests/fleet/sentinel_test.py
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetlib import (SLACK, Failure, Fleet, RedisServer, Sentinel, check,  # noqa: E402
                      first_in_state, free_port, parse_watch, prog, wait_for, wall_ms)

MASTER = "fleetmaster"


def start_agent(host, *args):
    """Host.start_agent without --redis: the sentinels alone name Redis."""
    host.agent_starts += 1
    argv = [prog("AGENT"), "--file", host.file, "--host", host.id, "--interval", "50"] + list(args)
    host.agent = host.fleet.spawn(argv, "agent-%s-%d.log" % (host.id, host.agent_starts))
    host.wait_log("connected", 10 * SLACK)


def connected_to(host, port):
    return [l for l in host.log_lines("connected") if ":%d/" % port in l]


def all_in_state(watcher, n, state, since_ms, timeout):
    """{host index: t_ms} once the watcher saw every host in `state` after since_ms."""
    def there():
        rows = parse_watch(watcher.text())
        seen = {i: first_in_state(rows, i, state, since_ms) for i in range(n)}
        return {i: s[0] for i, s in seen.items()} if all(seen.values()) else None
    try:
        return wait_for(there, timeout, 0.005, "every host %s" % state)
    except Failure:
        raise Failure("not every host became %s within %.1f s; the watcher saw %s" % (
            state, timeout, parse_watch(watcher.text())[-9:]))


def get(url):
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.read().decode()
    except OSError:
        return None


class FakeSentinel:
    """Answers SENTINEL get-master-addr-by-name with a given server (a
    replica): what a sentinel cut off from a failover would say. RESP
    arrays of bulk strings in, the few replies the agent's connection needs
    out; one thread, one client at a time."""

    def __init__(self, names_port):
        self.names_port = names_port
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = "127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    self._client(conn.makefile("rb"), conn)
                except (OSError, ValueError):
                    pass

    def _client(self, rf, conn):
        while True:
            line = rf.readline()
            if not line.startswith(b"*"):
                return
            argv = []
            for _ in range(int(line[1:])):
                n = int(rf.readline()[1:])
                argv.append(rf.read(n + 2)[:n].decode())
            cmd = argv[0].upper()
            if cmd == "PING":
                conn.sendall(b"+PONG\r\n")
            elif cmd == "SENTINEL":
                port = str(self.names_port).encode()
                conn.sendall(b"*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%s\r\n" % (len(port), port))
            else:
                conn.sendall(b"-ERR not here\r\n")

    def close(self):
        self.sock.close()


def bad_options(f, host, addrs):
    agent, cbctl = prog("AGENT"), prog("CBCTL")
    cases = [
        ([agent, "--file", host.file, "--sentinel", "127.0.0.1:notaport", "--sentinel-master", MASTER],
         "lazybreaker-agent: ", "notaport"),
        ([agent, "--file", host.file, "--sentinel", ":26379", "--sentinel-master", MASTER],
         "lazybreaker-agent: ", "host"),
        ([agent, "--file", host.file, "--sentinel", addrs], "lazybreaker-agent: ", "--sentinel-master"),
        ([agent, "--file", host.file, "--redis", "redis://127.0.0.1:6379", "--sentinel-master", MASTER],
         "lazybreaker-agent: ", "--sentinel"),
        ([agent, "--file", host.file, "--sentinel", addrs, "--sentinel-master", "two words"],
         "lazybreaker-agent: ", "--sentinel-master"),
        ([agent, "--file", host.file], "lazybreaker-agent: ", "--redis"),
        ([cbctl, "fleet", "list", "--sentinel", "127.0.0.1:0", "--sentinel-master", MASTER], "cbctl: ", "port"),
        ([cbctl, "fleet", "list", "--sentinel", addrs], "cbctl: ", "--sentinel-master"),
        ([cbctl, "fleet", "trip", "pay", "--sentinel", "127.0.0.1:1,,127.0.0.1:2", "--sentinel-master", MASTER],
         "cbctl: ", "HOST:PORT"),
        ([cbctl, "serve", "--sentinel-master", MASTER], "cbctl: ", "--sentinel"),
    ]
    wrong = []
    for argv, prefix, names in cases:
        shown = " ".join(os.path.basename(a) for a in argv)[:110]
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=5 * SLACK)
            rc, err = p.returncode, p.stderr.strip()
        except subprocess.TimeoutExpired:
            rc, err = "still running", ""
        said = err.splitlines()[0][:120] if err else ""
        line = "%s: status %s, says '%s'" % (shown, rc, said)
        if rc == 2 and said.startswith(prefix) and names in said:
            print("ok   " + line)
        else:
            print("BAD  " + line)
            wrong.append(line)
    check(not wrong, "bad sentinel options: status 2 and a message naming what is wrong (%d wrong:\n  %s)"
          % (len(wrong), "\n  ".join(wrong)))


def scenario(f):
    # Redis 7 waits 5 s before a diskless full sync by default.
    primary = f.start_redis(extra=["--repl-diskless-sync-delay", "0"])
    # --dir: the replica writes the primary's snapshot down as it syncs.
    replica = RedisServer(f, extra=["--replicaof", "127.0.0.1", str(primary.port), "--dir", f.work]).start()
    rr = replica.client()
    wait_for(lambda: "master_link_status:up" in rr.command("INFO", "replication"), 10 * SLACK, 0.02,
             "the replica to be in sync")
    sentinels = [Sentinel(f, MASTER, primary.port) for _ in range(3)]
    addrs = ",".join(s.address for s in sentinels)
    hosts = f.add_hosts(3, ["pay", "ledger"], "--open-for", "30s")
    a, b, c = hosts
    bad_options(f, a, addrs)

    # A: --redis for the scheme and credentials (its host:port, where
    # nothing listens, is not used); B: the sentinels alone, in two
    # options; C: a sentinel that is down listed first.
    a.start_agent("--sentinel", addrs, "--sentinel-master", MASTER,
                  redis="redis://127.0.0.1:%d/0" % free_port())
    start_agent(b, "--sentinel", sentinels[0].address, "--sentinel",
                ",".join(s.address for s in sentinels[1:]), "--sentinel-master", MASTER)
    start_agent(c, "--sentinel", "127.0.0.1:%d,%s" % (free_port(), addrs), "--sentinel-master", MASTER)
    for h in hosts:
        check(connected_to(h, primary.port), "%s connected to the primary the sentinels name: %s" % (
            h.id, h.log_lines("connected")[-1]))

    sentinel_args = ["--sentinel", addrs, "--sentinel-master", MASTER]
    rc, out, err = f.cbctl("fleet", "list", *sentinel_args)
    check(rc == 0 and "pay" in out, "cbctl fleet list --sentinel: status %d %s" % (rc, err.strip()))
    fake = FakeSentinel(replica.port)
    rc, out, err = f.cbctl("fleet", "list", "--sentinel", fake.address, "--sentinel-master", MASTER)
    check(rc == 7 and "ROLE says slave" in err,
          "a sentinel naming a replica is refused: status %d, '%s'" % (rc, err.strip()))
    rc, out, err = f.cbctl("fleet", "list", "--sentinel", fake.address + "," + addrs, "--sentinel-master", MASTER)
    check(rc == 0 and "pay" in out, "... and the next sentinel is asked: status %d %s" % (rc, err.strip()))
    fake.close()

    # The failover needs every sentinel to know the others and the replica
    # (hello messages every 2 s).
    wait_for(lambda: all(s.knows() == (2, 1) for s in sentinels), 15 * SLACK, 0.1,
             "the sentinels to know each other and the replica")

    # The Connector's watch on its own, apart from the agent's reconnect
    # policy (which spreads a fleet's reconnections over seconds).
    watch = f.spawn([prog("SENTINEL_WATCH"), addrs, MASTER, "60"], "watch.err", "watch.out")
    wait_for(lambda: "primary=" in watch.text(), 5 * SLACK, 0.01, "sentinel_watch to start")

    # (b)'s trip: only the old primary ever holds it.
    for h in (b, c):
        h.agent.signal(signal.SIGSTOP)
    replica.proc.signal(signal.SIGSTOP)
    pr = primary.client()
    pr.command("CLIENT", "KILL", "TYPE", "replica")
    a.cb("trip", "ledger", "--for", "30s")
    wait_for(lambda: pr.hgetall(f.key("b:ledger")).get("state") == "open", 3 * SLACK, 0.005,
             "A's trip of ledger to reach the primary")
    primary.kill()
    replica.proc.signal(signal.SIGCONT)
    for h in (b, c):
        h.agent.signal(signal.SIGCONT)
    killed = time.monotonic()
    check(rr.hgetall(f.key("b:ledger")).get("state") != "open",
          "the replica never received A's trip of ledger (the setup of (b))")

    wait_for(lambda: any(s.primary_port() == replica.port for s in sentinels), 20 * SLACK, 0.005,
             "a sentinel to name the replica as the primary")
    promoted_ms, promoted = wall_ms(), time.monotonic()
    print("     the replica promoted %.1f s after the kill" % (promoted - killed))
    wait_for(lambda: all(connected_to(h, replica.port) for h in hosts), 5 * SLACK, 0.005,
             "every agent to connect to the promoted replica")
    print("     every agent on it %.0f ms after the promotion" % ((time.monotonic() - promoted) * 1000))

    def announced():
        for line in watch.text().splitlines():
            if " announced " in line and ":%d/" % replica.port in line:
                return int(line.split()[0][2:])
        return None
    told = wait_for(announced, 2 * SLACK, 0.01, "the failover watch to announce the promoted replica")
    check(told - promoted_ms <= 500 * SLACK,
          "the Connector's failover watch (+switch-master) announced the promoted replica %+d ms from the "
          "promotion (bound %d ms)" % (told - promoted_ms, 500 * SLACK))
    rr.close()
    rr = replica.client()  # the promotion ends every client's connection
    check(rr.command("GET", f.key("instance")), "the promoted replica holds the fleet (its instance key)")
    check(rr.command("ROLE")[0] == "master", "the replica is the primary now")

    # (a)
    w = f.watch("pay", hosts)
    t0 = wall_ms()
    b.cb("trip", "pay", "--for", "20s")
    seen = all_in_state(w, 3, "open", t0, 6 * SLACK)
    last = max(seen.values())
    check(last - promoted_ms <= 5000 * SLACK,
          "(a) a trip on B after the failover is OPEN on every host %d ms after the promotion (bound %d ms)"
          % (last - promoted_ms, 5000 * SLACK))
    rc, out, err = f.cbctl("fleet", "list", *sentinel_args)
    row = [l.split() for l in out.splitlines() if l.split()[:1] == ["pay"]]
    check(rc == 0 and row and row[0][1] == "OPEN",
          "cbctl fleet list --sentinel after the failover: pay OPEN (status %d %s)" % (rc, err.strip()))

    port = free_port()
    serve = f.spawn([prog("CBCTL"), "serve", "--listen", "127.0.0.1:%d" % port] + sentinel_args, "serve.log")
    page = wait_for(lambda: get("http://127.0.0.1:%d/api/breakers" % port), 5 * SLACK, 0.05, "cbctl serve")
    check(":%d/" % replica.port in page and '"name":"pay","state":"open"' in page,
          "cbctl serve --sentinel serves the promoted primary's fleet: %s" % page[:160])
    serve.end()

    # (b)
    try:
        wait_for(lambda: all(h.state("ledger") == "OPEN" for h in hosts), 5 * SLACK, 0.02,
                 "every host's ledger OPEN")
    except Failure:
        raise Failure("(b) A's trip of ledger, made before the kill and never replicated, was lost: "
                      "states %s; the promoted primary's ledger: %s. The agent must publish its state "
                      "again when the primary's replication id (INFO replication master_replid) changed"
                      % ({h.id: h.state("ledger") for h in hosts}, rr.hgetall(f.key("b:ledger"))))
    check(rr.hgetall(f.key("b:ledger")).get("state") == "open",
          "(b) A's trip made before the kill is OPEN on every host and in the promoted primary")


def main():

    start = time.monotonic()
    try:
        with Fleet("sentinel") as f:
            scenario(f)
    except Failure as e:
        print("FAIL: fleet.sentinel: %s" % e, file=sys.stderr)
        return 1
    print("PASS: fleet.sentinel in %.1f s" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
