#!/usr/bin/python3
"""The fleet's table in `make bench` (issue 23): lazybreaker-agent against a
real redis-server on loopback, every "host" a registry file and an agent
on this one machine (so the hosts share its two CPUs: the figures are an
upper bound for hosts of their own).

    fleet_bench.py [--quick] [--out FILE]

Rows:
- propagation: a trip on one host (cbctl trip) until every other host's
  breaker is OPEN (fleet_load watch polls every file each 0.5 ms), p50 and
  p99 over the trials, 3 and 20 hosts, the agents' default --interval;
- Redis commands per host per second (MONITOR: sent by clients, and run
  inside the agents' scripts), 3 hosts of
  1,000 breakers each: at rest, and during an outage of all 1,000 (every
  call failing: trips, probes, leases);
- probes per recovery with the agents (fleet_load probes / fleet periods)
  and without them (each host probes on its own), 3 and 20 hosts;
- per call: our cb_allow + cb_done beside a BASELINE WRITTEN HERE IN THE
  PEER'S SHAPE (gobreaker v2 DistributedCircuitBreaker: the breaker's
  state as JSON in Redis, GET and SET before and after every call;
  bench/fleet/fleet_baseline.c, no code of gobreaker's).
Environment: AGENT, CBCTL, FLEET_LOAD, REDIS_SERVER, FLEET_BASELINE.
"""

import os
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fleet"))
from fleetlib import Fleet, Monitor, first_in_state, parse_load, parse_watch, prog, wait_for, wall_ms  # noqa: E402
import subprocess  # noqa: E402


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def propagation(n, trials):
    with Fleet("bench-prop-%d" % n) as f:
        f.start_redis()
        hosts = f.add_hosts(n, ["pay"], "--open-for", "30s")
        for h in hosts:
            h.start_agent(interval=None)
        w = f.watch("pay", hosts, duration=3600)
        lat = []
        for k in range(trials):
            src = k % n
            t0 = wall_ms()
            hosts[src].cb("trip", "pay", "--for", "10s")

            def all_open():
                rows = parse_watch(w.text())
                seen = [first_in_state(rows, i, "open", t0) for i in range(n)]
                return seen if all(seen) else None
            seen = wait_for(all_open, 10, 0.005, "every host OPEN")
            lat.append(max(s[0] for s in seen) - seen[src][0])
            rc, _, err = f.fleet_cmd("reset", "pay")
            if rc != 0:
                raise RuntimeError("cbctl fleet reset: " + err)
            t1 = wall_ms()

            def all_closed():
                rows = parse_watch(w.text())
                return all(first_in_state(rows, i, "closed", t1 - 50) for i in range(n))
            wait_for(all_closed, 10, 0.01, "every host CLOSED")
            time.sleep(0.15)
        return pct(lat, 50), pct(lat, 99), max(lat), len(lat)


def commands_per_host(n, breakers, seconds):
    with Fleet("bench-cmds") as f:
        f.start_redis()
        hosts = f.add_hosts(n)
        for h in hosts:
            subprocess.run([prog("FLEET_LOAD"), "populate", "--file", h.file, "--count", str(breakers),
                            "--prefix", "dep", "--open-for", "1000", "--failure-threshold", "5"],
                           check=True, capture_output=True)
        for h in hosts:
            h.start_agent(interval=None)
        r = f.redis.client()
        mon = Monitor(f.redis.port)
        time.sleep(2.0)  # the first publications of every name are done

        def window():
            client, lua, names = mon.window(seconds)
            return client / n / seconds, lua / n / seconds, names
        rest = window()
        keys_rest = r.command("DBSIZE")
        flag = os.path.join(f.work, "failing")
        open(flag, "w").close()
        loads = [f.spawn([prog("FLEET_LOAD"), "storm", "--file", h.file, "--count", str(breakers), "--prefix",
                          "dep", "--rate", "4000", "--fail-flag", flag, "--duration", str(seconds + 6)],
                         "storm-%s.err" % h.id, "storm-%s.out" % h.id) for h in hosts]
        time.sleep(3.0)  # every breaker tripped and cycling
        outage = window()
        keys_outage = r.command("DBSIZE")
        mem = re.search(r"used_memory:(\d+)", r.command("INFO", "memory")).group(1)
        for ld in loads:
            ld.signal(signal.SIGTERM)
            ld.wait(10)
        mon.close()
        return rest, outage, keys_rest, keys_outage, int(mem)


def probes_per_recovery(n, with_agents, seconds):
    """Every host calls one failing dependency for `seconds`, then it heals;
    once every host is CLOSED, the probes every host's fleet_load made
    against the recoveries: with the agents, the fleet's periods (its trips,
    each ended by one probe); without, each host's own periods (each ended
    by its own probe, so its probes), averaged over the hosts."""
    with Fleet("bench-probes") as f:
        f.start_redis()
        hosts = f.add_hosts(n, ["pay"], "--open-for", "500ms", "--failure-threshold", "5")
        if with_agents:
            for h in hosts:
                h.start_agent(interval=None)
        flag = os.path.join(f.work, "failing")
        open(flag, "w").close()
        loads = [f.load(h, "pay", flag, rate=100, duration=seconds + 60) for h in hosts]
        time.sleep(seconds)
        os.remove(flag)
        for h in hosts:
            wait_for(lambda: h.state("pay") == "CLOSED", 30, 0.05, "%s CLOSED" % h.id)
        for ld in loads:
            ld.signal(signal.SIGTERM)
            ld.wait(10)
        per_host = [len(parse_load(ld.text())[1]) for ld in loads]
        total = sum(per_host)
        if with_agents:
            periods = int(f.redis.client().hgetall(f.key("b:pay")).get("trips", "0") or 0)
        else:
            periods = total / n
        return total / periods if periods else float("nan"), total, periods


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as st:
        fields = st.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as st:
        for line in st:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def ten_thousand(n, seconds):
    """n hosts of 10,000 breakers each, at rest: each agent's CPU and
    resident memory, Redis's keys and memory."""
    with Fleet("bench-10k") as f:
        f.start_redis()
        hosts = f.add_hosts(n)
        for h in hosts:
            subprocess.run([prog("FLEET_LOAD"), "populate", "--file", h.file, "--count", "10000", "--capacity",
                            "10000", "--prefix", "dep"], check=True, capture_output=True)
        for h in hosts:
            h.start_agent(interval=None)
        time.sleep(3.0)
        before = [cpu_s(h.agent.pid) for h in hosts]
        time.sleep(seconds)
        cpu = [(cpu_s(h.agent.pid) - b) / seconds * 100 for h, b in zip(hosts, before)]
        rss = [rss_mb(h.agent.pid) for h in hosts]
        r = f.redis.client()
        mem = int(re.search(r"used_memory:(\d+)", r.command("INFO", "memory")).group(1))
        return max(cpu), max(rss), r.command("DBSIZE"), mem


def per_call():
    base = prog("FLEET_BASELINE")
    with Fleet("bench-call") as f:
        f.start_redis()
        (a,) = f.add_hosts(1, ["payments"], "--open-for", "30s")
        a.start_agent(interval=None)
        r = f.redis.client()

        def run(*args):
            before = r.commandstats()
            out = subprocess.run([base] + [str(x) for x in args], check=True, capture_output=True,
                                 text=True).stdout
            after = r.commandstats()
            kv = dict(x.split("=", 1) for x in out.split()[1:])
            cmds = sum(after.get(k, 0) - before.get(k, 0) for k in after if k != "info")
            return kv, cmds
        store, store_cmds = run("store", f.redis.port, 20000)
        store2, _ = run("store", f.redis.port, 5000, 2)
        t = time.monotonic()
        ours, ours_cmds = run("ours", a.file, "payments", 5000000)
        ours_s = time.monotonic() - t
        return {
            "store_rt": store_cmds / 20000.0 if store_cmds else float(store["round_trips"]),
            "store_ns": float(store["ns_per_call"]),
            "store2_ns": float(store2["ns_per_call"]),
            "store2_lost": 10000 - int(store2["requests_seen"]),
            "ours_ns": float(ours["ns_per_call"]),
            "ours_agent_cmds": ours_cmds,
            "ours_s": ours_s,
        }


def main(argv):
    quick = "--quick" in argv
    out = None
    if "--out" in argv:
        out = argv[argv.index("--out") + 1]
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)
    t_start = time.monotonic()
    say("Fleet bench (bench/fleet): lazybreaker-agent over a real redis-server on loopback; every host on "
        "this machine (%d CPUs)" % os.cpu_count())
    say()
    say("%-58s %10s %10s %10s" % ("Propagation: trip on one host -> every host OPEN", "p50 ms", "p99 ms", "trials"))
    for n, trials in ((3, 10 if quick else 40), (20, 5 if quick else 25)):
        p50, p99, worst, k = propagation(n, trials)
        say("%-58s %10d %10d %10d" % ("  %d hosts, --interval 100 (default)" % n, p50, p99, k))
    say()
    rest, outage, kr, ko, mem = commands_per_host(3, 1000, 3 if quick else 5)
    say("%-58s %10s %10s" % ("Redis commands per host per second (3 hosts x 1,000 breakers)", "sent", "in scripts"))
    for label, (sent, lua, names) in (("  at rest", rest), ("  outage: all 1,000 breakers failing", outage)):
        top = sorted(names.items(), key=lambda kv: -kv[1])[:6]
        say("%-58s %10.1f %10.1f   (sent, all hosts: %s)" % (label, sent, lua,
                                                             ", ".join("%s %d" % kv for kv in top)))
    say("%-58s %10d / %d   used_memory %.1f MB" % ("  Redis keys at rest / in the outage", kr, ko, mem / 1e6))
    say()
    cpu, rss, keys, mem = ten_thousand(2, 3 if quick else 5)
    say("%-58s %10s %10s" % ("10,000 breakers per host (2 hosts), at rest, --interval 100", "", ""))
    say("%-58s %9.1f%% %7.1f MB" % ("  each agent: CPU, resident memory (the worse host)", cpu, rss))
    say("%-58s %10d %7.1f MB" % ("  Redis: keys, used_memory", keys, mem / 1e6))
    say()
    say("%-58s %10s %10s %10s" % ("Probes per recovery (open-for 500 ms, 100 calls/s/host)", "probes",
                                  "periods", "per rec."))
    for n in (3, 20):
        for agents in (True, False):
            per, total, periods = probes_per_recovery(n, agents, 4 if quick else 8)
            say("%-58s %10d %10.1f %10.2f" % ("  %d hosts, %s" % (n, "with the agents (one fleet)" if agents else
                                                               "without (each host alone)"), total, periods, per))
    say()
    pc = per_call()
    say("%-58s %12s %12s" % ("Per call", "round trips", "ns/call"))
    say("%-58s %12d %12.1f" % ("  lazybreaker cb_allow+cb_done (agent attached)", 0, pc["ours_ns"]))
    say("%-58s %12.2f %12.0f" % ("  BASELINE in gobreaker DistributedCircuitBreaker's shape*", pc["store_rt"],
                                 pc["store_ns"]))
    say("%-58s %12s %12.0f   lost updates: %d of 10000" % ("  the same baseline, 2 clients at once*", "",
                                                           pc["store2_ns"], pc["store2_lost"]))
    say("  (*) written here in the peer's shape (bench/fleet/fleet_baseline.c: JSON state GET+SET before and")
    say("      after each call), not gobreaker's code. Ours: no round trip on the request path; the agent's")
    say("      own commands meanwhile: %d in the %.2f s of 5,000,000 calls (its poll, whatever the calls)."
        % (pc["ours_agent_cmds"], pc["ours_s"]))
    say()
    say("(fleet bench: %.0f s)" % (time.monotonic() - t_start))
    if out:
        with open(out, "w") as fo:
            fo.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
