#!/usr/bin/env bash
# cbctl's errors: the message's shape ("cbctl: FILE: ..."), the documented
# exit status of each kind, and that a refused command changes nothing.
source "$(dirname "$0")/lib.sh"
start_helper

# The C API's words, which cbctl's messages never use: a flag or status
# (CB_...), a cb_ function, a cb_config field (from the header's list of
# them; the one-word ones, like policy, are also cbctl's option names), or
# a parameter in nanoseconds.
c_fields=$(sed -n '/^#define CB_CONFIG_FIELDS(X)/,/[^\]$/ s/^ *X(\([a-z]*_[a-z_]*\), .*/\1/p' "$(dirname "$0")/../../include/lazybreaker/lists.h" | paste -sd'|')
[ -n "$c_fields" ] || fail "no config fields found in lists.h"
c_words="CB_[A-Z_]+|cb_[a-z_]+|[a-z]+_ns|$c_fields"

# expect_error STATUS PATTERN ARGS...: cbctl ARGS exits STATUS, prints
# nothing on stdout and one stderr line matching the glob PATTERN, in no
# C words.
expect_error() {
  local status=$1 pattern=$2
  shift 2
  run_cbctl "$status" "$@"
  [ -z "$out" ] || fail "cbctl $* printed on stdout: $out"
  [[ $(head -n1 <<<"$err") == $pattern ]] || fail "cbctl $*: stderr '$err' does not match '$pattern'"
  ! grep -Eqw -- "$c_words" <<<"$err" || fail "cbctl $*: stderr '$err' speaks C: $(grep -Eow -- "$c_words" <<<"$err" | head -n1)"
  ok "cbctl $* exits $status: $(head -n1 <<<"$err")"
}

missing=$work/no-such-file.lbr
for cmd in list metrics watch serve; do
  expect_error 4 "cbctl: $missing: no such file" $cmd "$missing"
done
for cmd in show trip force-open disable reset destroy; do
  expect_error 4 "cbctl: $missing: no such file" $cmd "$missing" payments
done
expect_error 4 "cbctl: $missing: no such file (--create-file creates it)" create "$missing" payments
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
# In range for cbctl, out of range for the library (CB_EINVAL and the
# field at fault): the option as given and the range, in cbctl's units.
expect_error 2 "cbctl: --for 1ns must be at least 1us" trip "$reg" payments --for 1ns
expect_error 2 "cbctl: --for 400d must be at most 366d" trip "$reg" payments --for 400d
expect_error 2 "cbctl: --failure-threshold 0 must be at least 1" create "$reg" x --failure-threshold 0
expect_error 2 "cbctl: --half-open-calls 33 must be at most 32" create "$reg" x --half-open-calls 33
expect_error 2 "cbctl: --failure-rate 1.5 must be in (0, 1]" create "$reg" x --policy count --failure-rate 1.5
expect_error 2 "cbctl: --jitter 1 must be in \[0, 1)" create "$reg" x --jitter 1
expect_error 2 "cbctl: --window-duration 500us must be at least 1ms" create "$reg" x --policy time --window-duration 500us
expect_error 2 "cbctl: --open-for-max 1m must be 0 (no cap) or at least --open-for (2m)" \
  create "$reg" x --open-for 2m --open-for-max 1m
expect_error 2 "cbctl: $reg: --capacity 32 is not the file's capacity*" create "$reg" x --capacity 32
expect_error 2 "cbctl: $reg: --capacity 9999999 must be at most 4194304" create "$reg" x --capacity 9999999
# the first field that differs from the breaker's own, with both values
expect_error 6 "cbctl: $reg: breaker 'payments' exists with another configuration: its --failure-threshold is 3, not 4" \
  create "$reg" payments --exist-ok --failure-threshold 4
expect_error 6 "cbctl: $reg: breaker 'search' exists with another configuration: its --window-size is 10, not 20" \
  create "$reg" search --exist-ok --policy count --window-size 20 --minimum-calls 4
# ... and a refused configuration or name creates no file
expect_error 2 "cbctl: --failure-threshold 0 must be at least 1" create "$work/never.lbr" x --create-file --failure-threshold 0
expect_error 2 "cbctl: --open-for 0s must be at least 1us" create "$work/never.lbr" x --create-file --open-for 0s
expect_error 2 "cbctl: $work/never.lbr: the name '*' is not valid UTF-8" create "$work/never.lbr" "$(printf 'bad\xffname')" --create-file
expect_error 2 "cbctl: $work/never.lbr: a breaker's name must not be empty" create "$work/never.lbr" "" --create-file
expect_error 2 "cbctl: $work/never.lbr: --mode 01777 must be permission bits, at most 0777" create "$work/never.lbr" x --create-file --mode 1777
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
  expect_error 4 "cbctl: $planted: an existing file owned by uid $(id -u nobody) (nobody) with mode 0666: neither this user nor root owns it; *--any-owner uses it anyway*" \
    create "$planted" second --create-file --mode 0666
fi
expect_error 4 "cbctl: $planted: an existing file owned by uid * with mode 0666: *; *--any-owner uses it anyway*" create "$planted" second --create-file
expect_error 2 "cbctl: *--create-file*" create "$planted" second --any-owner
run_cbctl 0 create "$planted" second --create-file --any-owner
run_cbctl 0 list "$planted"
[ "$(awk 'NR > 1 {print $1}' <<<"$out" | paste -sd' ')" = "first second" ] || fail "list of the planted file: $out"
ok "create --create-file --any-owner uses the planted file; list opens it"
ln -s "$planted" "$work/link.lbr"
expect_error 4 "cbctl: $work/link.lbr: a symbolic link to $planted; --create-file *never through a symlink*" create "$work/link.lbr" third --create-file --any-owner
ln -s "$work/gone.lbr" "$work/dangling.lbr"
expect_error 4 "cbctl: $work/dangling.lbr: a symbolic link to $work/gone.lbr, which does not exist; *" \
  create "$work/dangling.lbr" third --create-file
[ ! -e "$work/gone.lbr" ] || fail "a create through a dangling symlink made its target"
expect_error 4 "cbctl: $work/dangling.lbr: a symbolic link to $work/gone.lbr, which does not exist" list "$work/dangling.lbr"

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
