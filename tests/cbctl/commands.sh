#!/usr/bin/env bash
# Every subcommand against a registry file that a running helper process
# created and drives; what cbctl changes, the helper sees, and what the
# helper does, cbctl shows.
source "$(dirname "$0")/lib.sh"
start_helper

# row NAME: the list table's row for NAME, as words
row() { awk -v n="$1" '$1 == n' <<<"$out"; }
# json EXPRESSION: evaluates a Python expression over the JSON in $out (as `d`)
json() { python3 -c 'import json, sys; d = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1" <<<"$out"; }
expect_eq() { [ "$2" = "$3" ] || fail "$1 is '$2', want '$3'"; ok "$1 = $3"; }

# --- list ---------------------------------------------------------------------
run_cbctl 0 list "$reg"
expect_eq "list header" "$(head -n1 <<<"$out" | tr -s ' ')" \
  "NAME STATE CONSEC FAIL% RETRY-AFTER ADMITTED REJECTED SUCCESSES FAILURES"
expect_eq "list rows, sorted by name" "$(tail -n +2 <<<"$out" | awk '{print $1}' | paste -sd' ')" \
  "inventory ledger payments search"
expect_eq "payments row" "$(row payments | tr -s ' ')" "payments CLOSED 2 0.0% - 5 0 3 2"
expect_eq "search row" "$(row search | tr -s ' ')" "search CLOSED 0 25.0% - 4 0 3 1"
expect_eq "inventory row" "$(row inventory | tr -s ' ')" "inventory CLOSED 0 0.0% - 5 0 5 0"

run_cbctl 0 list --json "$reg"
expect_eq "list --json file" "$(json 'd["file"]')" "$reg"
expect_eq "list --json names" "$(json '" ".join(b["name"] for b in d["breakers"])')" \
  "inventory ledger payments search"
expect_eq "list --json payments" \
  "$(json '[(b["state"], b["consecutive_failures"], b["admitted"], b["successes"], b["failures"], b["retry_after_ns"]) for b in d["breakers"] if b["name"] == "payments"][0]')" \
  "('CLOSED', 2, 5, 3, 2, 0)"
expect_eq "list --json search failure rate" \
  "$(json '[b["failure_rate"] for b in d["breakers"] if b["name"] == "search"][0]')" "0.25"

# --- show ---------------------------------------------------------------------
run_cbctl 0 show "$reg" payments
for line in "name: payments" "state: CLOSED" "consecutive failures: 2" "admitted: 5" \
            "successes: 3" "failures: 2" "rejected: 0" "trips: 0" "ignored: 0" "slow: 0"; do
  grep -qx "${line%%:*}: *${line#*: }" <<<"$out" || fail "show lacks '$line': $out"
done
ok "show gives every counter"
run_cbctl 0 show --json "$reg" search
expect_eq "show --json search" "$(json '(d["name"], d["state"], d["failure_rate"], d["admitted"], d["trips"], d["anonymous"])')" \
  "('search', 'CLOSED', 0.25, 4, 0, False)"
expect_eq "show --json has every field" "$(json 'sorted(d)')" \
  "['admitted', 'anonymous', 'config', 'consecutive_failures', 'failure_rate', 'failures', 'ignored', 'name', 'rejected', 'retry_after_ns', 'slow', 'slow_rate', 'state', 'state_ns', 'successes', 'trips']"
# The configuration (cb_config_get): under cb_config's field names in JSON,
# every one of them (the header's list), and as create's options in the text.
expect_eq "show --json search config" \
  "$(json '(d["config"]["policy"], d["config"]["window_size"], d["config"]["minimum_calls"], d["config"]["failure_threshold"], d["config"]["open_duration_ns"])')" \
  "('count', 10, 4, 5, 30000000000)"
expect_eq "show --json config has every field of cb_config" "$(json '" ".join(sorted(d["config"]))')" \
  "$(sed -n '/^#define CB_CONFIG_FIELDS(X)/,/[^\\]$/ s/^ *X(\([a-z_]*\), .*/\1/p' "$(dirname "$0")/../../include/lazybreaker/lists.h" | LC_ALL=C sort | paste -sd' ')"
run_cbctl 0 show "$reg" inventory
for line in "--policy: time" "--window-duration: 10s" "--open-for: 30s" "--half-open-timeout: 30s" \
            "--failure-rate: 0.5" "--slow-call: off" "--open-for-max: no cap"; do
  grep -qx -- "${line%%:*}: *${line#*: }" <<<"$out" || fail "show lacks '$line': $out"
done
ok "show gives the configuration as create's options"
# ... which create takes back: --exist-ok with what show printed finds the
# breaker (the values that mean "none" are the defaults, left out)
read -ra shown < <(awk -F': *' '/^--/ && $2 != "off" && $2 != "no cap" {printf "%s %s ", $1, $2} END {print ""}' <<<"$out")
run_cbctl 0 create "$reg" inventory --exist-ok "${shown[@]}"
ok "create --exist-ok ${shown[*]} finds inventory"

# --- trip ---------------------------------------------------------------------
run_cbctl 0 trip "$reg" payments --for 5m
expect_eq "trip says" "$out" "payments: OPEN for 5m00s"
expect_helper OPEN state payments
expect_helper "admitted=0 rejected=1" call payments success 1
run_cbctl 0 show --json "$reg" payments
expect_eq "tripped: state, trips, rejected" "$(json '(d["state"], d["trips"], d["rejected"])')" "('OPEN', 1, 1)"
expect_eq "tripped for 5m: retry-after within (4m50s, 5m]" \
  "$(json '290e9 < d["retry_after_ns"] <= 300e9')" "True"
run_cbctl 0 list "$reg"
[[ $(row payments | awk '{print $2, $5}') =~ ^OPEN\ 4m5[0-9]s$ ]] || fail "list after trip: $(row payments)"
ok "list shows payments OPEN with its retry-after"
# the default: 30 s
run_cbctl 0 trip "$reg" ledger
expect_eq "trip's default" "$out" "ledger: OPEN for 30s"
run_cbctl 0 show --json "$reg" ledger
expect_eq "trip for the default 30s" "$(json '20e9 < d["retry_after_ns"] <= 30e9')" "True"

# --- force-open, disable, reset -------------------------------------------------
run_cbctl 0 force-open "$reg" search
expect_eq "force-open says" "$out" "search: FORCED_OPEN"
expect_helper FORCED_OPEN state search
expect_helper "admitted=0 rejected=3" call search success 3
run_cbctl 0 show --json "$reg" search
expect_eq "forced open: retry_after_ns" "$(json 'd["retry_after_ns"]')" "None"
run_cbctl 0 show "$reg" search
grep -qx 'retry after: *never (until reset)' <<<"$out" || fail "show of a forced-open breaker: $out"
ok "show says a forced-open breaker never retries by itself"

run_cbctl 0 disable "$reg" inventory
expect_eq "disable says" "$out" "inventory: DISABLED"
expect_helper DISABLED state inventory
expect_helper "admitted=50 rejected=0" call inventory failure 50
expect_helper DISABLED state inventory

for name in payments search inventory ledger; do
  run_cbctl 0 reset "$reg" $name
  expect_eq "reset says" "$out" "$name: CLOSED"
  expect_helper CLOSED state $name
done
expect_helper "admitted=1 rejected=0" call payments success 1

# --- create, destroy --------------------------------------------------------------
run_cbctl 0 create "$reg" orders --policy count --window-size 20 --minimum-calls 2 --failure-rate 0.5 --open-for 2m
expect_eq "create says" "$out" "orders: created"
expect_helper CLOSED state orders
# its configuration is the one asked for: two failures trip it, for 2 minutes
expect_helper "admitted=2 rejected=0" call orders failure 2
expect_helper OPEN state orders
run_cbctl 0 show --json "$reg" orders
expect_eq "orders: open for 2m" "$(json '(d["state"], 100e9 < d["retry_after_ns"] <= 120e9)')" "('OPEN', True)"
run_cbctl 6 create "$reg" orders
[ "$err" = "cbctl: $reg: a breaker named 'orders' exists" ] || fail "create of a taken name: $err"
ok "create of a taken name exits 6: $err"
# --exist-ok: the same configuration is fine, another one is not
run_cbctl 0 create "$reg" orders --exist-ok --policy count --window-size 20 --minimum-calls 2 --failure-rate 0.5 --open-for 2m
run_cbctl 6 create "$reg" orders --exist-ok --policy count --window-size 30
ok "create --exist-ok accepts the same configuration only"
# every configuration option reaches the library
run_cbctl 0 create "$reg" everything --policy time --failure-threshold 7 --open-for 1500ms \
  --half-open-calls 2 --half-open-successes 2 --half-open-timeout 10s --window-size 50 \
  --window-duration 30s --window-buckets 6 --minimum-calls 10 --failure-rate 0.3 --slow-call 250ms \
  --slow-call-rate 0.8 --backoff 2 --open-for-max 10m --jitter 0.1
expect_helper CLOSED state everything

run_cbctl 0 destroy "$reg" orders
expect_eq "destroy says" "$out" "orders: destroyed"
expect_helper ENOENT state orders
run_cbctl 0 list "$reg"
[ -z "$(row orders)" ] || fail "list still shows orders"
ok "list no longer shows orders"
# the name is free again
run_cbctl 0 create "$reg" orders
expect_helper CLOSED state orders

# --- metrics ------------------------------------------------------------------------
run_cbctl 0 trip "$reg" payments --for 1m
run_cbctl 0 metrics "$reg"
grep -q '^# TYPE lazybreaker_state gauge' <<<"$out" || fail "metrics lacks the lazybreaker_state TYPE line"
for name in payments search inventory ledger orders everything; do
  grep -q "^lazybreaker_state{.*breaker=\"$name\"" <<<"$out" || fail "metrics lacks lazybreaker_state for $name"
done
grep -E '^lazybreaker_state\{' <<<"$out" | grep 'breaker="payments"' | grep 'state="open"' | grep -q ' 1$' ||
  fail "metrics does not show payments open: $(grep 'breaker="payments"' <<<"$out")"
ok "metrics has lazybreaker_state for every breaker, payments open"

# --- a new file -----------------------------------------------------------------------
umask 077 # the mode asked for is set exactly, whatever the umask
new=$work/new.lbr
run_cbctl 4 create "$new" first
ok "create without --create-file on a missing file exits 4"
[ ! -e "$new" ] || fail "a failed create left $new behind"
run_cbctl 0 create "$new" first --create-file --capacity 16 --mode 0640
expect_eq "new file's mode" "$(stat -c %a "$new")" "640"
run_cbctl 0 list --json "$new"
expect_eq "the new file's breakers" "$(json '[b["name"] for b in d["breakers"]]')" "['first']"
run_cbctl 6 create "$new" second --create-file --exclusive
ok "create --create-file --exclusive on an existing file exits 6"
run_cbctl 0 create "$new" second --create-file
run_cbctl 2 create "$new" third --capacity 32
ok "a --capacity that disagrees with the file exits 2: $err"
for i in $(seq 3 16); do run_cbctl 0 create "$new" "b$i"; done
run_cbctl 1 create "$new" one-too-many
[[ $err == "cbctl: $new: the file is full: it holds as many breakers as its capacity"* ]] || fail "create in a full file: $err"
ok "create in a full file exits 1: $err"

stop_helper
echo "passed"
