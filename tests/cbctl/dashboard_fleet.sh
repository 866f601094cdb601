#!/usr/bin/env bash
# cbctl serve --redis: the page for a fleet's breakers, in headless
# Chromium, against a real redis-server on a free port: a breaker tripped
# with `cbctl fleet trip` shows OPEN; the control POST goes through the
# fleet's change script (cbctl fleet list sees the reset). No agent runs,
# so the hosts line reads "none reporting" (hosts per breaker with live
# agents: not covered here).
source "$(dirname "$0")/lib.sh"
shots=${DASHBOARD_OUT:-$work/shots}
mkdir -p "$shots"
command -v redis-server >/dev/null || fail "redis-server is missing (packaging/install-deps.sh installs it)"
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
started_pids+=($!)
redis=redis://127.0.0.1:$rport
up() { "$CBCTL" fleet list --redis "$redis" >/dev/null 2>&1; }
wait_until "$patience" up || fail "redis-server did not start: $(cat "$work/redis.log")"
run_cbctl 0 fleet trip db --redis "$redis" --fleet shop --for 5m
run_cbctl 0 fleet reset cache --redis "$redis" --fleet shop
start_serve "$work/serve.log" --redis "$redis" --fleet shop --allow-control
url=http://127.0.0.1:$serve_port
token=$(sed -n 's/^cbctl: control token: \([0-9a-f]*\) .*/\1/p' "$work/serve.log")
/usr/bin/python3 "$(dirname "$0")/dashboard.py" fleet --url "$url" --out "$shots" \
  --expect '{"db":"OPEN","cache":"CLOSED"}' --hosts '{"db":[],"cache":[]}'
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '' "$url/api/breakers/db/reset")
[ "$code" = 403 ] || fail "POST without the token answered $code"
ok "POST without the token: 403"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '' -H "Authorization: Bearer $token" "$url/api/breakers/db/reset")
[ "$code" = 200 ] || fail "POST with the token answered $code"
run_cbctl 0 fleet show db --redis "$redis" --fleet shop --json
[[ $out == *'"state":"closed"'* ]] || fail "after the POST reset, fleet show says $out"
ok "a POST reset with the token reaches the fleet: $out"
echo passed
