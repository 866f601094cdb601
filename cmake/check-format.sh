#!/usr/bin/env bash
# check-format.sh CLANG_FORMAT SOURCE_DIR: every hand-written C and C++
# file of src/, include/, tools/, tests/, bench/ and bindings/ is as
# clang-format (SOURCE_DIR/.clang-format) writes it; fails naming each file
# that is not, with the command that fixes it (`make format`).
#   check-format.sh CLANG_FORMAT SOURCE_DIR --fix   formats them (make format)
#   check-format.sh CLANG_FORMAT --self-test   the check finds a planted
#                                              misformatted file
# Generated files are not ours to format: SWIG's Go output
# (bindings/go/internal/lbswig) and the fuzzers' corpora.
set -euo pipefail
format=$1
here=$(cd "$(dirname "$0")" && pwd)

sources() { # SOURCE_DIR: the files, relative to it
  (cd "$1" && find src include tools tests bench bindings \
    -path bindings/go/internal -prune -o -path tests/fuzz/corpus -prune -o \
    -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cc' \) \
    -print 2>/dev/null | LC_ALL=C sort)
}

check() { # SOURCE_DIR
  local src=$1 bad=() n=0 f
  while IFS= read -r f; do
    n=$((n + 1))
    "$format" --style=file:"$src/.clang-format" --dry-run -Werror "$src/$f" >/dev/null 2>&1 || bad+=("$f")
  done < <(sources "$src")
  [ "$n" -gt 0 ] || { echo "format: FAIL: no C or C++ file found under $src" >&2; return 1; }
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: FAIL: ${#bad[@]} of $n files are not as clang-format writes them (make format):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    return 1
  fi
  echo "format: $n files as clang-format writes them"
}

if [ "${2:-}" = --self-test ]; then
  src=$(cd "$here/.." && pwd)
  t=$(mktemp -d "${TMPDIR:-/tmp}/check-format.XXXXXX")
  trap 'rm -rf "$t"' EXIT
  cp "$src/.clang-format" "$t/"
  mkdir -p "$t/src" "$t/bindings/go/internal"
  printf 'int ok(int a) { return a + 1; }\n' >"$t/src/ok.c"
  printf 'int  generated( int a ){return a;}\n' >"$t/bindings/go/internal/skipped.c"
  check "$t" >/dev/null || { echo "format: self-test: FAIL: a formatted tree was refused" >&2; exit 1; }
  printf 'int  planted( int a ){return a;}\n' >"$t/src/planted.c"
  if out=$(check "$t" 2>&1); then
    echo "format: self-test: FAIL: a misformatted file passed" >&2
    exit 1
  fi
  grep -q 'src/planted.c' <<<"$out" || { echo "format: self-test: FAIL: not named: $out" >&2; exit 1; }
  echo "format: self-test: the planted misformatted file is found"
  exit 0
fi
if [ "${3:-}" = --fix ]; then
  sources "$2" | (cd "$2" && xargs "$format" --style=file:"$2/.clang-format" -i)
  exit 0
fi
check "$2"
