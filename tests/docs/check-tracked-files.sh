#!/usr/bin/env bash
# Nothing built is committed: a binary in git is one nobody can review, that
# goes stale beside its sources, and that every clone downloads forever
# (bindings/go/go.test, 7 MB, was one). A file that git tracks fails here
# when it is
#   - an executable or object by its first bytes: ELF (\x7fELF) or PE ("MZ");
#   - a library or object by its name: .so (.so.N), .dll, .node, .dylib, .a,
#     .o, .class, .pyc;
#   - a tool's cache: .phpunit.result.cache, *.cache, or anything under
#     __pycache__, .pytest_cache or .mypy_cache;
#   - larger than 1 MiB and not in the allow-list below.
# .gitignore keeps such files out of `git add .`; this catches a `git add -f`
# and a pattern .gitignore lacks. The Go binding's SWIG output
# (bindings/go/internal/lbswig) is source and stays committed, checked
# current by go.swig_output_current.
#
#   check-tracked-files.sh SOURCE_DIR   the files git tracks there (skipped,
#                                       exit 77, outside a git checkout:
#                                       a release tarball)
#   check-tracked-files.sh --self-test  the checker on planted files
set -euo pipefail

max_bytes=$((1024 * 1024))
# Tracked files allowed above max_bytes, each with why it is data, not a
# build output.
large_allowed=(
  # the registry file fuzz_registry_file mutates (1.5 MB: a registry of
  # capacity 16 is mostly its event cells); regenerated on purpose by the
  # target in tests/fuzz/CMakeLists.txt when the file format changes
  tests/fuzz/template/registry.lbr
)

check() { # SOURCE_DIR: prints one line per offending file; fails if any
  local src=$1 f base size magic found=0
  local -a files=()
  local -A allowed=()
  for f in "${large_allowed[@]}"; do allowed[$f]=1; done
  while IFS= read -r -d '' f; do
    # A symlink or a submodule is no file's bytes; a file deleted but not
    # yet `git rm`ed is no longer there.
    [ -L "$src/$f" ] || [ ! -f "$src/$f" ] && continue
    files+=("$f")
    base=${f##*/}
    case /$f/ in
      */__pycache__/* | */.pytest_cache/* | */.mypy_cache/*)
        echo "$f: a tool's cache (under __pycache__, .pytest_cache or .mypy_cache)"; found=1; continue ;;
    esac
    case $base in
      .phpunit.result.cache | *.cache)
        echo "$f: a tool's cache"; found=1; continue ;;
      *.so | *.so.[0-9]* | *.dll | *.node | *.dylib | *.a | *.o | *.class | *.pyc)
        echo "$f: a built library or object (.${base##*.})"; found=1; continue ;;
    esac
    # The first bytes, read by bash itself (no process per file); LC_ALL=C
    # makes each byte one character.
    magic=
    LC_ALL=C IFS= read -r -d '' -N 4 magic <"$src/$f" || true
    case $magic in
      $'\x7f'ELF) echo "$f: an ELF executable or object"; found=1; continue ;;
      MZ*) echo "$f: a Windows (PE) executable or DLL"; found=1; continue ;;
    esac
  done < <(git -C "$src" ls-files -z)
  # Sizes in one stat for every file.
  if [ ${#files[@]} -gt 0 ]; then
    while IFS=$'\t' read -r -d '' size f; do
      if [ "$size" -gt "$max_bytes" ] && [ -z "${allowed[$f]+set}" ]; then
        echo "$f: $size bytes, over 1 MiB: build output or data? (data: add it to large_allowed in tests/docs/check-tracked-files.sh, saying why)"
        found=1
      fi
    done < <(cd "$src" && stat --printf '%s\t%n\0' -- "${files[@]}")
  fi
  return $found
}

self_test() {
  local t out status=0 f
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  git -C "$t" init -q
  echo 'int main(void) { return 0; }' >"$t/main.c"
  git -C "$t" add main.c
  if out=$(check "$t"); then say "ok   a tree of sources only passes"; else
    echo "self-test: FAIL: findings in a tree of sources only: $out" >&2; status=1
  fi
  # The planted files: each must be reported, by name, and nothing else.
  mkdir -p "$t/data" "$t/pkg/__pycache__"
  head -c $((max_bytes + 1)) /dev/zero >"$t/data/big.bin"
  cp "$(type -P true)" "$t/true-copy"            # ELF, by its bytes
  printf 'MZ\x90\x00' >"$t/setup-copy"         # PE, by its bytes
  echo x >"$t/libx.so.1"
  echo x >"$t/addon.node"
  echo x >"$t/pkg/__pycache__/m.cpython-311.pyc"
  echo '{}' >"$t/.phpunit.result.cache"
  git -C "$t" add -f data true-copy setup-copy libx.so.1 addon.node pkg .phpunit.result.cache
  out=$(check "$t" || true)
  for f in true-copy setup-copy libx.so.1 addon.node pkg/__pycache__/m.cpython-311.pyc \
           .phpunit.result.cache data/big.bin; do
    grep -q "^$f: " <<<"$out" && say "ok   $f is reported" ||
      { echo "self-test: FAIL: $f is not reported: $out" >&2; status=1; }
  done
  grep -q "^main.c: " <<<"$out" && { echo "self-test: FAIL: main.c is reported: $out" >&2; status=1; }
  return $status
}

say() { echo "check-tracked-files: $*"; }
case ${1:?usage: check-tracked-files.sh SOURCE_DIR | --self-test} in
  --self-test) self_test ;;
  *)
    top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null || true)
    if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$1" && pwd -P)" ]; then
      say "SKIPPED: $1 is not a git checkout (a release tarball?): no tracked files to check"
      exit 77
    fi
    if out=$(check "$1"); then
      say "no tracked file is a binary, a library, a cache or over 1 MiB (but the allowed data)"
    else
      echo "$out" >&2
      echo "check-tracked-files: built files are tracked: git rm --cached them (and cover them in .gitignore)" >&2
      exit 1
    fi
    ;;
esac
