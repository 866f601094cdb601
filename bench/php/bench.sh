#!/usr/bin/env bash
# bench/php (`make bench`, target bench-php): per protected call from PHP,
# side by side in one run, in 1 and in 4 php-cli processes on one shared
# breaker: the lazybreaker extension's Breaker::call, a SQLite-table breaker
# (pdo_sqlite) and a Redis breaker (php-redis, against a redis-server
# started here on a free port and stopped by its pid). Prints a table with
# each one's ns per call, its queries per call, and how many times slower
# than the extension it is; then the same through php-fpm and ab
# (fpm-bench.sh).
#
#   LB_PHP_EXTENSION=.../lazybreaker.so bench.sh PHP [CALLS]
set -euo pipefail
php=${1:?usage: bench.sh PHP [CALLS]}
calls=${2:-${LB_PHP_BENCH_CALLS:-20000}}
ext=${LB_PHP_EXTENSION:?the extension to load}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/lb-php-bench.XXXXXX)
redis_pid=
cleanup() { [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
command -v redis-server >/dev/null || { echo "bench-php: no redis-server (packaging/install-deps.sh)" >&2; exit 1; }
"$php" -m | grep -x redis >/dev/null || { echo "bench-php: no php-redis" >&2; exit 1; }
"$php" -m | grep -x pdo_sqlite >/dev/null || { echo "bench-php: no pdo_sqlite (php8.2-sqlite3)" >&2; exit 1; }

port=$("$php" -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

run() { # mode procs target: mean ns per call over the processes, and queries
  local mode=$1 procs=$2 target=$3 i pids=() n=$calls
  # the breakers that query a server or a file: a tenth as many calls
  case $mode in sqlite | redis) n=$((calls / 10 > 500 ? calls / 10 : 500)) ;; esac
  rm -f "$dir"/out.*
  for i in $(seq "$procs"); do
    "$php" -d "extension=$ext" "$here/bench.php" "$mode" "$n" "$target" >"$dir/out.$i" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i"; done
  cat "$dir"/out.* | awk '{ns += $1; q = $2} END {printf "%.1f %d\n", ns / NR, q}'
}

declare -A ns queries
for procs in 1 4; do
  for mode in none lazybreaker sqlite redis; do
    case $mode in
      none) target= ;;
      lazybreaker) target=$dir/bench.lbr ;;
      sqlite) target=$dir/bench.sqlite ;;
      redis) target=$port ;;
    esac
    # one process makes the table (and WAL mode) before several share it
    [ "$mode" = sqlite ] && "$php" -d "extension=$ext" "$here/bench.php" sqlite 1 "$target" >/dev/null
    run "$mode" "$procs" "$target" >"$dir/result"
    read -r ns["$mode.$procs"] queries["$mode"] <"$dir/result"
  done
done

echo
echo "bench/php: $calls protected calls per process ($((calls / 10 > 500 ? calls / 10 : 500)) for SQLite and Redis), php $("$php" -r 'echo PHP_VERSION;'), $(nproc) CPUs"
printf '%-34s %14s %14s %9s %12s %12s\n' "breaker" "ns/call (1p)" "ns/call (4p)" "queries" "x ext (1p)" "x ext (4p)"
for mode in none lazybreaker sqlite redis; do
  case $mode in
    none) label="the call alone (no breaker)" ;;
    lazybreaker) label="lazybreaker extension (file)" ;;
    sqlite) label="SQLite table (pdo_sqlite, WAL)" ;;
    redis) label="Redis GET + INCR (php-redis)" ;;
  esac
  awk -v l="$label" -v a="${ns[$mode.1]}" -v b="${ns[$mode.4]}" -v q="${queries[$mode]}" \
      -v la="${ns[lazybreaker.1]}" -v lb="${ns[lazybreaker.4]}" \
      'BEGIN {printf "%-34s %14.0f %14.0f %9d %11.1fx %11.1fx\n", l, a, b, q, a / la, b / lb}'
done

# The same through php-fpm and ab (root only).
"$here/fpm-bench.sh" "$php" "$port" "$dir"
