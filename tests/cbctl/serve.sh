#!/usr/bin/env bash
# cbctl serve, scraped with curl: /metrics is the registry's Prometheus
# text, read afresh per scrape; other paths are 404; SIGTERM and SIGINT
# stop it with status 0; a port in use is an error; a request whose Host is
# not the server, or a POST from another site, is 403.
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

# Only requests that name the server (tools/fleet/host_check.cpp): a
# DNS-rebinding page's Host is 403 on the data and the metrics; an
# --allow-host name is served; a POST whose Origin is another site is 403
# even with the token, one from the page's own origin (or none: curl) works.
start_serve "$work/guard.log" "$reg" --allow-control --allow-host dash.example
url=http://127.0.0.1:$serve_port
token=$(sed -n 's/.*control token: \([0-9a-f]*\).*/\1/p' "$work/guard.log")
for path in /api/breakers /metrics /; do
  out=$(curl -s --max-time 10 -H "Host: rebound.example:$serve_port" -w ' %{http_code} %{content_type}' "$url$path")
  [[ $out == "refused: Host 'rebound.example:$serve_port' is not this server's address"*" 403 text/plain"* ]] ||
    fail "GET $path with a foreign Host: $out"
  [[ $out != *lazybreaker_state* && $out != *payments* ]] || fail "a foreign Host got data: $out"
done
ok "a foreign Host: 403 text/plain on /api/breakers, /metrics and /"
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H 'Host:' "$url/metrics")
[ "$code" = 403 ] || fail "no Host answered $code"
ok "no Host header: 403"
for host in "127.0.0.1:$serve_port" "localhost:$serve_port" dash.example "dash.example:8443"; do
  curl -fsS --max-time 10 -H "Host: $host" "$url/api/breakers" | grep -q '"payments"' ||
    fail "Host $host is not served"
done
ok "the address, localhost and the --allow-host name are served"
for origin in http://rebound.example "http://127.0.0.1:$((serve_port + 1))" null; do
  out=$(curl -s --max-time 10 -X POST -d '' -H "Authorization: Bearer $token" -H "Origin: $origin" \
    -w ' %{http_code}' "$url/api/breakers/payments/reset")
  [[ $out == "refused: Origin '$origin' is another site"*" 403" ]] || fail "POST from $origin: $out"
done
ok "a POST with the token from another site's Origin: 403"
for origin in "http://127.0.0.1:$serve_port" ""; do
  code=$(curl -s --max-time 10 -o /dev/null -X POST -d '' -H "Authorization: Bearer $token" \
    ${origin:+-H "Origin: $origin"} -w '%{http_code}' "$url/api/breakers/payments/reset")
  [ "$code" = 200 ] || fail "POST with Origin '$origin' answered $code"
done
ok "a POST from the page's own origin, or with no Origin, resets as before"
run_cbctl 2 serve "$reg" --allow-host 'a:b:c'
[[ $err == *"--allow-host"* ]] || fail "a bad --allow-host: $err"
ok "a bad --allow-host is a usage error: $err"
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve exited $? after SIGTERM"

stop_helper
echo passed
