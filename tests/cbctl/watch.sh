#!/usr/bin/env bash
# cbctl watch, driven in a real terminal (tmux, on a server of the test's
# own): the table appears, a change the helper makes shows after the
# interval, q and Ctrl-C end it with status 0 and the terminal as it was;
# off a terminal, plain tables without an escape code. Every check of the
# screen waits for what it looks for (wait_until, up to $patience s): tmux
# draws what the pty carries when it gets to it, which on a loaded machine
# is long after the program wrote it or a file it wrote next appeared.
source "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || fail "tmux is missing (packaging/install-deps.sh installs it)"
start_helper

tmux_sock=$work/tmux.sock
t() { tmux -S "$tmux_sock" "$@"; }
cleanup_hooks+=("tmux -S '$tmux_sock' kill-server 2>/dev/null")

# watch_in_tmux SESSION: cbctl watch in a 120x30 pane; after it ends, the
# pane's shell writes the exit status and the terminal's settings.
watch_in_tmux() {
  local s=$1
  t new-session -d -s "$s" -x 120 -y 30 \
    "'$CBCTL' watch --interval 300ms '$reg'; echo \$? >'$work/$s.rc'; stty -a >'$work/$s.stty'; sleep 600"
  wait_until "$patience" pane_has "$s" 'payments' || fail "$s: no table: $(t capture-pane -p -t "$s")"
}
pane_has() { t capture-pane -p -t "$1" | grep -q -- "$2"; }
pane_row() { t capture-pane -p -t "$1" | awk -v n="$2" '$1 == n' | tr -s ' '; }
# pane_row_is SESSION NAME ROW: NAME's row reads ROW (spaces squeezed).
pane_row_is() { [ "$(pane_row "$1" "$2")" = "$3" ]; }
# pane_flags_are SESSION FLAGS VALUES: tmux's FLAGS of the pane (e.g.
# '#{alternate_on} #{cursor_flag}') read VALUES, looked at anew each call.
pane_flags_are() { [ "$(t display-message -p -t "$1" "$2")" = "$3" ]; }
# see SESSION PATTERN: waits until the pane shows a line matching PATTERN.
see() { wait_until "$patience" pane_has "$1" "$2"; }

watch_in_tmux q-session
screen=$(t capture-pane -p -t q-session)
grep -q "^cbctl watch $reg  every 300ms" <<<"$screen" || fail "no title line: $screen"
grep -q '^4 breakers, 4 closed$' <<<"$screen" || fail "no summary line: $screen"
grep -q '^NAME  *STATE  *CONSEC  *FAIL%  *RETRY-AFTER  *ADMITTED  *REJECTED  *SUCCESSES  *FAILURES$' <<<"$screen" ||
  fail "no header: $screen"
# The row may be drawn only in part when its name first shows.
wait_until "$patience" pane_row_is q-session payments "payments CLOSED 2 0.0% - 5 0 3 2" ||
  fail "payments row: $(pane_row q-session payments)"
ok "watch shows the table in a terminal"
wait_until "$patience" pane_flags_are q-session '#{alternate_on}' 1 || fail "watch is not on the alternate screen"
ok "watch draws on the alternate screen"
# colours: the state column of a closed breaker in green, the header in reverse video
coloured=$(t capture-pane -p -e -t q-session)
grep -q $'\e\\[32mCLOSED' <<<"$coloured" || fail "no green CLOSED: $(grep payments <<<"$coloured" | cat -v)"
grep -q $'\e\\[1m\e\\[7mNAME\|\e\\[1;7mNAME\|\e\\[7m\e\\[1mNAME' <<<"$coloured" ||
  grep -q $'\e\\[[0-9;]*7[0-9;]*mNAME' <<<"$coloured" || fail "no reverse-video header: $(grep NAME <<<"$coloured" | cat -v)"
ok "watch colours the states and the header"

# A change made by another process shows at the next refresh.
expect_helper "admitted=1 rejected=0" call payments failure 1
expect_helper OPEN state payments
see q-session '^payments  *OPEN ' || fail "the trip never showed: $(t capture-pane -p -t q-session)"
see q-session '^4 breakers, 3 closed, 1 open$' || fail "the summary did not follow"
ok "watch shows the helper's trip: $(pane_row q-session payments)"

# q ends it: status 0, main screen back, cursor shown, keyboard cooked again.
t send-keys -t q-session q
wait_until "$patience" test -s "$work/q-session.rc" || fail "q did not end watch: $(t capture-pane -p -t q-session)"
[ "$(cat "$work/q-session.rc")" = 0 ] || fail "watch exited $(cat "$work/q-session.rc") after q"
wait_until "$patience" test -s "$work/q-session.stty" || fail "no stty output"
grep -qw icanon "$work/q-session.stty" && grep -qw echo "$work/q-session.stty" ||
  fail "the terminal is left raw: $(cat "$work/q-session.stty")"
# The files are written once watch has ended; tmux may draw its last
# bytes later.
wait_until "$patience" pane_flags_are q-session '#{alternate_on} #{cursor_flag}' "0 1" ||
  fail "after q: alternate screen/cursor = $(t display-message -p -t q-session '#{alternate_on} #{cursor_flag}')"
! pane_has q-session 'RETRY-AFTER' || fail "the table is left on the main screen"
! pgrep -f "watch --interval 300ms $reg" >/dev/null || fail "a watch process is still running"
ok "q ends watch with status 0 and restores the terminal"

# Ctrl-C (SIGINT) ends it the same way.
watch_in_tmux c-session
t send-keys -t c-session C-c
wait_until "$patience" test -s "$work/c-session.rc" || fail "Ctrl-C did not end watch"
[ "$(cat "$work/c-session.rc")" = 0 ] || fail "watch exited $(cat "$work/c-session.rc") after Ctrl-C"
wait_until "$patience" test -s "$work/c-session.stty" || fail "no stty output"
grep -qw icanon "$work/c-session.stty" && grep -qw echo "$work/c-session.stty" ||
  fail "the terminal is left raw after Ctrl-C"
wait_until "$patience" pane_flags_are c-session '#{alternate_on} #{cursor_flag}' "0 1" ||
  fail "Ctrl-C left the alternate screen or hid the cursor"
ok "Ctrl-C ends watch with status 0 and restores the terminal"

# Ctrl-Z suspends it with the terminal put back, fg brings it back, q ends it.
t new-session -d -s z-session -x 120 -y 30 "env PS1='prompt\\$ ' bash --norc --noprofile -i"
see z-session 'prompt' || fail "no shell in z-session"
t send-keys -t z-session "'$CBCTL' watch --interval 300ms '$reg'" Enter
see z-session '^payments' || fail "z-session: no table"
t send-keys -t z-session C-z
see z-session 'Stopped' || fail "Ctrl-Z did not stop watch: $(t capture-pane -p -t z-session)"
wait_until "$patience" pane_flags_are z-session '#{alternate_on} #{cursor_flag}' "0 1" ||
  fail "Ctrl-Z left the alternate screen or hid the cursor"
t send-keys -t z-session "stty -a >'$work/z.stty'" Enter
wait_until "$patience" test -s "$work/z.stty" || fail "no stty output in z-session"
grep -qw icanon "$work/z.stty" && grep -qw echo "$work/z.stty" || fail "the terminal is left raw while suspended"
ok "Ctrl-Z suspends watch with the terminal restored"
t send-keys -t z-session fg Enter
wait_until "$patience" pane_flags_are z-session '#{alternate_on}' 1 ||
  fail "fg did not bring watch back: $(t capture-pane -p -t z-session)"
see z-session '^payments' || fail "fg: no table"
t send-keys -t z-session q
wait_until "$patience" pane_flags_are z-session '#{alternate_on}' 0 ||
  fail "q after fg did not end watch: $(t capture-pane -p -t z-session)"
t send-keys -t z-session "echo \$? >'$work/z.rc'" Enter
wait_until "$patience" test -s "$work/z.rc" || fail "no status in z-session"
[ "$(cat "$work/z.rc")" = 0 ] || fail "watch exited $(cat "$work/z.rc") after fg and q"
ok "fg resumes watch, and q then ends it with status 0"

# A narrow terminal: columns that do not fit are left out, no line wraps.
t new-session -d -s narrow -x 50 -y 12 "'$CBCTL' watch --interval 300ms '$reg'"
see narrow 'payments' || fail "narrow: no table"
wide=$(t capture-pane -p -t narrow | awk 'length > 50' | head -n1)
[ -z "$wide" ] || fail "a line wider than the terminal: $wide"
pane_has narrow '^NAME  *STATE ' || fail "narrow: no header"
! pane_has narrow 'FAILURES' || fail "narrow: the last column should be left out"
ok "a narrow terminal gets the columns that fit"
t send-keys -t narrow q

# Off a terminal: plain tables, one after another, no escape codes.
run_cbctl 0 watch --interval 100ms --count 3 "$reg"
[ "$(grep -c '^# ' <<<"$out")" = 3 ] || fail "--count 3 printed $(grep -c '^# ' <<<"$out") tables: $out"
[ "$(grep -c '^NAME ' <<<"$out")" = 3 ] || fail "three headers expected: $out"
! grep -q $'\e' "$work/out" || fail "plain output holds escape codes: $(cat -v "$work/out")"
grep -q "^# $reg at [0-9-]*T[0-9:]*Z: 4 breakers, 3 closed, 1 open$" <<<"$out" || fail "plain title: $(head -n1 <<<"$out")"
ok "watch off a terminal prints plain tables"
# A reader that goes away ends it quietly, with status 0.
"$CBCTL" watch --interval 10ms "$reg" | head -n 2 >/dev/null
[ "${PIPESTATUS[0]}" = 0 ] || fail "watch | head: watch exited ${PIPESTATUS[0]}"
ok "watch | head ends watch with status 0"
# ... until SIGINT, with status 0
"$CBCTL" watch --interval 100ms "$reg" >"$work/plain" 2>&1 &
plain_pid=$!
started_pids+=("$plain_pid")
wait_until "$patience" grep -q '^payments' "$work/plain" || fail "no plain output"
kill -INT "$plain_pid"
rc=0
wait "$plain_pid" || rc=$?
[ $rc -eq 0 ] || fail "plain watch exited $rc after SIGINT"
ok "SIGINT ends a plain watch with status 0"

stop_helper
echo passed
