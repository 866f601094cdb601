#!/usr/bin/python3
"""The fleet's tests (label fleet): a real redis-server on loopback, hosts
of one registry file and one lazybreaker-agent each, cbctl and fleet_load
to act, fleet_load watch, cbctl and Redis itself to observe.

    fleet_test.py SCENARIO      (one CTest test per scenario: fleet.SCENARIO)
    fleet_test.py --list

docs/fleet.md and FLEET-DESIGN.md are the contract these check. Each
scenario bounds its own waits and stops what it started (fleetlib.Fleet).
"""

import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleetlib import (SLACK, Failure, Fleet, RedisError, check, first_in_state,  # noqa: E402
                      parse_load, parse_watch, run_scenario, wait_for, wall_ms)

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def wait_state(host, name, state, timeout, what=None):
    return wait_for(lambda: host.state(name) == state, timeout, 0.01,
                    what or "%s's %s to be %s" % (host.id, name, state))


def watched(watcher, indexes, since_ms, state="open", timeout=1.0):
    """Waits for the breaker of every watched host index to show `state`
    in the watcher's output after since_ms; {index: (t_ms, retry_ms)}."""
    def all_there():
        rows = parse_watch(watcher.text())
        seen = {i: first_in_state(rows, i, state, since_ms) for i in indexes}
        return seen if all(seen.values()) else None
    try:
        return wait_for(all_there, timeout + 2 * SLACK, 0.005, "hosts %s %s" % (list(indexes), state))
    except Failure:
        rows = parse_watch(watcher.text())
        raise Failure("not every host became %s; the watcher saw %s" % (state, rows[-12:]))


def watched_open(f, watcher, hosts, since_ms, state="open", timeout=1.0):
    return watched(watcher, range(len(hosts)), since_ms, state, timeout)


# --------------------------------------------------------------------------


@scenario
def trip_propagates(f):
    """A trip on A (cb_trip through cbctl) is OPEN on B and C within 1 s,
    with the same remaining time (+-100 ms); the fleet counts it once. A
    cb_force_open on B reaches A and C as FORCED_OPEN."""
    f.start_redis()
    hosts = f.add_hosts(3, ["payments", "ledger"], "--open-for", "30s")
    for h in hosts:
        h.start_agent()
    a, b, c = hosts
    w = f.watch("payments", hosts)
    t0 = wall_ms()
    a.cb("trip", "payments", "--for", "20s")
    seen = watched_open(f, w, hosts, t0)
    ta = seen[0][0]
    for i, h in enumerate(hosts[1:], 1):
        lat = seen[i][0] - ta
        check(lat <= 1000 * SLACK, "%s OPEN %d ms after A (bound %d ms)" % (h.id, lat, 1000 * SLACK))
    # Same remaining time: the wall deadline each host holds.
    da = a.deadline_ms("payments")
    for h in (b, c):
        dh = h.deadline_ms("payments")
        check(dh is not None and abs(dh - da) <= 100 * SLACK,
              "%s's open period ends %+.0f ms from A's (bound 100 ms)" % (h.id, dh - da))
        check(18000 < dh - wall_ms() <= 20000, "%s has about 20 s left" % h.id)
    r = f.redis.client()
    fleet = r.hgetall(f.key("b:payments"))
    check(fleet.get("state") == "open", "the fleet's payments is open in Redis (%s)" % fleet)
    check(fleet.get("trips") == "1", "the fleet counts the mirrored trip once (trips=%s)" % fleet.get("trips"))
    time.sleep(0.5)
    for h in hosts:
        check(h.state("payments") == "OPEN", "%s still OPEN" % h.id)
    check(r.hgetall(f.key("b:payments")).get("trips") == "1", "still one fleet trip after 0.5 s")
    check(all(x in r.command("SMEMBERS", f.key("names")) for x in ("payments", "ledger")),
          "the names set holds both breakers")

    w2 = f.watch("ledger", hosts, tag="2")
    t1 = wall_ms()
    b.cb("force-open", "ledger")
    seen = watched_open(f, w2, hosts, t1, "forced_open")
    for i in (0, 2):
        lat = seen[i][0] - seen[1][0]
        check(lat <= 1000 * SLACK, "%s FORCED_OPEN %d ms after B's force-open" % (hosts[i].id, lat))
    check(r.hgetall(f.key("b:ledger")).get("state") == "forced_open", "the fleet's ledger is forced_open")


@scenario
def one_probe(f):
    """Three hosts call one failing dependency (fleet_load on each): each
    recovery of the fleet sends one probe, not three; the successful probe
    closes every host within 1 s."""
    f.start_redis()
    hosts = f.add_hosts(3, ["pay"], "--open-for", "600ms", "--failure-threshold", "5")
    for h in hosts:
        h.start_agent()
    flag = os.path.join(f.work, "failing")
    open(flag, "w").close()
    w = f.watch("pay", hosts, duration=30)
    loads = [f.load(h, "pay", flag, rate=100, duration=20) for h in hosts]
    r = f.redis.client()

    def fleet_trips():
        v = r.hgetall(f.key("b:pay")).get("trips", "0")
        return int(v) if v.isdigit() else 0
    # The first trip and at least three failed probes, then the dependency heals.
    wait_for(lambda: fleet_trips() >= 4, 12 * SLACK, 0.05, "four fleet periods")
    os.remove(flag)
    healed = wall_ms()
    for h in hosts:
        wait_state(h, "pay", "CLOSED", 5 * SLACK)
    time.sleep(0.3)
    for ld in loads:
        ld.signal(signal.SIGTERM)
    for ld in loads:
        check(ld.wait(5) == 0, "fleet_load ends with status 0")
    probes = []
    for h, ld in zip(hosts, loads):
        _, ps, done = parse_load(ld.text())
        check(done is not None, "fleet_load on %s reported its calls" % h.id)
        print("     %s: %d probes, %s" % (h.id, len(ps), done))
        probes += [(t, h.id, o) for t, o in ps]
    probes.sort()
    trips = fleet_trips()
    print("     fleet trips %d; probes %s" % (trips, [(t - probes[0][0], hid, o) for t, hid, o in probes]))
    check(len(probes) >= 4, "at least four recoveries were probed (%d probes)" % len(probes))
    gaps = [b[0] - a[0] for a, b in zip(probes, probes[1:])]
    check(min(gaps) >= 400, "never two probes in one recovery: probes at least 400 ms apart "
          "(the open period is 600 ms; smallest gap %d ms)" % min(gaps))
    check(len(probes) == trips, "one probe per fleet period: %d probes, %d fleet trips" % (len(probes), trips))
    check(probes[-1][2] == "success" and all(o == "failure" for _, _, o in probes[:-1]),
          "every probe but the last failed, the last succeeded")
    rows = parse_watch(w.text())
    ok_t = probes[-1][0]
    for i, h in enumerate(hosts):
        closed = first_in_state(rows, i, "closed", ok_t - 20)
        check(closed is not None and closed[0] - ok_t <= 1000 * SLACK,
              "%s CLOSED %s ms after the successful probe" % (h.id, closed and closed[0] - ok_t))
    del healed


@scenario
def operator_commands(f):
    """cbctl fleet trip --for, force-open, disable and reset reach every host
    within 1 s; list and show report the fleet; a host-local cbctl reset
    stays on that host."""
    f.start_redis()
    hosts = f.add_hosts(3, ["pay"], "--open-for", "30s")
    for h in hosts:
        h.start_agent()
    w = f.watch("pay", hosts)
    r = f.redis.client()

    def op(*args):
        rc, out, err = f.fleet_cmd(*args)
        check(rc == 0, "cbctl fleet %s: status %d %s" % (" ".join(args), rc, err.strip()))
        return out

    t = wall_ms()
    op("trip", "pay", "--for", "15s")
    seen = watched_open(f, w, hosts, t, "open")
    deadlines = [h.deadline_ms("pay") for h in hosts]
    for i, h in enumerate(hosts):
        check(seen[i][0] - t <= 1000 * SLACK, "fleet trip: %s OPEN after %d ms" % (h.id, seen[i][0] - t))
        check(abs(deadlines[i] - (t + 15000)) <= 300 * SLACK,
              "fleet trip: %s's period ends %+.0f ms from 15 s after the command" % (h.id, deadlines[i] - t - 15000))
    check(max(deadlines) - min(deadlines) <= 100 * SLACK, "fleet trip: the same deadline on all hosts (spread %.0f ms)"
          % (max(deadlines) - min(deadlines)))
    out = op("show", "pay")
    fields = dict(l.split(":", 1) for l in out.splitlines() if ":" in l)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    check(fields.get("state", "").lower() == "open", "cbctl fleet show: state: open (%s)" % fields.get("state"))
    check(fields.get("epoch", "").isdigit(), "cbctl fleet show: epoch: %s" % fields.get("epoch"))
    epoch1 = int(fields["epoch"])
    check(all(h.id in fields.get("hosts", "") for h in hosts) or fields.get("hosts") == "3",
          "cbctl fleet show: hosts: %s" % fields.get("hosts"))
    out = op("list")
    lines = out.splitlines()
    check(lines and lines[0].split() == ["NAME", "STATE", "REMAINING", "HOSTS", "TRIPS"],
          "cbctl fleet list's header (no counts without --fleet-counts): %s" % (lines[:1],))
    row = [l for l in lines[1:] if l.split()[:1] == ["pay"]]
    check(len(row) == 1 and row[0].split()[1].upper() == "OPEN", "cbctl fleet list: pay OPEN (%s)" % row)

    # A host-local reset stays on that host.
    hosts[0].cb("reset", "pay")
    time.sleep(1.0 * SLACK)
    check(hosts[0].state("pay") == "CLOSED", "cbctl reset on A: A is CLOSED")
    check(hosts[1].state("pay") == "OPEN" and hosts[2].state("pay") == "OPEN",
          "a host-local reset stays on that host: B and C still OPEN after 1 s")
    check(r.hgetall(f.key("b:pay")).get("state") == "open", "and the fleet still open")

    for cmd, state in (("reset", "closed"), ("force-open", "forced_open"), ("reset", "closed"),
                       ("disable", "disabled"), ("reset", "closed")):
        t = wall_ms()
        op(cmd, "pay")
        seen = watched_open(f, w, hosts, t, state)
        worst = max(seen[i][0] for i in seen) - t
        check(worst <= 1000 * SLACK, "cbctl fleet %s: every host %s within %d ms" % (cmd, state.upper(), worst))
        fs = r.hgetall(f.key("b:pay"))
        check(fs.get("state") == state and fs.get("by") == "operator",
              "the fleet's pay is %s by operator (%s, %s)" % (state, fs.get("state"), fs.get("by")))
    epoch2 = int(r.hgetall(f.key("b:pay"))["epoch"])
    check(epoch2 >= epoch1 + 5, "every operator command moved the epoch (%d -> %d)" % (epoch1, epoch2))

    rc, out, err = f.fleet_cmd("trip", "pay", "--for", "0s")
    check(rc == 2, "cbctl fleet trip --for 0s is status 2 (%d %s)" % (rc, err.strip()))
    rc, out, err = f.cbctl("fleet", "list", "--redis", "redis://127.0.0.1:1")
    check(rc == 7, "cbctl fleet list against a closed port is status 7 (%d %s)" % (rc, err.strip()))
    rc, out, err = f.cbctl("fleet", "list", "--redis", f.redis.url(), "--fleet", "bad name!")
    check(rc == 2, "cbctl fleet list --fleet 'bad name!' is status 2 (%d %s)" % (rc, err.strip()))


@scenario
def redis_restart(f):
    """Redis killed; a trip on B while it is down; Redis restarted empty: A
    and C OPEN within 5 s with B's deadline, and the fleet repopulated."""
    f.start_redis()
    hosts = f.add_hosts(3, ["pay"], "--open-for", "30s")
    for h in hosts:
        h.start_agent()
    a, b, c = hosts
    f.redis.kill()
    time.sleep(0.3)
    t = time.monotonic()
    b.cb("trip", "pay", "--for", "30s")
    check(time.monotonic() - t < 2 * SLACK, "cbctl trip on B works while Redis is down")
    check(a.state("pay") == "CLOSED" and c.state("pay") == "CLOSED", "A and C CLOSED while Redis is down")
    time.sleep(0.7)
    for h in hosts:
        check(h.agent.alive(), "agent %s survives Redis going away" % h.id)
    f.redis.start()
    up = time.monotonic()
    for h in (a, c):
        wait_state(h, "pay", "OPEN", 5 * SLACK)
        check(time.monotonic() - up <= 5 * SLACK, "%s OPEN %.2f s after Redis came back" % (h.id, time.monotonic() - up))
    db = b.deadline_ms("pay")
    for h in (a, c):
        d = h.deadline_ms("pay")
        check(abs(d - db) <= 100 * SLACK, "%s's period ends %+.0f ms from B's" % (h.id, d - db))
    r = f.redis.client()
    fs = r.hgetall(f.key("b:pay"))
    check(fs.get("state") == "open", "the restarted Redis holds the fleet's pay as open (%s)" % fs)
    for h in hosts:
        check(len(h.log_lines("connected")) >= 2, "agent %s reconnected" % h.id)


@scenario
def redis_slow(f):
    """Redis stuck for 3 s (DEBUG SLEEP): the request path never waits for
    it (calls go on at their rate, cbctl on a host answers at once), and
    once Redis answers again a trip made meanwhile reaches the other host."""
    import threading
    f.start_redis(extra=["--enable-debug-command", "local"])
    a, b = f.add_hosts(2, ["pay", "calls"], "--open-for", "30s")
    for h in (a, b):
        h.start_agent()
    stuck = f.redis.client()
    sleeper = threading.Thread(target=lambda: stuck.command("DEBUG", "SLEEP", "3"), daemon=True)
    flag = os.path.join(f.work, "never")
    ld = f.load(a, "calls", flag, rate=200, duration=2.5)
    time.sleep(0.2)
    sleeper.start()
    time.sleep(0.3)
    t = time.monotonic()
    a.cb("trip", "pay", "--for", "20s")
    took = time.monotonic() - t
    check(took < 1.0 * SLACK, "cbctl trip on A took %.2f s while Redis is stuck" % took)
    check(ld.wait(10 * SLACK) == 0, "fleet_load ran through Redis's stall")
    done = parse_load(ld.text())[2]
    calls = done["admitted"] + done["rejected"]
    check(calls >= 0.9 * 200 * 2.5, "it made %d of its %d calls while Redis was stuck (no stall)" % (calls, 500))
    sleeper.join(10)
    woke = time.monotonic()
    wait_state(b, "pay", "OPEN", 3 * SLACK)
    check(True, "B OPEN %.2f s after Redis answered again" % (time.monotonic() - woke))
    for h in (a, b):
        check(h.agent.alive(), "agent %s survived the stall" % h.id)


@scenario
def lease_holder_killed(f):
    """The agent that holds the probe lease is killed (SIGKILL): no host
    probes until the lease runs out, then another host probes."""
    lease_holder_silenced(f, signal.SIGKILL)


@scenario
def lease_holder_stopped(f):
    """The agent that holds the probe lease is stopped (SIGSTOP, silent):
    the same; once continued, it rejoins and the fleet closes together."""
    lease_holder_silenced(f, signal.SIGSTOP)


def lease_holder_silenced(f, sig):
    f.start_redis()
    hosts = f.add_hosts(3, ["pay"], "--open-for", "1500ms", "--failure-threshold", "3")
    for h in hosts:
        h.start_agent(interval="100")
    by_id = {h.id: h for h in hosts}
    flag = os.path.join(f.work, "failing")
    open(flag, "w").close()
    loads = {h.id: f.load(h, "pay", flag, rate=100, duration=20) for h in hosts}
    r = f.redis.client()
    lease_key = f.key("lease:pay")

    def lease():
        return r.command("GET", lease_key)
    # The first lease of the first period.
    holder = wait_for(lease, 8 * SLACK, 0.002, "a probe lease on pay")
    pttl = r.command("PTTL", lease_key)
    epoch = r.hgetall(f.key("b:pay")).get("epoch")
    check(holder in by_id, "the lease names a host (%s)" % holder)
    victim = by_id[holder]
    victim.agent.signal(sig)
    killed = wall_ms()
    expiry = killed + pttl
    print("     %s held the lease (PTTL %d ms) at epoch %s; sent %s" % (holder, pttl, epoch, sig.name))
    if sig == signal.SIGKILL:
        victim.agent.wait(5)
    check(r.hgetall(f.key("b:pay")).get("epoch") == epoch,
          "the silenced holder had not published a verdict yet (epoch still %s)" % epoch)
    others = [h for h in hosts if h is not victim]

    def other_probe():
        for h in others:
            _, ps, _ = parse_load(loads[h.id].text())
            ps = [p for p in ps if p[0] >= killed]
            if ps:
                return h, ps[0][0]
        return None
    found = wait_for(other_probe, (pttl / 1000.0 + 3) * SLACK, 0.01, "another host to probe")
    h, t = found
    print("     %s probed %d ms after the signal; the lease ran out %d ms after it" % (h.id, t - killed, pttl))
    check(t >= expiry - 150, "no other host probed before the lease ran out (%s's probe: %+d ms from its end)" % (
        h.id, t - expiry))
    check(t <= expiry + 2000 * SLACK, "%s probed %d ms after the lease ran out" % (h.id, t - expiry))
    wait_for(lambda: r.hgetall(f.key("b:pay")).get("epoch") != epoch, 2 * SLACK, 0.01,
             "the new prober's verdict in Redis")
    # The dependency heals: the survivors close (and a continued one with them).
    if sig == signal.SIGSTOP:
        victim.agent.signal(signal.SIGCONT)
        others = hosts
    os.remove(flag)
    for h in others:
        wait_state(h, "pay", "CLOSED", 8 * SLACK)
    check(True, "%s CLOSED once the dependency healed" % ", ".join(h.id for h in others))
    if sig == signal.SIGSTOP:
        check(victim.agent.alive(), "the continued agent runs on")


@scenario
def agent_stopped(f):
    """An agent stopped with SIGSTOP wedges nothing: its host's breakers go
    on locally, the other hosts go on through Redis; once continued it
    catches up with what the fleet did meanwhile."""
    f.start_redis()
    hosts = f.add_hosts(3, ["pay", "other"], "--open-for", "1s", "--failure-threshold", "3")
    for h in hosts:
        h.start_agent()
    a, b, c = hosts
    a.agent.signal(signal.SIGSTOP)
    time.sleep(0.2)
    t = time.monotonic()
    a.cb("trip", "pay", "--for", "1s")
    out = a.cb("show", "pay")
    check(time.monotonic() - t < 2 * SLACK, "cbctl on A is not held up by A's stopped agent")
    check("OPEN" in out, "A's pay OPEN locally")
    # A's application goes on: its breaker probes and closes by itself.
    flag = os.path.join(f.work, "never")
    ld = f.load(a, "pay", flag, rate=100, duration=3)
    check(ld.wait(10 * SLACK) == 0, "fleet_load on A ran while A's agent was stopped")
    trans, probes, done = parse_load(ld.text())
    check([s for _, s, _ in trans][-2:] == ["half_open", "closed"],
          "A's breaker probed and closed on its own (%s)" % trans)
    # The rest of the fleet goes on.
    w = f.watch("other", hosts)
    t0 = wall_ms()
    b.cb("trip", "other", "--for", "20s")
    seen = watched(w, (1, 2), t0)
    check(seen[2][0] - seen[1][0] <= 1000 * SLACK, "C OPEN %d ms after B's trip while A's agent is stopped"
          % (seen[2][0] - seen[1][0]))
    rows = parse_watch(w.text())
    check(first_in_state(rows, 0, "open", t0) is None, "A, whose agent is stopped, not yet")
    time.sleep(0.5)
    a.agent.signal(signal.SIGCONT)
    cont = wall_ms()
    got = wait_for(lambda: first_in_state(parse_watch(w.text()), 0, "open", cont - 5), 2 * SLACK, 0.01,
                   "A to catch up")
    check(got[0] - cont <= 1000 * SLACK, "A OPEN %d ms after its agent continued" % (got[0] - cont))
    da, db = a.deadline_ms("other"), b.deadline_ms("other")
    check(abs(da - db) <= 100 * SLACK, "with B's deadline (%+.0f ms)" % (da - db))
    check(a.agent.alive(), "A's agent runs on")


@scenario
def redis_flushed(f):
    """FLUSHALL mid-run: the agents notice (the instance key is gone),
    repopulate the fleet from their local state, and the fleet goes on."""
    f.start_redis()
    hosts = f.add_hosts(3, ["pay", "other"], "--open-for", "30s")
    for h in hosts:
        h.start_agent()
    a, b, c = hosts
    r = f.redis.client()
    wait_for(lambda: r.command("EXISTS", f.key("instance")), 3 * SLACK, 0.02, "the instance key")
    a.cb("trip", "pay", "--for", "20s")
    for h in (b, c):
        wait_state(h, "pay", "OPEN", 1 * SLACK + 1)
    before = r.hgetall(f.key("b:pay"))
    r.command("FLUSHALL")
    # Noticed at the next heartbeat (every 5 s), or at once by the next change.
    wait_for(lambda: r.command("EXISTS", f.key("instance")), 6 * SLACK, 0.02, "the instance key again")
    wait_for(lambda: r.hgetall(f.key("b:pay")).get("state") == "open", 3 * SLACK, 0.02,
             "the fleet's pay repopulated as open")
    after = r.hgetall(f.key("b:pay"))
    check(abs(int(after["until_ms"]) - int(before["until_ms"])) <= 100 * SLACK,
          "repopulated with the same deadline (%s vs %s)" % (after.get("until_ms"), before.get("until_ms")))
    wait_for(lambda: set(r.command("SMEMBERS", f.key("names")) or []) >= {"pay", "other"}, 3 * SLACK, 0.02,
             "the names set repopulated")
    check(any(h.log_lines("repopulated") for h in hosts), "an agent logged 'repopulated'")
    for h in hosts:
        check(h.state("pay") == "OPEN", "%s still OPEN after the flush" % h.id)
    w = f.watch("other", hosts)
    t0 = wall_ms()
    b.cb("trip", "other", "--for", "20s")
    seen = watched_open(f, w, hosts, t0)
    for i in (0, 2):
        check(seen[i][0] - seen[1][0] <= 1000 * SLACK, "after the flush a trip on B reaches %s in %d ms" % (
            hosts[i].id, seen[i][0] - seen[1][0]))
    rc, out, err = f.fleet_cmd("reset", "pay")
    check(rc == 0, "cbctl fleet reset pay after the flush")
    for h in hosts:
        wait_state(h, "pay", "CLOSED", 1 * SLACK + 1)
    check(True, "every host CLOSED by the fleet reset")


@scenario
def garbage(f):
    """Foreign values and wrong types under the fleet's keys are logged
    ('ignored') and skipped: the agents survive, breakers the garbage names
    do not move, and real changes still propagate."""
    f.start_redis()
    hosts = f.add_hosts(2, ["payments", "inventory", "search", "extra"], "--open-for", "30s")
    for h in hosts:
        h.start_agent()
    a, b = hosts
    r = f.redis.client()
    k = f.key
    cmds = [
        ("DEL", k("b:payments")), ("SET", k("b:payments"), "not a hash"),
        ("HSET", k("b:ghost"), "epoch", "abc", "state", "melting", "until_ms", "soon"),
        ("HSET", k("b:inventory"), "epoch", "-3", "state", "open", "until_ms", "xyz"),
        ("HSET", k("b:inventory"), "epoch", "99999999999999999999999", "state", "open"),
        ("SADD", k("names"), "ghost", "", "x" * 400),
        ("DEL", k("lease:inventory")), ("HSET", k("lease:inventory"), "a", "b"),
        ("XADD", k("log"), "*", "name", "inventory", "epoch", "notanumber"),
        ("XADD", k("log"), "*", "foo", "bar"),
        ("XADD", k("log"), "*", "name", "ghost", "epoch", "5"),
        ("XADD", k("log"), "*", "name", "payments", "epoch", "7"),
        ("XADD", k("log"), "*", "seq", "x", "by", "hostA", "b:inventory", "1 open notanumber 0 trip"),
        ("XADD", k("log"), "*", "seq", "999", "by", "hostA", "b:payments", "9 melting 0 0 trip"),
        ("ZADD", k("hosts"), str(wall_ms() + 60000), "intruder"), ("HSET", k("hostsets"), "intruder", "junk"),
        ("SET", k("nameset:junk"), "not a set"), ("SET", k("zzz-foreign"), "hello"),
        ("HSET", k("b:"), "epoch", "1", "state", "open"),
        ("HSET", k("b:" + "n" * 300), "epoch", "1", "state", "open", "until_ms", str(wall_ms() + 60000)),
    ]
    for cmd in cmds:
        try:
            r.command(*cmd)
        except RedisError as e:
            print("     (redis refused %s: %s)" % (cmd[:2], e))
    time.sleep(1.0 * SLACK)
    for h in hosts:
        check(h.agent.alive(), "agent %s survives the garbage" % h.id)
    check(any(h.log_lines("ignored") for h in hosts), "the garbage was logged as 'ignored'")
    for h in hosts:
        check(h.state("inventory") == "CLOSED", "%s's inventory did not move on a garbage hash" % h.id)
        check(h.state("payments") == "CLOSED", "%s's payments did not move" % h.id)
    w = f.watch("search", hosts)
    t0 = wall_ms()
    a.cb("trip", "search", "--for", "20s")
    seen = watched_open(f, w, hosts, t0)
    check(seen[1][0] - seen[0][0] <= 1000 * SLACK, "a trip on A still reaches B (%d ms)" % (seen[1][0] - seen[0][0]))
    # Worse: the stream and the instance key of the wrong type.
    repop = [len(h.log_lines("repopulated")) for h in hosts]
    for cmd in [("DEL", k("log")), ("SET", k("log"), "not a stream"),
                ("DEL", k("instance")), ("HSET", k("instance"), "x", "y")]:
        r.command(*cmd)
    time.sleep(1.5 * SLACK)
    for h, before in zip(hosts, repop):
        check(h.agent.alive(), "agent %s survives a log and an instance of the wrong type" % h.id)
        n = len(h.log_lines("repopulated")) - before
        # A foreign instance value is one change of instance at most, never
        # a repopulation (epochs back to 0, every hash applied again) per poll.
        check(n <= 1, "agent %s repopulated %d times in %.1f s over a wrong-typed instance key (at most once)"
              % (h.id, n, 1.5 * SLACK))
    rc, out, err = f.fleet_cmd("list")
    check(rc in (0, 8), "cbctl fleet list over the garbage: status %d (0 or 8), no crash: %s" % (rc, err.strip()))
    rc, out, err = f.fleet_cmd("show", "payments")
    # 8: data that is not ours; 3: no fleet breaker of that name (cbctl's "no
    # breaker has that name"), the wrong-typed key being skipped.
    check(rc in (3, 8) and err.strip(), "cbctl fleet show of a wrong-typed breaker: status %d (3 or 8): %s" % (
        rc, err.strip()))


@scenario
def sigterm(f):
    """The agent exits 0 on SIGTERM and on SIGINT, connected or not; a file
    that does not exist yet is waited for (docs/fleet.md) and picked up."""
    f.start_redis()
    (a,) = f.add_hosts(1, ["pay"])
    (late,) = f.add_hosts(1)
    late.start_agent(wait_connected=False)
    late.wait_log("waiting", 5 * SLACK)
    check(late.log_lines("waiting") and late.agent.alive(), "an agent given a missing file waits for it")
    late.create("pay", "--open-for", "30s")
    helper = a.start_agent()
    late.cb("trip", "pay", "--for", "20s")
    wait_state(a, "pay", "OPEN", 2 * SLACK)
    check(True, "the file, created later, is picked up: its trip reaches A")
    a.cb("reset", "pay")
    helper.signal(signal.SIGTERM)
    check(helper.wait(5 * SLACK) == 0, "(A's agent stopped)")
    for sig in (signal.SIGTERM, signal.SIGINT):
        p = a.start_agent()
        time.sleep(0.2)
        p.signal(sig)
        rc = p.wait(5 * SLACK)
        check(rc == 0, "the agent exits 0 on %s (status %s)" % (sig.name, rc))
    line = a.log_lines("ready")[0]
    check("host=hostA" in line and "fleet=default" in line and "files=1" in line,
          "its ready line names the host, fleet and files: %s" % line)
    # Redis unreachable: ready all the same, and a clean exit.
    p = a.start_agent(redis="redis://127.0.0.1:1", wait_connected=False)
    time.sleep(0.5)
    check(p.alive(), "the agent keeps running while Redis is unreachable")
    p.signal(signal.SIGTERM)
    check(p.wait(5 * SLACK) == 0, "and exits 0 on SIGTERM")


@scenario
def bad_arguments(f):
    """Bad arguments are status 2 with a message; a file it cannot open, 1."""
    (a,) = f.add_hosts(1, ["pay"])
    url = "redis://127.0.0.1:6399"
    junk = os.path.join(f.work, "junk.lbr")
    with open(junk, "wb") as j:
        j.write(b"this is not a registry file" * 100)
    agent = os.environ["AGENT"]
    import subprocess
    cases = [
        ([], 2), (["--redis", url], 2), (["--file", a.file], 2),
        (["--file", a.file, "--redis", "http://127.0.0.1:6379"], 2),
        (["--file", a.file, "--redis", "redis://127.0.0.1:notaport"], 2),
        (["--file", a.file, "--redis", "redis://127.0.0.1:70000"], 2),
        (["--file", a.file, "--redis", url, "--interval", "0"], 2),
        (["--file", a.file, "--redis", url, "--interval", "abc"], 2),
        (["--file", a.file, "--redis", url, "--interval", "-5"], 2),
        (["--file", a.file, "--redis", url, "--fleet", "bad name!"], 2),
        (["--file", a.file, "--redis", url, "--fleet", "x" * 65], 2),
        (["--file", a.file, "--redis", url, "--fleet", ""], 2),
        (["--file", a.file, "--redis", url, "--bogus"], 2),
        (["--file", a.file, "--redis", url, "--listen", "nonsense"], 2),
        (["--file", a.file, "--redis", url, "--host", ""], 2),
        (["--file", junk, "--redis", url], 1),
    ]
    wrong = []
    for args, want in cases:
        shown = " ".join(os.path.basename(x) if x.startswith(f.work) else x for x in args)[:100]
        try:
            p = subprocess.run([agent] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=5 * SLACK)
            rc, err = p.returncode, p.stderr.strip()
        except subprocess.TimeoutExpired:
            rc, err = "still running after %ds" % (5 * SLACK), ""
        said = err.splitlines()[0][:100] if err else ""
        line = "lazybreaker-agent %s: status %s (want %d), says '%s'" % (shown, rc, want, said)
        # Every case is tried; the test fails after, listing each wrong one.
        if rc == want and err.startswith("lazybreaker-agent: "):
            print("ok   " + line)
        else:
            print("BAD  " + line)
            wrong.append(line)
    check(not wrong, "bad arguments: 2, a file it cannot open: 1, each with a 'lazybreaker-agent: ' message "
          "(%d wrong:\n  %s)" % (len(wrong), "\n  ".join(wrong)))
    p = subprocess.run([agent, "--file", a.file, "--redis", url, "--password-file",
                        os.path.join(f.work, "nopass")], capture_output=True, text=True, timeout=10 * SLACK)
    check(p.returncode in (1, 2) and "nopass" in p.stderr,
          "a missing --password-file: status %d, names the file" % p.returncode)


@scenario
def password(f):
    """Redis with --requirepass: the password from --password-file or the
    URL connects; a wrong or missing one is a clear error; cbctl fleet
    takes --password-file and says 7 for a refused password."""
    f.start_redis(password="s3cret-pw")
    a, b, c, d = f.add_hosts(4, ["pay"], "--open-for", "30s")
    good = os.path.join(f.work, "good.pw")
    with open(good, "w") as g:
        g.write("s3cret-pw\n")
    bad = os.path.join(f.work, "bad.pw")
    with open(bad, "w") as g:
        g.write("wrong\n")
    os.chmod(good, 0o600)
    os.chmod(bad, 0o600)
    a.start_agent("--password-file", good)
    b.start_agent(redis=f.redis.url("default:s3cret-pw"))
    c.start_agent("--password-file", bad, wait_connected=False)
    d.start_agent(wait_connected=False)
    w = f.watch("pay", [a, b])
    t0 = wall_ms()
    a.cb("trip", "pay", "--for", "20s")
    seen = watched_open(f, w, [a, b], t0)
    check(seen[1][0] - seen[0][0] <= 1000 * SLACK, "with passwords, a trip on A reaches B (%d ms)" % (
        seen[1][0] - seen[0][0]))
    time.sleep(0.5)
    for h, why in ((c, "wrong"), (d, "missing")):
        text = h.agent.errtext().lower()
        check(not h.log_lines("connected"), "the agent with a %s password never says connected" % why)
        check(any(w in text for w in ("auth", "password", "wrongpass", "noauth")),
              "the agent with a %s password says why: %s" % (why, text.strip().splitlines()[-1:]))
        check(h.state("pay") == "CLOSED", "and its host is not touched")
    rc, out, err = f.fleet_cmd("list", password_file=good)
    check(rc == 0 and "pay" in out, "cbctl fleet list --password-file: status %d" % rc)
    rc, out, err = f.fleet_cmd("list", password_file=bad)
    check(rc == 7 and err.strip(), "cbctl fleet list with a wrong password: status %d, '%s'" % (rc, err.strip()))
    rc, out, err = f.fleet_cmd("list")
    check(rc == 7 and err.strip(), "cbctl fleet list without the password: status %d, '%s'" % (rc, err.strip()))
    # The ACL docs/fleet.md gives, as written there, is enough for the fleet.
    doc = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "fleet.md")).read()
    acl = re.search(r"ACL SETUSER lazybreaker on >PASSWORD\s+([^`]*)`", doc)
    check(acl, "docs/fleet.md gives the agents' ACL")
    rules = acl.group(1).replace("{payments}", "{default}").split()
    f.redis.client(password="s3cret-pw").command("ACL", "SETUSER", "lazybreaker", "on", ">acl-pw", *rules)
    e, g = f.add_hosts(2, ["pay", "ledger"], "--open-for", "1s", "--failure-threshold", "2")
    for h in (e, g):
        h.start_agent(redis=f.redis.url("lazybreaker:acl-pw"))
    flag = os.path.join(f.work, "failing")
    open(flag, "w").close()
    load = f.load(e, "ledger", flag, rate=100, duration=20)
    wait_state(g, "ledger", "OPEN", 3 * SLACK)
    e.wait_log("lease", 5 * SLACK)
    os.remove(flag)
    wait_state(g, "ledger", "CLOSED", 5 * SLACK)
    load.end()
    for h in (e, g):
        check(not h.log_lines("ignored") and len(h.log_lines("connected")) == 1,
              "%s ran as the ACL user without a refusal: %s" % (h.id, h.log_lines("ignored")[:2]))


@scenario
def publication_slack(f):
    """Who wins when hosts trip one after another: a host that has heard
    the fleet's period drops its own trip when it ends no later than the
    fleet's plus the slack (1 s at this interval); one that ends later
    still extends the fleet's period, and every host follows it."""
    f.start_redis()
    a, b, c = hosts = f.add_hosts(3, ["pay"], "--open-for", "30s")
    for h in hosts:
        h.start_agent()
    r = f.redis.client()
    a.cb("trip", "pay", "--for", "20s")
    for h in (b, c):
        wait_state(h, "pay", "OPEN", 1 * SLACK + 1)
    before = r.hgetall(f.key("b:pay"))
    # B's own period ends 0.5 s after the fleet's, however late this runs
    # (the sanitizer builds are slow to get here).
    b.cb("trip", "pay", "--for", "%dms" % (int(before["until_ms"]) - wall_ms() + 500))
    time.sleep(0.6 * SLACK)
    after = r.hgetall(f.key("b:pay"))
    check(after.get("epoch") == before.get("epoch") and after.get("until_ms") == before.get("until_ms"),
          "B's trip ending 0.5 s after the fleet's was dropped: epoch %s -> %s, until %s -> %s" % (
              before.get("epoch"), after.get("epoch"), before.get("until_ms"), after.get("until_ms")))
    check(not [l for l in b.log_lines("published") + b.log_lines("absorbed") if "breaker=pay" in l],
          "B told the fleet nothing of its covered trip")
    t = wall_ms()
    c.cb("trip", "pay", "--for", "60s")
    wait_for(lambda: r.hgetall(f.key("b:pay")).get("by") == c.id, 2 * SLACK, 0.02,
             "C's later-ending trip to extend the fleet's period")
    until = int(r.hgetall(f.key("b:pay"))["until_ms"])
    check(abs(until - (t + 60000)) <= 300 * SLACK, "the fleet's period is C's (%+d ms)" % (until - t - 60000))
    check(r.hgetall(f.key("b:pay")).get("trips") == "1", "still one fleet trip (an extension counts none)")
    for h in (a, b):
        wait_for(lambda: abs(h.deadline_ms("pay") - until) <= 150 * SLACK, 2 * SLACK, 0.05,
                 "%s to hold pay OPEN to C's end" % h.id)


@scenario
def lease_demand(f):
    """Only hosts whose calls wait for a probe claim the lease: with calls
    on A alone, every period's lease is A's, B and C never claim and never
    probe, and they follow A's verdicts."""
    f.start_redis()
    a, b, c = hosts = f.add_hosts(3, ["pay"], "--open-for", "800ms", "--failure-threshold", "3")
    for h in hosts:
        h.start_agent(interval="50")
    flag = os.path.join(f.work, "failing")
    open(flag, "w").close()
    load = f.load(a, "pay", flag, rate=100, duration=30)
    r = f.redis.client()
    holders = set()

    def periods():
        holder = r.command("GET", f.key("lease:pay"))
        if holder:
            holders.add(holder)
        return int(r.hgetall(f.key("b:pay")).get("epoch", "0")) >= 4
    wait_for(periods, 12 * SLACK, 0.005, "four fleet periods")
    check(holders == {a.id}, "every lease was A's (%s)" % sorted(holders))
    for h in (b, c):
        check(not h.log_lines("lease"), "%s never claimed a lease" % h.id)
        check(h.state("pay") in ("OPEN", "HALF_OPEN"), "%s follows the fleet (%s)" % (h.id, h.state("pay")))
    os.remove(flag)
    for h in hosts:
        wait_state(h, "pay", "CLOSED", 8 * SLACK)
    check(True, "A's successful probe closed every host")
    load.end()


@scenario
def grafana(f):
    """A real Prometheus (Debian's) scrapes two agents' --listen: each of the
    Grafana dashboard's "Fleet:" panels returns data, and the fleet's
    rejected calls are the sum of the hosts'."""
    import json as jsonlib
    import urllib.parse
    import urllib.request
    from fleetlib import free_port
    prometheus = shutil.which("prometheus") or "/usr/bin/prometheus"
    check(os.access(prometheus, os.X_OK), "prometheus is installed (packaging/install-deps.sh, group fleet)")
    f.start_redis()
    a, b = hosts = f.add_hosts(2, ["pay"], "--open-for", "2s", "--failure-threshold", "3")
    ports = [free_port() for _ in hosts]
    for h, port in zip(hosts, ports):
        h.start_agent("--listen", "127.0.0.1:%d" % port)
    flag = os.path.join(f.work, "failing")
    open(flag, "w").close()
    loads = [f.load(h, "pay", flag, rate=50, duration=40, tag="-g") for h in hosts]
    prom_port = free_port()
    conf = os.path.join(f.work, "prometheus.yml")
    with open(conf, "w") as c:
        c.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                "  - job_name: lazybreaker-agent\n    static_configs:\n      - targets: [%s]\n"
                % ", ".join("'127.0.0.1:%d'" % p for p in ports))
    f.spawn([prometheus, "--config.file=" + conf, "--storage.tsdb.path=" + os.path.join(f.work, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % prom_port], "prometheus.log")

    def query(expr):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (prom_port, urllib.parse.urlencode({"query": expr}))
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                d = jsonlib.load(resp)
        except (OSError, ValueError):
            return None
        return d["data"]["result"] if d.get("status") == "success" and d["data"]["result"] else None
    dash = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging", "grafana",
                        "lazybreaker.json")
    panels = [p for p in jsonlib.load(open(dash))["panels"] if p["title"].startswith("Fleet:")]
    check(len(panels) >= 5, "the dashboard has its fleet panels (%d)" % len(panels))
    for p in panels:
        for t in p["targets"]:
            wait_for(lambda: query(t["expr"]), 40 * SLACK, 0.5, "data for the panel '%s': %s" % (p["title"], t["expr"]))
    total = query('sum(lazybreaker_calls_rejected_total{breaker="pay"})')
    per_host = query('lazybreaker_calls_rejected_total{breaker="pay"}')
    check(total and per_host and len(per_host) == 2, "two hosts' rejected counters (%s)" % per_host)
    print("     every fleet panel has data; rejected calls: %s over %d hosts" % (total[0]["value"][1], len(per_host)))
    for load in loads:
        load.end()


@scenario
def counters(f):
    """Counts stay out of Redis unless an agent is started with
    --fleet-counts: by default each agent's --listen serves its host's
    per-breaker counters (the fleet's total is a sum by breaker) and the
    fleet's state from its own copy; with --fleet-counts the agents add
    their deltas to the fleet's hash and cbctl fleet list shows the sum."""
    f.start_redis()
    a, b = f.add_hosts(2, ["pay"], "--open-for", "30s")
    import urllib.request
    from fleetlib import free_port
    port = free_port()
    a.start_agent("--listen", "127.0.0.1:%d" % port)
    b.start_agent()
    flag = os.path.join(f.work, "never")
    la = f.load(a, "pay", flag, rate=200, duration=1.0)
    check(la.wait(10 * SLACK) == 0, "the load ran")
    admitted_a = parse_load(la.text())[2]["admitted"]
    r = f.redis.client()
    check("admitted" not in r.hgetall(f.key("b:pay")), "without --fleet-counts no count reaches Redis")
    rc, out, err = f.fleet_cmd("list")
    check(rc == 0 and "ADMITTED" not in out and "sum by breaker" in out,
          "cbctl fleet list says where the counts are: %s" % out.strip())

    def scraped():
        body = _get("http://127.0.0.1:%d/metrics" % port, urllib)
        want = 'lazybreaker_calls_admitted_total{fleet="default",host="%s",breaker="pay"} %d' % (a.id, admitted_a)
        return body if body and want in body else None
    body = wait_for(scraped, 3 * SLACK, 0.05, "/metrics to serve host A's admitted count %d" % admitted_a)
    check('lazybreaker_fleet_state{fleet="default",breaker="pay",state="closed"} 1' in body,
          "/metrics serves the fleet's state from the agent's copy")
    check("lazybreaker_fleet_hosts{" in body, "/metrics serves the live host count")
    a.agent.end()
    b.agent.end()
    a.start_agent("--fleet-counts")
    b.start_agent("--fleet-counts")
    la = f.load(a, "pay", flag, rate=200, duration=1.5)
    lb = f.load(b, "pay", flag, rate=100, duration=1.5)
    check(la.wait(10 * SLACK) == 0 and lb.wait(10 * SLACK) == 0, "the loads ran")
    want = parse_load(la.text())[2]["admitted"] + parse_load(lb.text())[2]["admitted"]
    wait_for(lambda: r.hgetall(f.key("b:pay")).get("admitted") == str(want), 3 * SLACK, 0.05,
             "the fleet's admitted count to reach %d (it is %s)" % (want, r.hgetall(f.key("b:pay")).get("admitted")))
    rc, out, err = f.fleet_cmd("list")
    lines = out.splitlines()
    row = [l.split() for l in lines if l.split()[:1] == ["pay"]]
    col = lines[0].split().index("ADMITTED") if lines and "ADMITTED" in lines[0] else None
    check(rc == 0 and row and col is not None and row[0][col] == str(want),
          "cbctl fleet list: ADMITTED %s = %d" % (row and col and row[0][col], want))
    check(row[0][3] in ("hostA,hostB", "hostB,hostA"), "cbctl fleet list: HOSTS %s" % row[0][3])


def _get(url, urllib):
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.read().decode()
    except OSError:
        return None


def main(argv):
    if len(argv) != 2:
        print("usage: fleet_test.py SCENARIO | --list", file=sys.stderr)
        return 2
    if argv[1] == "--list":
        print("\n".join(SCENARIOS))
        return 0
    fn = SCENARIOS.get(argv[1])
    if not fn:
        print("fleet_test.py: no scenario '%s' (--list)" % argv[1], file=sys.stderr)
        return 2
    return run_scenario(argv[1], fn)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
