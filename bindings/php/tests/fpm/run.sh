#!/usr/bin/env bash
# The real PHP-FPM test (CTest php.fpm):
#
#   run.sh PHP PHP-FPM NGINX CBCTL EXTENSION CLASSES TRANSCRIPT
#
# starts php-fpm (a static pool of 4 workers running as www-data, so the
# workers create and own the registry file) behind nginx on 127.0.0.1
# (free ports), in front of a flaky upstream (upstream.php under `php -S`)
# the test controls; every process is started here and stopped by its pid
# with signals (no systemd), the whole run bounded by CTest's TIMEOUT and
# each wait here. Shown with curl, each step written to TRANSCRIPT
# (request, status, the worker's pid, Retry-After, upstream calls):
#   1. three failures at once, on three different workers, trip the one
#      breaker (counted across workers, not per worker);
#   2. then every worker answers 503 with Retry-After at once, without
#      calling the upstream;
#   3. after the open duration, exactly one request probes (the others
#      answer 503 while it is in flight), and the breaker closes;
#   4. tripped again, it stays OPEN across a restart of php-fpm;
#   5. `cbctl list` on the file shows the same breaker, open.
set -euo pipefail
php=${1:?usage: run.sh PHP PHP-FPM NGINX CBCTL EXTENSION CLASSES TRANSCRIPT}
fpm=${2:?} nginx=${3:?} cbctl=${4:?} extension=${5:?} classes=${6:?} transcript=${7:?}
here=$(cd "$(dirname "$0")" && pwd)
open_seconds=4
[ "$(id -u)" -eq 0 ] || { echo "php.fpm: SKIPPED: needs root (php-fpm switches its workers to www-data)" >&2; exit 77; }
id www-data >/dev/null

dir=$(mktemp -d /tmp/lb-php-fpm.XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "php.fpm: FAILED: $*" | tee -a "$transcript" >&2
  for log in fpm.log php-errors.log nginx-error.log upstream.log; do
    [ -s "$dir/$log" ] && { echo "--- $log"; tail -20 "$dir/$log"; } >&2
  done
  exit 1
}
say() { echo "$*" | tee -a "$transcript"; }
: >"$transcript"

free_port() { "$php" -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];'; }
web_port=$(free_port)
up_port=$(free_port)
[ "$web_port" != "$up_port" ] || up_port=$(free_port)
# The file's directory is the workers' (as /run/php is), so they create it.
mkdir "$dir/registry"
file=$dir/registry/app.lbr
# www-data must reach the extension, the classes and the app (copied here).
cp "$extension" "$dir/lazybreaker.so"
cp -r "$classes" "$dir/classes"
cp "$here/app.php" "$here/upstream.php" "$dir/"
echo "fail 0.3" >"$dir/mode"
: >"$dir/upstream-hits"
chmod -R a+rX "$dir"
chown www-data:www-data "$dir/registry"
chmod 700 "$dir/registry"

cat >"$dir/fpm.conf" <<CONF
[global]
pid = $dir/fpm.pid
error_log = $dir/fpm.log
daemonize = no
[app]
user = www-data
group = www-data
listen = $dir/fpm.sock
listen.owner = www-data
listen.mode = 0666
pm = static
pm.max_children = 4
clear_env = yes
env[LB_FPM_FILE] = $file
env[LB_FPM_UPSTREAM] = http://127.0.0.1:$up_port/
env[LB_FPM_OPEN_SECONDS] = $open_seconds
env[LB_PHP_CLASSES] = $dir/classes
php_admin_value[error_log] = $dir/php-errors.log
php_admin_flag[log_errors] = on
CONF
cat >"$dir/nginx.conf" <<CONF
daemon off;
user www-data;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $dir/nginx-body;
  fastcgi_temp_path $dir/nginx-fastcgi;
  proxy_temp_path $dir/nginx-proxy;
  uwsgi_temp_path $dir/nginx-uwsgi;
  scgi_temp_path $dir/nginx-scgi;
  server {
    listen 127.0.0.1:$web_port;
    location / {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $dir/app.php;
      fastcgi_pass unix:$dir/fpm.sock;
    }
  }
}
CONF

wait_for() { # what, command...: up to 10 s
  local what=$1; shift
  for _ in $(seq 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "$what did not come up"
}
fpm_pid=
start_fpm() {
  "$fpm" -F -y "$dir/fpm.conf" -d "extension=$dir/lazybreaker.so" &
  fpm_pid=$!
  pids+=("$fpm_pid")
  wait_for php-fpm test -S "$dir/fpm.sock"
}
stop_fpm() { # SIGQUIT: a graceful stop; wait at most 10 s, then SIGKILL
  kill -QUIT "$fpm_pid"
  for _ in $(seq 100); do kill -0 "$fpm_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$fpm_pid" 2>/dev/null && kill -KILL "$fpm_pid"
  wait "$fpm_pid" 2>/dev/null || true
  rm -f "$dir/fpm.sock"
}

LB_FPM_DIR=$dir "$php" -n -S "127.0.0.1:$up_port" "$dir/upstream.php" >"$dir/upstream.log" 2>&1 &
pids+=($!)
wait_for upstream curl -s -o /dev/null "http://127.0.0.1:$up_port/"
: >"$dir/upstream-hits"
start_fpm
"$nginx" -c "$dir/nginx.conf" -p "$dir" &
pids+=($!)
wait_for nginx curl -s -o /dev/null "http://127.0.0.1:$web_port/?warm"
# The warm-up request above went to the upstream: start counting now.
: >"$dir/upstream-hits"
workers=$(pgrep -P "$fpm_pid" | sort | tr '\n' ' ')
say "php-fpm master $fpm_pid, workers (www-data): $workers; nginx on 127.0.0.1:$web_port; upstream on 127.0.0.1:$up_port"
[ "$(stat -c %U "$file")" = www-data ] || fail "the registry file is owned by $(stat -c %U "$file"), not www-data"
say "registry file $file owned by $(stat -c '%U, mode %a' "$file")"
# the warm-up's failure counts: reset to start from a clean run
"$cbctl" reset "$file" upstream >/dev/null

hits() { wc -l <"$dir/upstream-hits"; }
n=0
# Sends $1 requests at once (each with ?hold=$2), waits for all; writes
# "status pid retry-after state" per request to $dir/batch, in order.
batch() {
  local count=$1 hold=$2 i
  for i in $(seq "$count"); do
    curl -s -o /dev/null -D "$dir/h.$i" -m 10 "http://127.0.0.1:$web_port/?hold=$hold" &
  done
  wait_curls
  : >"$dir/batch"
  for i in $(seq "$count"); do
    n=$((n + 1))
    local status pid retry state
    status=$(awk 'NR==1 {print $2}' "$dir/h.$i")
    pid=$(awk -F': ' 'tolower($1)=="x-worker-pid" {gsub("\r",""); print $2}' "$dir/h.$i")
    retry=$(awk -F': ' 'tolower($1)=="retry-after" {gsub("\r",""); print $2}' "$dir/h.$i")
    state=$(awk -F': ' 'tolower($1)=="x-breaker-state" {gsub("\r",""); print $2}' "$dir/h.$i")
    echo "$status ${pid:--} ${retry:--} ${state:--}" >>"$dir/batch"
    say "  request $n: HTTP $status from worker ${pid:-?}${retry:+, Retry-After: $retry}, breaker ${state:-?}"
  done
}
wait_curls() { for job in $(jobs -p); do case " ${pids[*]} " in *" $job "*) ;; *) wait "$job" || true ;; esac; done; }
count_status() { awk -v s="$1" '$1==s' "$dir/batch" | wc -l; }
distinct_pids() { awk -v s="$1" '$1==s {print $2}' "$dir/batch" | sort -u | wc -l; }

say "1. the upstream fails (500 after 0.3 s); 3 requests at once"
batch 3 0.5
[ "$(count_status 502)" -eq 3 ] || fail "expected 3 failures (502), got: $(cat "$dir/batch")"
[ "$(distinct_pids 502)" -eq 3 ] || fail "the 3 failures were not on 3 different workers"
[ "$(hits)" -eq 3 ] || fail "the upstream saw $(hits) calls, not 3"
state=$("$cbctl" list "$file" | awk '$1 == "upstream" {print $2}')
[ "$state" = OPEN ] || fail "after 3 failures on 3 workers the breaker is $state, not OPEN"
say "   3 failures on 3 different workers, upstream calls: $(hits): the breaker is $state (a per-worker breaker of threshold 3 would have seen one failure each)"

say "2. open: 12 requests, 4 at a time"
seen=""
for _ in 1 2 3; do
  batch 4 0.3
  [ "$(count_status 503)" -eq 4 ] || fail "expected 503 from every worker, got: $(cat "$dir/batch")"
  awk '$3=="-" || $3<1 {exit 1}' "$dir/batch" || fail "a 503 without a Retry-After of 1 s or more"
  seen="$seen $(awk '{print $2}' "$dir/batch")"
done
answered=$(tr ' ' '\n' <<<"$seen" | grep -v '^$' | sort -u | wc -l)
[ "$answered" -eq 4 ] || fail "503 came from $answered workers, not all 4"
[ "$(hits)" -eq 3 ] || fail "the upstream was called while open ($(hits) calls)"
say "   every answer 503 with Retry-After, from all 4 workers; upstream calls still $(hits)"

say "3. the upstream recovers (ok after 1 s); after the open duration ($open_seconds s), 4 requests at once"
echo "ok 1" >"$dir/mode"
sleep "$open_seconds"
sleep 0.2
batch 4 0
[ "$(count_status 200)" -eq 1 ] || fail "expected exactly one probe (200), got: $(cat "$dir/batch")"
[ "$(count_status 503)" -eq 3 ] || fail "expected the 3 others rejected while the probe was in flight"
[ "$(hits)" -eq 4 ] || fail "the upstream saw $(($(hits) - 3)) probes, not 1"
batch 1 0
[ "$(count_status 200)" -eq 1 ] && [ "$(awk '{print $4}' "$dir/batch")" = closed ] || fail "not closed after the probe"
say "   exactly one probe reached the upstream (calls: $(hits)); the breaker closed"

say "4. tripped again, then php-fpm is restarted"
echo "fail 0.3" >"$dir/mode"
batch 3 0.5
[ "$(count_status 502)" -eq 3 ] || fail "expected 3 failures, got: $(cat "$dir/batch")"
before=$(hits)
old_workers=$workers
stop_fpm
say "   php-fpm stopped (SIGQUIT)"
start_fpm
workers=$(pgrep -P "$fpm_pid" | sort | tr '\n' ' ')
say "   php-fpm started again: master $fpm_pid, workers $workers (before: $old_workers)"
batch 4 0
[ "$(count_status 503)" -eq 4 ] || fail "not OPEN after the restart: $(cat "$dir/batch")"
[ "$(hits)" -eq "$before" ] || fail "the upstream was called after the restart"
say "   still OPEN after the restart: 503 at once, upstream calls still $(hits)"

say "5. cbctl list $file"
"$cbctl" list "$file" | tee -a "$transcript" >"$dir/list"
grep -Eq '^upstream +OPEN ' "$dir/list" || fail "cbctl list does not show upstream OPEN"
say "php.fpm: passed"
