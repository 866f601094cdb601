#!/usr/bin/env bash
# cbctl's errors: the message's shape ("cbctl: FILE: ..."), the documented
# exit status of each kind, and that a refused command changes nothing.
source "$(dirname "$0")/lib.sh"
start_helper

# expect_error STATUS PATTERN ARGS...: cbctl ARGS exits STATUS, prints
# nothing on stdout and one stderr line matching the glob PATTERN.
expect_error() {
  local status=$1 pattern=$2
  shift 2
  run_cbctl "$status" "$@"
  [ -z "$out" ] || fail "cbctl $* printed on stdout: $out"
  [[ $(head -n1 <<<"$err") == $pattern ]] || fail "cbctl $*: stderr '$err' does not match '$pattern'"
  ok "cbctl $* exits $status: $(head -n1 <<<"$err")"
}

missing=$work/no-such-file.lbr
for cmd in list metrics watch serve; do
  expect_error 4 "cbctl: $missing: *" $cmd "$missing"
done
for cmd in show trip force-open disable reset destroy create; do
  expect_error 4 "cbctl: $missing: *" $cmd "$missing" payments
done
[ ! -e "$missing" ] || fail "a command on a missing file created it"

for cmd in show trip force-open disable reset destroy; do
  expect_error 3 "cbctl: $reg: no breaker named 'nosuch'" $cmd "$reg" nosuch
done

expect_error 2 "cbctl: --for: bad duration '5x': unknown unit at 'x'" trip "$reg" payments --for 5x
expect_error 2 "cbctl: --for: bad duration '30': no unit*" trip "$reg" payments --for 30
expect_error 2 "cbctl: --for: bad duration '': *" trip "$reg" payments --for ''
expect_error 2 "cbctl: --interval: bad duration 'soon': *" watch "$reg" --interval soon
expect_error 2 "cbctl: --interval: 1ms is below 10ms" watch "$reg" --interval 1ms
expect_error 2 "cbctl: --open-for: bad duration '1.s': *" create "$reg" x --open-for 1.s
# in range for cbctl, out of range for the library: cb_trip's CB_EINVAL
expect_error 2 "cbctl: $reg: *" trip "$reg" payments --for 1ns
expect_error 2 "cbctl: $reg: *failure_threshold*" create "$reg" x --failure-threshold 0
expect_error 2 "cbctl: $reg: *failure_rate*" create "$reg" x --policy count --failure-rate 1.5
# ... and a refused configuration or name creates no file
expect_error 2 "cbctl: $work/never.lbr: *failure_threshold*" create "$work/never.lbr" x --create-file --failure-threshold 0
expect_error 2 "cbctl: $work/never.lbr: *" create "$work/never.lbr" "$(printf 'bad\xffname')" --create-file
[ ! -e "$work/never.lbr" ] || fail "a refused create left a new file behind"
ok "a refused create --create-file leaves no file behind"
expect_error 2 "cbctl: *policy*" create "$reg" x --policy sometimes
expect_error 2 "cbctl: *--failure-threshold*" create "$reg" x --failure-threshold -1
expect_error 2 "cbctl: *mode*" create "$reg" x --create-file --mode 999
expect_error 2 "cbctl: *--create-file*" create "$reg" x --mode 0644
expect_error 2 "cbctl: --listen: *" serve "$reg" --listen nowhere
expect_error 2 "cbctl: --listen: bad port '70000'*" serve "$reg" --listen 127.0.0.1:70000
expect_error 2 "cbctl: *" frobnicate "$reg"
expect_error 2 "cbctl: *" list
expect_error 2 "cbctl: *" show "$reg"
expect_error 2 "cbctl: *" list "$reg" extra
expect_error 2 "cbctl: *" --no-such-option

# Files that are not registries.
printf 'not a registry\n' >"$work/text"
expect_error 5 "cbctl: $work/text: not a lazybreaker registry file*" list "$work/text"
: >"$work/empty"
expect_error 5 "cbctl: $work/empty: *" list "$work/empty"
head -c 65536 /dev/zero >"$work/zeros"
expect_error 5 "cbctl: $work/zeros: *" list "$work/zeros"
# A directory.
expect_error 5 "cbctl: $work: a directory, not a registry file" list "$work"

# A file the caller may not open: as another user when this runs as root
# (root opens anything), as this user otherwise.
chmod 0755 "$work"
locked=$work/locked.lbr
cp "$reg" "$locked"
chmod 0600 "$locked"
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null &&
     setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$CBCTL"; then
    rc=0
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$CBCTL" list "$locked" >"$work/out" 2>"$work/err" || rc=$?
    [ $rc -eq 4 ] || fail "list of a file nobody may not open exited $rc: $(cat "$work/err")"
    [[ $(cat "$work/err") == "cbctl: $locked: "* ]] || fail "stderr: $(cat "$work/err")"
    ok "a file the caller may not open exits 4: $(cat "$work/err")"
  else
    echo "skip the permission check: cannot run cbctl as nobody here"
  fi
else
  chmod 0000 "$locked"
  expect_error 4 "cbctl: $locked: *" list "$locked"
fi

# A create does not trust a file someone else may have put at the path:
# another user's (when this runs as root), one others may write, a
# symlink. Status 4, the message naming the owner and mode; --any-owner
# uses it, and the commands without a create open it as before.
planted=$work/planted.lbr
run_cbctl 0 create "$planted" first --create-file --capacity 16 --mode 0666
if [ "$(id -u)" -eq 0 ]; then
  chown nobody "$planted"
  expect_error 4 "cbctl: $planted: an existing file owned by uid $(id -u nobody) (nobody) with mode 0666: *CB_REGISTRY_ANY_OWNER*" \
    create "$planted" second --create-file --mode 0666
fi
expect_error 4 "cbctl: $planted: an existing file owned by uid * with mode 0666: *" create "$planted" second --create-file
expect_error 2 "cbctl: *--create-file*" create "$planted" second --any-owner
run_cbctl 0 create "$planted" second --create-file --any-owner
run_cbctl 0 list "$planted"
[ "$(awk 'NR > 1 {print $1}' <<<"$out" | paste -sd' ')" = "first second" ] || fail "list of the planted file: $out"
ok "create --create-file --any-owner uses the planted file; list opens it"
ln -s "$planted" "$work/link.lbr"
expect_error 4 "cbctl: $work/link.lbr: a symbolic link to $planted; *" create "$work/link.lbr" third --create-file --any-owner
ln -s "$work/gone.lbr" "$work/dangling.lbr"
expect_error 4 "cbctl: $work/dangling.lbr: a symbolic link to $work/gone.lbr, which does not exist; *" \
  create "$work/dangling.lbr" third --create-file
[ ! -e "$work/gone.lbr" ] || fail "a create through a dangling symlink made its target"

# Nothing above changed the registry.
run_cbctl 0 list "$reg"
[ "$(awk '$1 == "payments" {print $2, $3}' <<<"$out")" = "CLOSED 2" ] || fail "payments changed: $out"
expect_helper CLOSED state payments
expect_helper ENOENT state x
ok "the refused commands changed nothing"

# --help and --version succeed.
run_cbctl 0 --help
grep -q '^Exit status:' <<<"$out" || fail "--help does not list the exit statuses"
run_cbctl 0 trip --help
grep -q -- '--for' <<<"$out" || fail "trip --help lacks --for"
run_cbctl 0 --version
[[ $out == "cbctl "* ]] || fail "--version: $out"
ok "--help and --version exit 0"
stop_helper
echo passed
