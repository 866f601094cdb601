#!/usr/bin/env bash
# bench/php through php-fpm: php-fpm8.2 (a static pool of 4 workers) behind
# nginx on 127.0.0.1, `ab -c 4` against fpm-app.php with each breaker in
# turn (the call alone, the extension, the SQLite table, Redis), and the
# time each adds per request over the call alone. Every process is started
# here and stopped by its pid. Needs root (the workers run as www-data).
#
#   LB_PHP_EXTENSION=.../lazybreaker.so fpm-bench.sh PHP REDIS_PORT WORKDIR [REQUESTS]
set -euo pipefail
php=${1:?usage: fpm-bench.sh PHP REDIS_PORT WORKDIR [REQUESTS]}
redis_port=${2:?} dir=${3:?} requests=${4:-3000}
ext=${LB_PHP_EXTENSION:?}
here=$(cd "$(dirname "$0")" && pwd)
fpm=$(command -v php-fpm8.2 || command -v /usr/sbin/php-fpm8.2 || true)
nginx=$(command -v nginx || command -v /usr/sbin/nginx || true)
if [ "$(id -u)" -ne 0 ] || [ -z "$fpm" ] || [ -z "$nginx" ] || ! command -v ab >/dev/null; then
  echo "bench-php: no php-fpm bench (needs root, php8.2-fpm, nginx and ab from apache2-utils)"
  exit 0
fi
pids=()
stop() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done; }
trap stop EXIT
mkdir -p "$dir/fpm/data"
cp "$ext" "$dir/fpm/lazybreaker.so"
cp -r "$here/../../bindings/php/src" "$dir/fpm/classes"
cp "$here/breakers.php" "$here/fpm-app.php" "$dir/fpm/"
chmod -R a+rX "$dir"
chown www-data:www-data "$dir/fpm/data"
port=$("$php" -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];')
cat >"$dir/fpm/fpm.conf" <<CONF
[global]
pid = $dir/fpm/fpm.pid
error_log = $dir/fpm/fpm.log
daemonize = no
[bench]
user = www-data
group = www-data
listen = $dir/fpm/fpm.sock
listen.mode = 0666
pm = static
pm.max_children = 4
env[LB_BENCH_FILE] = $dir/fpm/data/bench.lbr
env[LB_BENCH_SQLITE] = $dir/fpm/data/bench.sqlite
env[LB_BENCH_REDIS_PORT] = $redis_port
env[LB_PHP_CLASSES] = $dir/fpm/classes/autoload.php
CONF
cat >"$dir/fpm/nginx.conf" <<CONF
daemon off;
user www-data;
worker_processes 2;
pid $dir/fpm/nginx.pid;
error_log $dir/fpm/nginx-error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/fpm/nb; fastcgi_temp_path $dir/fpm/nf; proxy_temp_path $dir/fpm/np;
  uwsgi_temp_path $dir/fpm/nu; scgi_temp_path $dir/fpm/ns;
  server {
    listen 127.0.0.1:$port;
    location / {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $dir/fpm/fpm-app.php;
      fastcgi_pass unix:$dir/fpm/fpm.sock;
    }
  }
}
CONF
"$fpm" -F -y "$dir/fpm/fpm.conf" -d "extension=$dir/fpm/lazybreaker.so" &
pids+=($!)
"$nginx" -c "$dir/fpm/nginx.conf" -p "$dir/fpm" &
pids+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/?mode=none" && break; sleep 0.1; done

declare -A ms rps
for mode in none lazybreaker sqlite redis; do
  curl -sf -o /dev/null "http://127.0.0.1:$port/?mode=$mode" || { echo "bench-php: fpm-app.php?mode=$mode fails" >&2; tail "$dir/fpm/nginx-error.log" >&2; exit 1; }
  ab -q -n 200 -c 4 "http://127.0.0.1:$port/?mode=$mode" >/dev/null 2>&1
  out=$(ab -q -n "$requests" -c 4 "http://127.0.0.1:$port/?mode=$mode" 2>&1)
  grep -q '^Non-2xx responses' <<<"$out" && { echo "bench-php: non-2xx answers for $mode" >&2; exit 1; }
  rps[$mode]=$(awk '/^Requests per second/ {print $4}' <<<"$out")
  ms[$mode]=$(awk '/^Time per request/ && /mean\)$/ {print $4}' <<<"$out")
done
echo
echo "bench/php through php-fpm (4 static workers behind nginx), ab -c 4 -n $requests"
printf '%-34s %10s %16s %22s %12s\n' "breaker" "req/s" "ms per request" "added per request (us)" "x ext"
for mode in none lazybreaker sqlite redis; do
  awk -v l="$mode" -v r="${rps[$mode]}" -v m="${ms[$mode]}" -v base="${ms[none]}" -v ext="${ms[lazybreaker]}" '
    BEGIN { added = (m - base) * 1000; e = (ext - base) * 1000;
            x = (l == "none") ? "" : (e > 0 ? sprintf("%.1fx", added / e) : "-");
            printf "%-34s %10.0f %16.3f %22.1f %12s\n", l, r, m, added, x }'
done
