#!/usr/bin/env bash
# Counts the instructions cb_allow and cb_done execute per call (their
# bodies, and whatever they call; not the caller's PLT stub), in CLOSED with
# successful outcomes and statistics counting, and cb_allow's rejections in
# OPEN far from the deadline and in a full HALF_OPEN period, exactly, under
# valgrind's callgrind: the machine's load does not change the count; and the
# CLOSED pair, the count-window pair and the OPEN rejection on a shared
# registry (a registry file) beside a private one.
#
# usage: callgrind-count.sh [--max-pair N] path/to/lazybreaker-icount
#
# Each function is counted alone (--toggle-collect) at two call counts, and
# the difference is divided by the difference of the counts, so one-time
# costs (the first call's stripe claim) fall out. With --max-pair, exits 1
# if cb_allow + cb_done exceed N instructions.
set -euo pipefail

max_pair=""
if [ "${1:-}" = "--max-pair" ]; then
  max_pair=$2
  shift 2
fi
[ $# -eq 1 ] || { echo "usage: $0 [--max-pair N] path/to/lazybreaker-icount" >&2; exit 2; }
driver=$1
command -v valgrind >/dev/null || { echo "callgrind-count: valgrind is not installed" >&2; exit 2; }

n1=1000
n2=11000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions executed inside function $1 (inclusive) during `driver $2 $3`.
count() {
  local out="$tmp/callgrind.$1.$2.${3:-consecutive}"
  valgrind -q --tool=callgrind --toggle-collect="$1" --callgrind-out-file="$out" \
    "$driver" "$2" ${3:-} >/dev/null
  awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# Instructions per call of function $1, as an exact fraction printed to 2
# decimals.
per_call() {
  local a b
  a=$(count "$1" $n1 "${2:-}")
  b=$(count "$1" $n2 "${2:-}")
  awk -v a="$a" -v b="$b" -v n=$((n2 - n1)) 'BEGIN { printf "%.2f", (b - a) / n }'
}

allow=$(per_call cb_allow)
done_=$(per_call cb_done)
noop_allow=$(per_call lb_noop_allow)
noop_done=$(per_call lb_noop_done)
pair=$(awk -v a="$allow" -v b="$done_" 'BEGIN { printf "%.2f", a + b }')
noop_pair=$(awk -v a="$noop_allow" -v b="$noop_done" 'BEGIN { printf "%.2f", a + b }')

echo
echo "Instructions per call (callgrind, exact; CLOSED, successes, statistics on):"
echo
printf '%-28s %10s %10s %10s\n' "function" "allow" "done" "pair"
printf '%-28s %10s %10s %10s\n' "cb_allow + cb_done" "$allow" "$done_" "$pair"
printf '%-28s %10s %10s %10s\n' "noop pair (shared library)" "$noop_allow" "$noop_done" "$noop_pair"
# A table of allow, done and their sum per call for each driver mode; the
# row label is the mode less any "_failures" suffix.
pair_table() { # <title> <mode>...
  local title=$1 mode a d
  shift
  echo
  echo "$title"
  echo
  printf '%-28s %10s %10s %10s\n' "policy" "allow" "done" "pair"
  for mode in "$@"; do
    a=$(per_call cb_allow "$mode")
    d=$(per_call cb_done "$mode")
    printf '%-28s %10s %10s %10s\n' "${mode%_failures}" "$a" "$d" "$(awk -v a="$a" -v b="$d" 'BEGIN { printf "%.2f", a + b }')"
  done
}

if [ -z "$max_pair" ]; then
  pair_table "The same under each other policy (successes; a window is checked when it moves):" \
    count_window time_window slow_calls
  pair_table "All failures until the trip (then cb_reset, not counted), per call:" \
    count_window_failures time_window_failures
  echo
  echo "Rejections (cb_allow alone; the coarse clock read is clock_gettime, counted apart):"
  echo
  printf '%-28s %10s %10s %10s\n' "state" "cb_allow" "clock" "beyond"
  for mode in open half_open_full; do
    a=$(per_call cb_allow $mode)
    c=$(per_call 'clock_gettime*' $mode)
    printf '%-28s %10s %10s %10s\n' "$mode" "$a" "$c" "$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.2f", a - c }')"
  done
  # The same calls on a shared registry (a registry file in /dev/shm), with
  # the private registry's beside them.
  echo
  echo "A shared registry (a file in /dev/shm) against a private one, per call:"
  echo
  printf '%-28s %10s %10s %10s\n' "calls" "private" "shared" "shared-private"
  for mode in consecutive count_window open; do
    if [ $mode = open ]; then
      p=$(per_call cb_allow open)
      s=$(per_call cb_allow shared_open)
      label="OPEN rejection"
    else
      p=$(awk -v a="$(per_call cb_allow $mode)" -v b="$(per_call cb_done $mode)" 'BEGIN { printf "%.2f", a + b }')
      s=$(awk -v a="$(per_call cb_allow shared_$mode)" -v b="$(per_call cb_done shared_$mode)" 'BEGIN { printf "%.2f", a + b }')
      label="$mode pair"
    fi
    printf '%-28s %10s %10s %10s\n' "$label" "$p" "$s" "$(awk -v a="$p" -v b="$s" 'BEGIN { printf "%+.2f", b - a }')"
  done
fi
if [ -n "$max_pair" ]; then
  echo
  if awk -v p="$pair" -v m="$max_pair" 'BEGIN { exit !(p > m) }'; then
    echo "FAIL: cb_allow + cb_done take $pair instructions, more than the limit $max_pair"
    exit 1
  fi
  echo "ok: cb_allow + cb_done take $pair instructions, the limit is $max_pair"
fi
