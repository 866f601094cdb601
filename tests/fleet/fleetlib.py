"""The parts of a fleet on one machine, for tests/fleet and bench/fleet:
a real redis-server on 127.0.0.1 and a free port, and "hosts" (one
registry file and one lazybreaker-agent each, with distinct --host), driven
with cbctl and fleet_load and observed with a small Redis client of our own
(RESP over a socket; the Python standard library only).

Every process started through a Fleet is stopped when it closes (SIGCONT
first for a stopped one, then SIGTERM, then SIGKILL), pass or fail, and its
working folder removed unless the test failed and KEEP_FLEET_TEST is set.

The programs come from the environment: AGENT, CBCTL, FLEET_LOAD,
REDIS_SERVER. LB_FLEET_SLACK (default 1) multiplies the time bounds a
test measures against (the sanitizer builds set it); the 1 s and 100 ms
bounds of the issue are checked at 1, in the release build.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SLACK = float(os.environ.get("LB_FLEET_SLACK", "1"))


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("ok   " + what, flush=True)


def wall_ms():
    return int(time.time() * 1000)


def wait_for(cond, timeout, step=0.01, what="condition"):
    """Polls cond() until it returns a true value (returned) or timeout s."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= end:
            raise Failure("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(step)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# A Redis client: RESP2 over a socket, one connection, blocking.


class RedisError(Exception):
    pass


class Redis:
    def __init__(self, port, password=None, host="127.0.0.1", timeout=5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""
        if password is not None:
            self.command("AUTH", password)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RedisError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n).decode("utf-8", "replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RedisError("bad reply %r" % line)

    def command(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))
        r = self._reply()
        if isinstance(r, RedisError):
            raise r
        return r

    def hgetall(self, key):
        r = self.command("HGETALL", key)
        return dict(zip(r[0::2], r[1::2])) if isinstance(r, list) else {}

    def commandstats(self):
        """{command: calls} from INFO commandstats."""
        text = self.command("INFO", "commandstats")
        stats = {}
        for line in text.splitlines():
            if line.startswith("cmdstat_"):
                name, _, fields = line[len("cmdstat_"):].partition(":")
                for f in fields.split(","):
                    k, _, v = f.partition("=")
                    if k == "calls":
                        stats[name] = int(v)
        return stats


class Monitor:
    """Counts what Redis executes (MONITOR, on a connection of its own, in
    a thread): commands clients sent (a script once, a pipeline's commands
    each) apart from those scripts ran ("[0 lua]")."""

    def __init__(self, port, password=None):
        import threading
        self.r = Redis(port, password)
        self.r.sock.sendall(b"*1\r\n$7\r\nMONITOR\r\n")
        self.client, self.lua, self.by_name = 0, 0, {}
        self.on = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        try:
            while True:
                line = self.r._line().decode("utf-8", "replace")
                if not self.on or not line.startswith("+") or line == "+OK":
                    continue
                src_end = line.find("] ")
                src = line[line.find("[") + 1:src_end]
                name = line[src_end + 2:].split(" ", 1)[0].strip('"').lower()
                if src.endswith(" lua"):
                    self.lua += 1
                else:
                    self.client += 1
                    self.by_name[name] = self.by_name.get(name, 0) + 1
        except (OSError, ConnectionError):
            pass

    def window(self, seconds):
        """(client commands, script commands, {name: client count}) in the next `seconds`."""
        self.client, self.lua, self.by_name = 0, 0, {}
        self.on = True
        time.sleep(seconds)
        self.on = False
        return self.client, self.lua, dict(self.by_name)

    def close(self):
        self.r.close()


# --------------------------------------------------------------------------


def prog(name):
    path = os.environ.get(name)
    if not path:
        raise Failure("the environment must name %s" % name)
    return path


class Proc:
    """A process we started, its output in a log file."""

    def __init__(self, argv, log, stdout_log=None):
        self.argv = argv
        self.log = log
        self.out = stdout_log or log
        errf = open(log, "ab")
        outf = errf if stdout_log is None else open(stdout_log, "ab")
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=outf, stderr=errf)
        errf.close()
        if outf is not errf:
            outf.close()
        self.stopped = False
        self.killed = False

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p.poll() is None

    def signal(self, sig):
        if sig == signal.SIGKILL:
            self.killed = True
        if self.alive():
            os.kill(self.p.pid, sig)
        self.stopped = sig == signal.SIGSTOP or (self.stopped and sig != signal.SIGCONT)

    def wait(self, timeout):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def end(self, grace=3.0):
        if not self.alive():
            return self.p.returncode
        if self.stopped:
            os.kill(self.p.pid, signal.SIGCONT)
        os.kill(self.p.pid, signal.SIGTERM)
        rc = self.wait(grace)
        if rc is None:
            os.kill(self.p.pid, signal.SIGKILL)
            rc = self.p.wait()
        return rc

    def text(self):
        try:
            with open(self.out, "r", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def errtext(self):
        try:
            with open(self.log, "r", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""


class RedisServer:
    def __init__(self, fleet, password=None, extra=()):
        self.fleet = fleet
        self.extra = list(extra)
        self.port = free_port()
        self.password = password
        self.proc = None
        self.starts = 0

    def start(self):
        self.starts += 1
        argv = [prog("REDIS_SERVER"), "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--protected-mode", "no", "--loglevel", "warning"]
        if self.password:
            argv += ["--requirepass", self.password]
        argv += self.extra
        self.proc = self.fleet.spawn(argv, "redis-%d.log" % self.starts)

        def up():
            try:
                r = Redis(self.port, self.password, timeout=1)
                ok = r.command("PING") == "PONG"
                r.close()
                return ok
            except (OSError, RedisError, ConnectionError):
                return False
        wait_for(up, 10, 0.02, "redis-server on port %d" % self.port)
        return self

    def kill(self):
        self.proc.signal(signal.SIGKILL)
        self.proc.wait(5)

    def client(self, password=None):
        return Redis(self.port, password if password is not None else self.password)

    def url(self, userinfo=""):
        return "redis://%s127.0.0.1:%d" % (userinfo + "@" if userinfo else "", self.port)


class Host:
    def __init__(self, fleet, hid):
        self.fleet = fleet
        self.id = hid
        self.file = os.path.join(fleet.work, "%s.lbr" % hid)
        self.agent = None
        self.agent_starts = 0

    def create(self, name, *opts):
        rc, out, err = self.fleet.cbctl("create", self.file, name, "--create-file", *opts)
        if rc != 0:
            raise Failure("cbctl create %s %s: %s" % (self.file, name, err.strip()))

    def start_agent(self, *extra, redis=None, wait_connected=True, interval="50"):
        self.agent_starts += 1
        url = redis if redis is not None else self.fleet.redis.url()
        argv = [prog("AGENT"), "--file", self.file, "--redis", url, "--host", self.id]
        if interval:
            argv += ["--interval", interval]
        argv += list(extra)
        self.agent = self.fleet.spawn(argv, "agent-%s-%d.log" % (self.id, self.agent_starts))
        self.wait_log("ready", 10 * SLACK)
        if wait_connected:
            self.wait_log("connected", 10 * SLACK)
        return self.agent

    def log_lines(self, word):
        pre = "lazybreaker-agent: " + word
        return [l for l in self.agent.errtext().splitlines()
                if l.startswith(pre) and (len(l) == len(pre) or l[len(pre)] == " ")]

    def wait_log(self, word, timeout):
        def seen():
            if not self.agent.alive():
                raise Failure("the agent of %s exited (status %s) before logging '%s':\n%s" % (
                    self.id, self.agent.p.returncode, word, self.agent.errtext()[-3000:]))
            return self.log_lines(word)
        return wait_for(seen, timeout, 0.02, "agent %s to log '%s'" % (self.id, word))

    def show(self, name):
        rc, out, err = self.fleet.cbctl("show", self.file, name, "--json")
        if rc != 0:
            raise Failure("cbctl show %s %s: status %d: %s" % (self.file, name, rc, err.strip()))
        return json.loads(out)

    def state(self, name):
        return self.show(name)["state"]

    def deadline_ms(self, name):
        """The wall time at which the breaker's open period ends, as this
        host sees it (cb_retry_after at the middle of the cbctl call)."""
        before = time.time()
        s = self.show(name)
        after = time.time()
        if s["retry_after_ns"] is None:
            return None
        return (before + after) / 2 * 1000 + s["retry_after_ns"] / 1e6

    def cb(self, *args):
        """cbctl COMMAND FILE ARGS...; raises unless status 0."""
        rc, out, err = self.fleet.cbctl(args[0], self.file, *args[1:])
        if rc != 0:
            raise Failure("cbctl %s %s %s: status %d: %s" % (args[0], self.file, " ".join(args[1:]),
                                                            rc, err.strip()))
        return out


class Fleet:
    """A working folder, a Redis and hosts; closes everything it started."""

    def __init__(self, name, fleet_name="default"):
        self.name = name
        self.fleet_name = fleet_name
        base = os.environ.get("LB_FLEET_WORK") or None
        if base:
            os.makedirs(base, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="fleet-%s." % name, dir=base)
        self.procs = []
        self.hosts = []
        self.redis = None
        self.failed = False

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.failed = kind is not None
        if self.failed:
            self.dump()
        ends = []
        for p in reversed(self.procs):
            try:
                ends.append((p, p.end(3.0 * SLACK)))
            except ProcessLookupError:
                pass
        problems = [] if self.failed else self.problems(ends)
        if problems:
            self.failed = True
            self.dump()
        if self.failed and os.environ.get("KEEP_FLEET_TEST"):
            print("kept " + self.work, file=sys.stderr)
        else:
            shutil.rmtree(self.work, ignore_errors=True)
        if problems:
            raise Failure("on the way out: " + "; ".join(problems))
        return False

    SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
                       "runtime error:", "ERROR: ThreadSanitizer")

    def problems(self, ends):
        """Our programs (the agents, fleet_load) that did not end with status
        0 when asked to (SIGTERM; not those the test killed), or whose log has
        a sanitizer's report: every scenario is a sanitizer run of the agent
        in build-asan and build-tsan."""
        ours = {os.environ.get("AGENT"), os.environ.get("FLEET_LOAD")}
        out = []
        for p, rc in ends:
            if p.argv[0] not in ours or p.killed:
                continue
            name = "%s (%s)" % (os.path.basename(p.argv[0]), os.path.basename(p.log))
            if rc != 0:
                out.append("%s ended with status %s" % (name, rc))
            text = p.errtext()
            for mark in self.SANITIZER_MARKS:
                if mark in text:
                    out.append("%s: %s" % (name, mark))
                    break
        return out

    def dump(self):
        """The tail of every log, for a failing test."""
        for p in self.procs:
            text = p.errtext()
            if p.out != p.log:
                text += "\n--- stdout ---\n" + p.text()
            print("----- %s (%s) -----\n%s" % (os.path.basename(p.log), " ".join(p.argv[:3]),
                                               text[-4000:]), file=sys.stderr)

    def spawn(self, argv, logname, stdout_name=None):
        p = Proc(argv, os.path.join(self.work, logname),
                 os.path.join(self.work, stdout_name) if stdout_name else None)
        self.procs.append(p)
        return p

    def start_redis(self, password=None, extra=()):
        self.redis = RedisServer(self, password, extra).start()
        return self.redis

    def add_hosts(self, n, names=(), *create_opts):
        made = []
        for i in range(len(self.hosts), len(self.hosts) + n):
            h = Host(self, "host%c" % (ord("A") + i) if len(self.hosts) + n <= 26 else "host%02d" % i)
            for name in names:
                h.create(name, *create_opts)
            self.hosts.append(h)
            made.append(h)
        return made

    def key(self, rest):
        return "lb:{%s}:%s" % (self.fleet_name, rest)

    def cbctl(self, *args, timeout=30):
        try:
            r = subprocess.run([prog("CBCTL")] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=timeout * SLACK)
        except subprocess.TimeoutExpired:
            raise Failure("cbctl %s took over %ss" % (" ".join(map(str, args)), timeout * SLACK))
        return r.returncode, r.stdout, r.stderr

    def fleet_cmd(self, *args, password_file=None):
        argv = ["fleet"] + list(args) + ["--redis", self.redis.url()]
        if self.fleet_name != "default":
            argv += ["--fleet", self.fleet_name]
        if password_file:
            argv += ["--password-file", password_file]
        return self.cbctl(*argv)

    def load(self, host, name, fail_flag, rate=100, duration=10, tag=""):
        """fleet_load load on a host; its stdout in a file of its own."""
        argv = [prog("FLEET_LOAD"), "load", "--file", host.file, "--name", name, "--rate",
                str(rate), "--fail-flag", fail_flag, "--duration", str(duration)]
        return self.spawn(argv, "load-%s%s.err" % (host.id, tag), "load-%s%s.out" % (host.id, tag))

    def watch(self, name, hosts, duration=60, tag=""):
        argv = [prog("FLEET_LOAD"), "watch", "--name", name, "--duration", str(duration)]
        argv += [h.file for h in hosts]
        w = self.spawn(argv, "watch-%s%s.err" % (name, tag), "watch-%s%s.out" % (name, tag))
        # Its first line per file says it is watching.
        wait_for(lambda: len(parse_watch(w.text())) >= len(hosts), 10 * SLACK, 0.01,
                 "the watcher to start")
        return w


def parse_kv(line):
    out = {}
    for word in line.split():
        k, eq, v = word.partition("=")
        if eq:
            out[k] = v
    return out


def parse_watch(text):
    """[(t_ms, host_index, state, retry_ms)] from fleet_load watch."""
    rows = []
    for line in text.splitlines():
        kv = parse_kv(line)
        if "host" in kv and "state" in kv:
            rows.append((int(kv["t"]), int(kv["host"]), kv["state"], int(kv["retry_ms"])))
    return rows


def parse_load(text):
    """(transitions [(t, to, reason)], probes [(t, outcome)], done dict)."""
    transitions, probes, done = [], [], None
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or not words[0].startswith("t="):
            continue
        t = int(words[0][2:])
        kv = parse_kv(line)
        if words[1] == "probe":
            probes.append((t, kv.get("outcome")))
        elif words[1] == "done":
            done = {k: int(v) for k, v in kv.items() if k != "t"}
        elif words[1] != "start":
            transitions.append((t, words[1], kv.get("reason")))
    return transitions, probes, done


def first_in_state(rows, host, state, after_ms=0):
    """(t_ms, retry_ms) of the host's first row in `state` at or after
    after_ms; when the host was already in it then (its last row before
    after_ms), (after_ms, that row's retry_ms)."""
    before = None
    for t, h, s, r in rows:
        if h != host:
            continue
        if t < after_ms:
            before = (s, r)
        elif s == state:
            return t, r
    if before and before[0] == state:
        return after_ms, before[1]
    return None


# --------------------------------------------------------------------------
# TLS (tests/fleet/tls_test.py): the same client over Python's ssl module.


def tls_client(port, ca, cert=None, key=None, host="localhost", password=None, timeout=5.0):
    """A Redis (above) on a TLS port, the server checked against `ca`; with
    cert and key, a client certificate for --tls-auth-clients yes."""
    import ssl
    ctx = ssl.create_default_context(cafile=ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    r = Redis.__new__(Redis)
    r.sock = ctx.wrap_socket(socket.create_connection((host, port), timeout=timeout),
                             server_hostname=host)
    r.buf = b""
    if password is not None:
        r.command("AUTH", password)
    return r


# --------------------------------------------------------------------------
# Redis Sentinel, for the failover tests (sentinel_test.py).


class Sentinel:
    """A Redis Sentinel (redis-server --sentinel) on 127.0.0.1 and a free
    port, monitoring one primary under `master`; its config file, which
    Sentinel rewrites as it learns, in the fleet's folder. Fast timings:
    the primary is judged down after `down_after_ms` without an answer."""

    def __init__(self, fleet, master, primary_port, quorum=2, down_after_ms=1000,
                 failover_timeout_ms=2000):
        self.master = master
        self.port = free_port()
        self.address = "127.0.0.1:%d" % self.port
        conf = os.path.join(fleet.work, "sentinel-%d.conf" % self.port)
        with open(conf, "w") as c:
            c.write("port %d\nbind 127.0.0.1\nprotected-mode no\n" % self.port)
            c.write("sentinel monitor %s 127.0.0.1 %d %d\n" % (master, primary_port, quorum))
            c.write("sentinel down-after-milliseconds %s %d\n" % (master, down_after_ms))
            c.write("sentinel failover-timeout %s %d\n" % (master, failover_timeout_ms))
            c.write("sentinel parallel-syncs %s 1\n" % master)
        self.proc = fleet.spawn([prog("REDIS_SERVER"), conf, "--sentinel", "--daemonize", "no"],
                                "sentinel-%d.log" % self.port)

        def up():
            try:
                r = Redis(self.port, timeout=1)
                ok = r.command("PING") == "PONG"
                r.close()
                return ok
            except (OSError, RedisError, ConnectionError):
                return False
        wait_for(up, 10, 0.02, "a sentinel on port %d" % self.port)

    def ask(self, *args):
        r = Redis(self.port, timeout=2)
        try:
            return r.command("SENTINEL", *args)
        finally:
            r.close()

    def primary_port(self):
        """The port of the primary this sentinel names now, or None."""
        try:
            a = self.ask("get-master-addr-by-name", self.master)
        except (OSError, RedisError, ConnectionError):
            return None
        return int(a[1]) if isinstance(a, list) and len(a) == 2 else None

    def knows(self):
        """(other sentinels, replicas) this sentinel knows of."""
        m = self.ask("master", self.master)
        d = dict(zip(m[0::2], m[1::2])) if isinstance(m, list) else {}
        return int(d.get("num-other-sentinels", 0)), int(d.get("num-slaves", 0))


def run_scenario(name, fn):
    """Runs one scenario in a Fleet of its own: its PASS or FAIL line, and
    the driver's exit status (0 or 1)."""
    start = time.monotonic()
    try:
        with Fleet(name) as f:
            fn(f)
    except Failure as e:
        print("FAIL: fleet.%s: %s" % (name, e), file=sys.stderr)
        return 1
    print("PASS: fleet.%s in %.1f s" % (name, time.monotonic() - start))
    return 0
