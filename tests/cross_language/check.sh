#!/usr/bin/env bash
# One language's half of the cross-language test:
#
#   check.sh C-PROGRAM FILE LANGUAGE [--expect REGEX] -- CHECKER...
#
# runs CHECKER, a program of LANGUAGE that finds FILE and LANGUAGE in the
# environment (LB_CROSS_LANGUAGE_FILE, LB_CROSS_LANGUAGE). It must see the
# breaker "payments" that C-PROGRAM tripped in FILE OPEN and rejecting, and
# trip "tripped-by-LANGUAGE" itself; then C-PROGRAM, another process,
# checks that that breaker is OPEN. With --expect, the checker's output must
# also match REGEX (grep -E): a test runner that found no test exits 0 too.
set -euo pipefail
c_program=${1:?usage: check.sh C-PROGRAM FILE LANGUAGE [--expect REGEX] -- CHECKER...}
file=${2:?}
language=${3:?}
shift 3
expect=
if [ "${1:-}" = "--expect" ]; then
  expect=${2:?}
  shift 2
fi
[ "${1:-}" = "--" ] || { echo "check.sh: expected -- before the checker" >&2; exit 2; }
shift
out=$(LB_CROSS_LANGUAGE_FILE=$file LB_CROSS_LANGUAGE=$language "$@" 2>&1) || {
  printf '%s\n' "$out"
  echo "check.sh: the $language checker failed" >&2
  exit 1
}
printf '%s\n' "$out"
if [ -n "$expect" ] && ! grep -Eq -- "$expect" <<<"$out"; then
  echo "check.sh: the $language checker's output does not match: $expect" >&2
  exit 1
fi
"$c_program" expect-open "$file" "tripped-by-$language"
