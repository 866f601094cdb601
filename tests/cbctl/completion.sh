#!/usr/bin/env bash
# The bash completion (tools/cbctl/cbctl.bash-completion): commands,
# options, the file, and breaker names read from the file by cbctl itself.
source "$(dirname "$0")/lib.sh"
start_helper
PATH=$(dirname "$CBCTL"):$PATH
source "$(dirname "$0")/../../tools/cbctl/cbctl.bash-completion"
compopt() { :; } # only meaningful inside a real completion

# complete WORDS...: what completing the last word offers, sorted, on one line
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _cbctl
  printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd' '
}
expect_completion() {
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || fail "completing '$*': '$got', want '$want'"
  ok "completing '$*' offers: $want"
}
expect_completion "trip" cbctl tr
expect_completion "destroy disable" cbctl d
expect_completion "--for --help" cbctl trip "$reg" payments --
expect_completion "consecutive count time" cbctl create "$reg" x --policy ''
expect_completion "--any-owner" cbctl create "$reg" x --create-file --an
expect_completion "payments" cbctl show "$reg" pa
expect_completion "inventory ledger payments search" cbctl reset "$reg" ''
expect_completion "$reg" cbctl list "$work/reg"
expect_completion "" cbctl list "$reg" ''
expect_completion "fleet" cbctl fl
expect_completion "force-open" cbctl fleet fo
expect_completion "--fleet --for --help --password-file --redis --sentinel --sentinel-master --tls-ca-file --tls-cert-file --tls-key-file" cbctl fleet trip payments --
expect_completion "--fleet --help --json --password-file --redis --sentinel --sentinel-master --tls-ca-file --tls-cert-file --tls-key-file" cbctl fleet list --
expect_completion "redis://127.0.0.1:6379 rediss://127.0.0.1:6379" cbctl fleet reset payments --redis ''
stop_helper
echo passed
