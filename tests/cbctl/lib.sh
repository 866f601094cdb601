# Shared by the cbctl tests (sourced). The test's CMakeLists sets CBCTL and
# HELPER (the built programs). Each test works in a directory of its own,
# removed at the end, and every process it started is killed on the way
# out, whether it passed or not.
set -euo pipefail
: "${CBCTL:?CBCTL must name the cbctl program}" "${HELPER:?HELPER must name registry_helper}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cbctl-test.XXXXXX")
reg=$work/registry.lbr
started_pids=()
cleanup_hooks=()
cleanup() {
  local rc=$? hook pid
  for hook in "${cleanup_hooks[@]}"; do eval "$hook" || true; done
  for pid in "${started_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${started_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ $rc -ne 0 ] && [ -n "${KEEP_CBCTL_TEST:-}" ]; then
    echo "kept $work" >&2
  else
    rm -rf "$work"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# How long a test waits for what it can observe (a screen, a file, an
# answer, a port) before it fails. Only a failing test waits it out, so it
# is long: on a loaded machine (a sanitizer build beside a parallel build)
# a redraw has taken over 10 s. Tests poll for what they check, never sleep
# a fixed time and then look.
patience=30

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

# Starts the helper on $reg and waits for its "ready".
start_helper() {
  coproc HELPER_PROC { exec "$HELPER" "$reg"; }
  started_pids+=("$HELPER_PROC_PID")
  local line
  read -r -t "$patience" line <&"${HELPER_PROC[0]}" || fail "the helper did not start"
  [ "$line" = ready ] || fail "the helper said '$line'"
}

# ask COMMAND...: the helper's one-line answer, in $answer.
ask() {
  echo "$*" >&"${HELPER_PROC[1]}"
  read -r -t "$patience" answer <&"${HELPER_PROC[0]}" || fail "the helper did not answer '$*'"
}

# expect_helper WANT COMMAND...: the helper answers exactly WANT.
expect_helper() {
  local want=$1
  shift
  ask "$@"
  [ "$answer" = "$want" ] || fail "helper: '$*' answered '$answer', want '$want'"
  ok "the helper sees '$*' = $want"
}

# run_cbctl WANT_STATUS ARGS...: runs cbctl, leaves $out and $err, checks
# the exit status.
run_cbctl() {
  local want=$1 rc=0
  shift
  # a cbctl that should have ended but did not: status 124
  timeout 30 "$CBCTL" "$@" >"$work/out" 2>"$work/err" || rc=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
  if [ "$rc" -ne "$want" ]; then
    fail "cbctl $* exited $rc, want $want; stdout: $out; stderr: $err"
  fi
}

# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s until it
# succeeds; returns 1 after SECONDS. COMMAND is run anew each time, so what
# it looks at must be looked at inside it (a function, not a "$(...)" in
# the arguments, which is expanded once, before the first poll).
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

# A loopback TCP port nobody listens on right now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_serve LOG ARGS...: cbctl serve on a free port it picks itself
# (--listen 127.0.0.1:0); its pid in $serve_pid, its port in $serve_port.
start_serve() {
  local log=$1
  shift
  "$CBCTL" serve "$@" --listen 127.0.0.1:0 2>"$log" &
  serve_pid=$!
  started_pids+=("$serve_pid")
  wait_until "$patience" grep -q 'at http://127.0.0.1:[0-9]*/metrics' "$log" || fail "serve did not start: $(cat "$log")"
  serve_port=$(sed -n 's#.*at http://127.0.0.1:\([0-9]*\)/metrics.*#\1#p' "$log")
}

# Ends the helper with "quit"; it must exit 0.
stop_helper() {
  echo quit >&"${HELPER_PROC[1]}"
  local pid=$HELPER_PROC_PID rc=0
  wait "$pid" || rc=$?
  [ $rc -eq 0 ] || fail "the helper exited $rc"
}
