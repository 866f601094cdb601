#!/usr/bin/env bash
# cbctl serve's page in a real headless Chromium (dashboard.py): a file
# with a breaker in every state, each shown with its state; a cbctl trip
# turns a tile OPEN within 2 s without a reload; the filter; the detail
# view; POSTs refused without --allow-control and the token (403); with
# both, a reset from the page reaches the file (the helper, another
# process, sees it). Screenshots into $DASHBOARD_OUT.
source "$(dirname "$0")/lib.sh"
shots=${DASHBOARD_OUT:-$work/shots}
mkdir -p "$shots"
start_helper
# payments OPEN (its third failure in a row), ledger DISABLED, api/v1/users
# FORCED_OPEN, recovering HALF_OPEN (a 1us trip, then a probe left in
# flight), search and inventory CLOSED, with traffic through both.
expect_helper "admitted=1 rejected=0" call payments failure 1
run_cbctl 0 disable "$reg" ledger
run_cbctl 0 create "$reg" api/v1/users
run_cbctl 0 force-open "$reg" api/v1/users
run_cbctl 0 create "$reg" recovering
run_cbctl 0 trip "$reg" recovering --for 1us
expect_helper CB_OK probe recovering
expect_helper HALF_OPEN state recovering
expect_helper busy busy search 8 1
expect_helper busy busy inventory 5 0

start_serve "$work/serve.log" "$reg"
readonly_url=http://127.0.0.1:$serve_port
start_serve "$work/control.log" "$reg" --allow-control
control_url=http://127.0.0.1:$serve_port
token=$(sed -n 's/^cbctl: control token: \([0-9a-f]*\) .*/\1/p' "$work/control.log")
[ ${#token} -eq 32 ] || fail "no control token printed: $(cat "$work/control.log")"
ok "--allow-control prints a token of 128 bits"

/usr/bin/python3 "$(dirname "$0")/dashboard.py" page --url "$readonly_url" --control-url "$control_url" \
  --token "$token" --cbctl "$CBCTL" --file "$reg" --out "$shots" --trip search --reset api/v1/users \
  --filter API --busy inventory \
  --expect '{"payments":"OPEN","search":"CLOSED","inventory":"CLOSED","ledger":"DISABLED","api/v1/users":"FORCED_OPEN","recovering":"HALF_OPEN"}'
expect_helper CLOSED state api/v1/users
grep -q "^cbctl: reset api/v1/users (from 127.0.0.1)" "$work/control.log" ||
  fail "the control server logged no reset: $(cat "$work/control.log")"
ok "the control server logged the page's reset"
stop_helper
echo passed
