#!/usr/bin/python3
"""How the agent is deployed (label fleet):

    deploy_test.py systemd_unit   the unit (tools/agent/lazybreaker-agent.service),
                                  its sysusers.d and tmpfiles.d files, checked by
                                  systemd's own tools
    deploy_test.py group_owner    the agent's owner rule: a file of another user in
                                  one of the agent's groups is used, a file anyone
                                  may write or of a group not the agent's is not

A missing tool (systemd-analyze, systemd-sysusers, setpriv) skips loudly
with status 77, or fails under CI=true; group_owner skips when not root.
"""

import os
import grp
import http.client
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetlib import SLACK, Failure, Fleet, check, free_port, prog, wait_for  # noqa: E402

SKIP = 77
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT_DIR = os.path.join(SOURCE, "tools", "agent")


class Skip(Exception):
    pass


def need(cond, why):
    if not cond:
        if os.environ.get("CI") == "true":
            raise Failure(why + " (CI=true: a missing tool is an error)")
        raise Skip(why)


def run(argv, **kw):
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60 * SLACK, **kw)


def systemd_unit(work):
    """systemd-analyze verify of the unit, its ExecStart the agent built
    here: any line it prints about the unit fails the test (it exits 0 on
    an unknown key or a bad value; those are warnings only). The least-
    rights settings are there; systemd-sysusers and systemd-tmpfiles make
    the user, the group and /run/lazybreaker in a scratch root."""
    analyze = shutil.which("systemd-analyze") or "/usr/bin/systemd-analyze"
    need(os.access(analyze, os.X_OK), "systemd-analyze not found (Debian: systemd)")
    with open(os.path.join(AGENT_DIR, "lazybreaker-agent.service")) as f:
        unit = f.read()
    check("\nExecStart=/usr/bin/lazybreaker-agent $LAZYBREAKER_AGENT_ARGS\n" in unit,
          "the unit starts /usr/bin/lazybreaker-agent")
    path = os.path.join(work, "lazybreaker-agent.service")
    with open(path, "w") as f:
        f.write(unit.replace("ExecStart=/usr/bin/lazybreaker-agent", "ExecStart=" + prog("AGENT")))
    r = run([analyze, "verify", "--man=no", path])
    about = [l for l in (r.stdout + r.stderr).splitlines() if "lazybreaker" in l]
    check(r.returncode == 0 and not about,
          "systemd-analyze verify: status %d, nothing about the unit%s" % (
              r.returncode, "" if not about else ": " + " | ".join(about)))
    settings = {}
    for line in unit.splitlines():
        if "=" in line and not line.startswith("#"):
            k, _, v = line.partition("=")
            settings.setdefault(k, []).append(v)
    for key, want in (("User", ["lazybreaker"]), ("Group", ["lazybreaker"]), ("DynamicUser", ["no"]),
                      ("NoNewPrivileges", ["yes"]), ("CapabilityBoundingSet", [""]),
                      ("ProtectSystem", ["strict"]), ("ProtectHome", ["yes"]),
                      ("RestrictAddressFamilies", ["AF_UNIX AF_INET AF_INET6"]),
                      ("MemoryDenyWriteExecute", ["yes"]), ("PrivateDevices", None),
                      ("ProtectProc", None)):
        check(settings.get(key) == want, "the unit: %s=%s" % (key, want if want else "(unset)"))
    # systemd's own score of the unit's exposure (0 best, 10 worst): what
    # is left is what the agent needs (the network, other users' files,
    # /proc of the services).
    r = run([analyze, "security", "--offline=yes", path])
    level = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout)
    check(r.returncode == 0 and level and float(level.group(1)) <= 2.0,
          "systemd-analyze security: exposure %s (at most 2.0 of 10)" % (level and level.group(1)))

    syscalls_allowed(analyze, unit, work)

    sysusers, tmpfiles = shutil.which("systemd-sysusers"), shutil.which("systemd-tmpfiles")
    need(sysusers and tmpfiles, "systemd-sysusers or systemd-tmpfiles not found (Debian: systemd)")
    root = os.path.join(work, "root")
    os.makedirs(os.path.join(root, "etc"))
    with open(os.path.join(AGENT_DIR, "lazybreaker.sysusers")) as f:
        r = subprocess.run([sysusers, "--root=" + root, "-"], stdin=f, capture_output=True,
                           text=True, timeout=60 * SLACK)
    with open(os.path.join(root, "etc", "passwd")) as f:
        users = [l.split(":") for l in f.read().splitlines()]
    with open(os.path.join(root, "etc", "group")) as f:
        groups = [l.split(":") for l in f.read().splitlines()]
    me = [u for u in users if u[0] == "lazybreaker"]
    group = [g for g in groups if g[0] == "lazybreaker"]
    check(r.returncode == 0 and me and group and me[0][3] == group[0][2] and int(me[0][2]) < 1000
          and me[0][6].endswith("nologin"),
          "systemd-sysusers makes the system user and group lazybreaker: %s" % (me and ":".join(me[0])))
    if os.geteuid() != 0:
        print("SKIPPED the tmpfiles.d check: not root, systemd-tmpfiles cannot give the folder "
              "its group", file=sys.stderr)
        return
    with open(os.path.join(AGENT_DIR, "lazybreaker.tmpfiles")) as f:
        r = subprocess.run([tmpfiles, "--root=" + root, "--create", "-"], stdin=f, capture_output=True,
                           text=True, timeout=60 * SLACK)
    st = os.stat(os.path.join(root, "run", "lazybreaker"))
    check(r.returncode == 0 and st.st_mode & 0o7777 == 0o2770 and st.st_gid == int(group[0][2]),
          "systemd-tmpfiles makes /run/lazybreaker mode %o, group lazybreaker (gid %d)" % (
              st.st_mode & 0o7777, st.st_gid))


def filter_of(analyze, unit):
    """The system calls the unit's SystemCallFilter= lines allow, groups
    expanded as `systemd-analyze syscall-filter` lists them."""
    groups, cur = {}, None
    for line in run([analyze, "syscall-filter"]).stdout.splitlines():
        if line.startswith("@"):
            cur = groups.setdefault(line.strip(), [])
        elif line.strip() and not line.strip().startswith("#") and cur is not None:
            cur.append(line.strip())

    def expand(name, seen):
        out = set()
        for item in groups.get(name, [name] if not name.startswith("@") else []):
            if item.startswith("@"):
                if item not in seen:
                    seen.add(item)
                    out |= expand(item, seen)
            else:
                out.add(item)
        return out
    allowed = None
    for line in unit.splitlines():
        if line.startswith("SystemCallFilter="):
            value = line.split("=", 1)[1]
            deny = value.startswith("~")
            names = set()
            for word in value.lstrip("~").split():
                names |= expand(word, set())
            allowed = (allowed or set()) - names if deny else (allowed or set()) | names
    return allowed or set()


def syscalls_allowed(analyze, unit, work):
    """Every system call the agent makes in a run (start, Redis, a trip
    published, the fleet's reset applied, --listen scraped and a forged
    Host refused, SIGTERM), traced by strace, is one the unit's
    SystemCallFilter= allows: the filter is not tested by a running systemd
    here, so what the agent does is held against it."""
    if os.environ.get("LB_FLEET_SANITIZE"):
        print("SKIPPED the system call check: a %s build's agent makes the sanitizer's calls too; "
              "the unit runs a release build" % os.environ["LB_FLEET_SANITIZE"], file=sys.stderr)
        return
    strace = shutil.which("strace")
    if not strace:
        if os.environ.get("CI") == "true":
            raise Failure("strace not found (Debian: strace; CI=true: a missing tool is an error)")
        print("SKIPPED the system call check: strace not found (Debian: strace)", file=sys.stderr)
        return
    allowed = filter_of(analyze, unit)
    check(len(allowed) > 100 and "openat" in allowed and "setuid" not in allowed,
          "the unit's filter allows %d system calls (openat, not setuid)" % len(allowed))
    trace = os.path.join(work, "agent.strace")
    with Fleet("systemd_unit") as f:
        f.start_redis()
        (a,) = f.add_hosts(1, ["pay"])
        port = free_port()
        p = f.spawn([strace, "-f", "-qq", "-o", trace, prog("AGENT"), "--file", a.file, "--redis",
                     f.redis.url(), "--host", a.id, "--interval", "50", "--listen",
                     "127.0.0.1:%d" % port], "agent.log")
        wait_for(lambda: "connected" in p.errtext() or not p.alive(), 10 * SLACK, 0.02,
                 "the traced agent to connect")
        for host in ("127.0.0.1:%d" % port, "rebound.example"):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5 * SLACK)
            c.putrequest("GET", "/metrics", skip_host=True)
            c.putheader("Host", host)
            c.endheaders()
            c.getresponse().read()
            c.close()
        a.cb("trip", "pay", "--for", "30s")
        wait_for(lambda: "published" in p.errtext(), 5 * SLACK, 0.02, "the trip published")
        f.fleet_cmd("reset", "pay")
        wait_for(lambda: "call=reset" in p.errtext(), 5 * SLACK, 0.02, "the reset applied")
        with open(trace) as t:
            agent_pid = int(t.readline().split()[0])
        os.kill(agent_pid, signal.SIGTERM)
        check(p.wait(10 * SLACK) == 0 and "stopping" in p.errtext(), "the traced agent stopped on SIGTERM")
    used = set()
    with open(trace) as t:
        for line in t:
            m = re.match(r"^\d+\s+([a-z0-9_]+)\(", line) or re.search(r"<\.\.\. ([a-z0-9_]+) resumed>", line)
            if m:
                used.add(m.group(1))
    used.discard("execve")  # strace's own exec of the agent; systemd's, under the unit
    refused = sorted(used - allowed)
    check(used and not refused, "the %d system calls the agent made are all in the unit's filter%s" % (
        len(used), "" if not refused else ": not " + ", ".join(refused)))


def group_owner(work):
    """The agent runs as nobody:nogroup (setpriv), as the unit runs it as
    lazybreaker:lazybreaker. A registry file of user daemon, group nogroup,
    mode 0660 is used (read and written: a cbctl trip on it is seen and
    published); mode 0666, or group daemon, is refused at start, status 1,
    with the reason."""
    if os.geteuid() != 0:
        raise Skip("not root: cannot give a file to another user (CI runs as root)")
    setpriv = shutil.which("setpriv")
    need(setpriv, "setpriv not found (Debian: util-linux)")
    try:
        nobody, daemon = pwd.getpwnam("nobody"), pwd.getpwnam("daemon")
        nogroup = grp.getgrnam("nogroup")
    except KeyError as e:
        raise Skip("no user or group %s" % e)
    as_nobody = [setpriv, "--reuid=%d" % nobody.pw_uid, "--regid=%d" % nogroup.gr_gid,
                 "--clear-groups", "--"]
    r = run(as_nobody + [prog("AGENT"), "--version"])
    if r.returncode != 0:
        raise Skip("user nobody cannot run %s (a folder on its path closed to others?)" % prog("AGENT"))
    with Fleet("group_owner") as f:
        os.chmod(f.work, 0o755)  # nobody reaches the files in it
        f.start_redis()
        a, b = f.add_hosts(2, ["pay"], "--open-for", "30s")
        os.chown(a.file, daemon.pw_uid, nogroup.gr_gid)
        os.chmod(a.file, 0o660)
        if run(as_nobody + ["test", "-w", a.file]).returncode != 0:
            raise Skip("user nobody cannot reach %s (a folder on its path closed to others?)" % f.work)
        p = f.spawn(as_nobody + [prog("AGENT"), "--file", a.file, "--redis", f.redis.url(),
                                 "--host", a.id, "--interval", "50"], "agent-nobody.log")
        wait_for(lambda: "connected" in p.errtext() or not p.alive(), 10 * SLACK, 0.02,
                 "the agent as nobody to connect")
        check(p.alive() and "ready" in p.errtext(),
              "a file of daemon:nogroup, mode 0660: the agent as nobody:nogroup uses it")
        a.cb("trip", "pay", "--for", "30s")
        r = f.redis.client()
        wait_for(lambda: r.hgetall(f.key("b:pay")).get("state") == "open", 3 * SLACK, 0.02,
                 "the trip on the file to reach Redis")
        check(True, "the trip on it reaches the fleet (the agent reads the file)")
        rc, _, err = f.fleet_cmd("reset", "pay")
        wait_for(lambda: a.state("pay").lower() == "closed", 3 * SLACK, 0.02, "the fleet's reset on the file")
        check(rc == 0, "the fleet's reset closes the file's breaker (the agent writes the file)")
        for uid, gid, mode, want in ((daemon.pw_uid, nogroup.gr_gid, 0o666, "writable by every user"),
                                     (daemon.pw_uid, daemon.pw_gid, 0o660, "nor a group of this user")):
            os.chown(b.file, uid, gid)
            os.chmod(b.file, mode)
            r = run(as_nobody + [prog("AGENT"), "--file", b.file, "--redis", f.redis.url(),
                                 "--host", b.id])
            check(r.returncode == 1 and want in r.stderr,
                  "a file of gid %d, mode %o: status %d: %s" % (gid, mode, r.returncode, r.stderr.strip()))
        os.chown(b.file, daemon.pw_uid, nogroup.gr_gid)
        os.chmod(b.file, 0o666)
        q = f.spawn(as_nobody + [prog("AGENT"), "--file", b.file, "--redis", f.redis.url(),
                                 "--host", b.id, "--any-owner"], "agent-any-owner.log")
        wait_for(lambda: "ready" in q.errtext() or not q.alive(), 10 * SLACK, 0.02, "--any-owner")
        check(q.alive(), "--any-owner uses the world-writable file")


SCENARIOS = {"systemd_unit": systemd_unit, "group_owner": group_owner}


def main(argv):
    if len(argv) != 2 or argv[1] not in SCENARIOS:
        print("usage: deploy_test.py %s" % "|".join(SCENARIOS), file=sys.stderr)
        return 2
    start = time.monotonic()
    base = os.environ.get("LB_FLEET_WORK") or None
    if base:
        os.makedirs(base, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fleet-%s." % argv[1], dir=base)
    try:
        SCENARIOS[argv[1]](work)
    except Skip as e:
        print("SKIPPED: fleet.%s: %s" % (argv[1], e), file=sys.stderr)
        return SKIP
    except Failure as e:
        print("FAIL: fleet.%s: %s" % (argv[1], e), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS: fleet.%s in %.1f s" % (argv[1], time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
