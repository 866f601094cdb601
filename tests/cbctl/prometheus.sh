#!/usr/bin/env bash
# A real Prometheus (Debian's /usr/bin/prometheus) scrapes cbctl serve
# every second on loopback; its query API then returns lazybreaker_state
# for the test's breakers. Polled with a deadline, never a fixed sleep.
source "$(dirname "$0")/lib.sh"
prometheus=${PROMETHEUS:-$(command -v prometheus || echo /usr/bin/prometheus)}
[ -x "$prometheus" ] || fail "prometheus is missing (packaging/install-deps.sh installs it)"
start_helper
expect_helper "admitted=1 rejected=0" call payments failure 1
start_serve "$work/serve.log" "$reg"

port=$(free_port)
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cbctl
    static_configs:
      - targets: ['127.0.0.1:$serve_port']
YML
"$prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
started_pids+=($!)

# query EXPR: the query API's answer as "breaker:state=value" lines, sorted
# (nothing, and a failure, while Prometheus is not up yet)
query() {
  curl -fsS --max-time 5 --get --data-urlencode "query=$1" "http://127.0.0.1:$port/api/v1/query" 2>/dev/null |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success"
for r in d["data"]["result"]:
    m = r["metric"]
    print("%s:%s=%s" % (m.get("breaker"), m.get("state"), r["value"][1]))' 2>/dev/null | sort
}
seen_all() {
  local got
  got=$(query 'lazybreaker_state == 1') || return 1
  for want in inventory:closed=1 ledger:closed=1 payments:open=1 search:closed=1; do
    grep -qx "$want" <<<"$got" || return 1
  done
}
wait_until 45 seen_all || fail "Prometheus never returned the breakers; it has: $(query lazybreaker_state | paste -sd' '); log: $(tail -n 20 "$work/prometheus.log")"
ok "Prometheus's query API returns lazybreaker_state for every breaker: $(query 'lazybreaker_state == 1' | paste -sd' ')"
up=$(query 'up{job="cbctl"}')
[ "$up" = "None:None=1" ] || fail "up{job=\"cbctl\"} is '$up'"
ok "the cbctl target is up"

# The Grafana dashboard (packaging/grafana/lazybreaker.json): each panel's
# PromQL returns data from this Prometheus (rates once two scrapes exist);
# the "Fleet:" panels read the agents' --listen (tests/fleet, fleet.grafana).
dashboard_json=$(dirname "$0")/../../packaging/grafana/lazybreaker.json
mapfile -t exprs < <(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["panels"]:
    for t in p["targets"]:
        if not p["title"].startswith("Fleet:"):
            print(t["expr"])' "$dashboard_json")
[ ${#exprs[@]} -ge 8 ] || fail "the Grafana dashboard has ${#exprs[@]} queries"
has_data() { [ -n "$(query "$1")" ]; }
for e in "${exprs[@]}"; do
  wait_until 30 has_data "$e" || fail "the Grafana panel query returns nothing: $e"
done
ok "each of the Grafana dashboard's ${#exprs[@]} panel queries returns data"
stop_helper
echo passed
