#!/usr/bin/env bash
# cbctl serve, scraped with curl: /metrics is the registry's Prometheus
# text, read afresh per scrape; other paths are 404; SIGTERM and SIGINT
# stop it with status 0; a port in use is an error.
source "$(dirname "$0")/lib.sh"
start_helper

start_serve "$work/serve.log" "$reg"
url=http://127.0.0.1:$serve_port
body=$(curl -fsS --max-time 10 "$url/metrics") || fail "GET /metrics failed"
for name in payments search inventory ledger; do
  grep -q "^lazybreaker_state{.*breaker=\"$name\"" <<<"$body" || fail "/metrics lacks $name: $body"
done
ok "GET /metrics has lazybreaker_state for every breaker"
ctype=$(curl -fsS --max-time 10 -o /dev/null -w '%{content_type}' "$url/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "Content-Type: $ctype"
ok "Content-Type: $ctype"
[ "$(curl -fsS --max-time 10 "$url/metrics")" = "$("$CBCTL" metrics "$reg")" ] ||
  echo "(the scrape and cbctl metrics differ only if a clock-based figure moved between them)"
for path in /metric /metrics/x /favicon.ico /api /api/breakers/x; do
  code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$url$path")
  [ "$code" = 404 ] || fail "GET $path answered $code"
done
ok "other paths are 404"

# Each scrape reads the file afresh: a trip by the helper shows at once.
expect_helper "admitted=1 rejected=0" call payments failure 1
curl -fsS --max-time 10 "$url/metrics" | grep -E '^lazybreaker_state\{' | grep 'breaker="payments"' |
  grep 'state="open"' | grep -q ' 1$' || fail "the scrape does not show payments open"
ok "a scrape shows the helper's trip at once"

# A second server on the same port: refused, status 1.
run_cbctl 1 serve "$reg" --listen "127.0.0.1:$serve_port"
[[ $err == "cbctl: 127.0.0.1:$serve_port: cannot listen"* ]] || fail "busy port: $err"
ok "a port in use exits 1: $err"

# Stopped by SIGTERM, then by SIGINT: status 0 both times, the port free again.
for sig in TERM INT; do
  kill -$sig "$serve_pid"
  rc=0
  wait "$serve_pid" || rc=$?
  [ $rc -eq 0 ] || fail "serve exited $rc after SIG$sig"
  ! curl -s --max-time 2 "$url/metrics" >/dev/null || fail "still serving after SIG$sig"
  ok "SIG$sig stops serve with status 0"
  [ $sig = INT ] || start_serve "$work/serve2.log" "$reg"
  url=http://127.0.0.1:$serve_port
done
stop_helper
echo passed
