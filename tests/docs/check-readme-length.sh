#!/usr/bin/env bash
# README.md is the front page: what lazybreaker is, the two commands, one
# short example per language and where the documents are. Everything longer
# belongs in docs/*.md, where it is kept up to date beside the code it
# describes; a front page that grows back into a manual goes stale first.
# So README.md has at most 200 lines:
#
#   check-readme-length.sh SOURCE_DIR   its README.md
#   check-readme-length.sh --self-test  the checker on planted READMEs of
#                                       200 and 201 lines
set -euo pipefail

max_lines=200

check() { # README: prints why and fails when it is over max_lines
  local n
  [ -f "$1" ] || { echo "$1: no such file"; return 1; }
  # awk counts a last line without a newline too (wc -l does not).
  n=$(awk 'END { print NR }' "$1")
  if [ "$n" -gt "$max_lines" ]; then
    echo "$1: $n lines, over $max_lines: move the detail to a page under docs/ and link it"
    return 1
  fi
  echo "$1: $n lines (at most $max_lines)"
}

# A planted README of 200 lines passes and one of 201 fails, whatever
# max_lines says: the self-test pins the limit too.
self_test() {
  local t out status=0
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  seq 200 >"$t/README.md"
  if out=$(check "$t/README.md"); then say "ok   a README of 200 lines passes"; else
    echo "self-test: FAIL: a README of 200 lines is reported: $out" >&2; status=1
  fi
  # 201 lines, the last without its newline.
  printf 'one more line' >>"$t/README.md"
  if out=$(check "$t/README.md"); then
    echo "self-test: FAIL: a README of 201 lines passes: $out" >&2; status=1
  elif grep -q ": 201 lines, over 200" <<<"$out"; then
    say "ok   a README of 201 lines is reported"
  else
    echo "self-test: FAIL: a README of 201 lines is reported wrongly: $out" >&2; status=1
  fi
  return $status
}

say() { echo "check-readme-length: $*"; }
case ${1:?usage: check-readme-length.sh SOURCE_DIR | --self-test} in
  --self-test) self_test ;;
  *)
    if out=$(check "$1/README.md"); then say "$out"; else echo "check-readme-length: $out" >&2; exit 1; fi
    ;;
esac
