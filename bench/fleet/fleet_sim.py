#!/usr/bin/python3
"""Runs fleet_sim (bench/fleet/fleet_sim.cpp) against a redis-server of its
own on 127.0.0.1 and a free port (--save "" --appendonly no), started and
stopped as the fleet tests do (tests/fleet/fleetlib.py), and restarts that
Redis when the simulator asks ("@@ kill-redis", "@@ start-redis" on its
stdout; "ok" back on its stdin). Every other argument goes to fleet_sim.

    fleet_sim.py [fleet_sim arguments...]

Environment: FLEET_SIM, REDIS_SERVER; LB_FLEET_WORK (the logs' folder),
LB_FLEET_SLACK (the sanitizer builds' slack, passed as --slack).
Exit status: fleet_sim's (1 when --check finds a bound that does not hold).
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fleet"))
from fleetlib import SLACK, Failure, Fleet, prog  # noqa: E402


def main(argv):
    with Fleet("sim") as f:
        f.start_redis()
        log = os.path.join(f.work, "agents.log")
        cmd = [prog("FLEET_SIM"), "--redis-port", str(f.redis.port), "--control",
               "--slack", str(SLACK), "--agent-log", log] + argv
        sim = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               bufsize=1)
        try:
            for line in sim.stdout:
                if line.startswith("@@ kill-redis"):
                    f.redis.kill()
                elif line.startswith("@@ start-redis"):
                    f.redis.start()
                else:
                    sys.stdout.write(line)
                    sys.stdout.flush()
                    continue
                sim.stdin.write("ok\n")
                sim.stdin.flush()
            rc = sim.wait()
        finally:
            if sim.poll() is None:
                sim.terminate()
                try:
                    sim.wait(10)
                except subprocess.TimeoutExpired:
                    sim.kill()
                    sim.wait()
        # The agents' lines and a sanitizer's report (build-asan, build-tsan)
        # both go to fd 2 of fleet_sim, that is to agents.log.
        with open(log, "r", errors="replace") as lf:
            text = lf.read()
        for mark in f.SANITIZER_MARKS:
            if mark in text:
                at = text.find(mark)
                sys.stderr.write(text[max(0, at - 2000):at + 6000])
                raise Failure("fleet_sim: %s (agents.log)" % mark)
        if rc != 0:  # keeps the folder (agents.log) under KEEP_FLEET_TEST
            raise Failure("fleet_sim ended with status %d" % rc)
        return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
