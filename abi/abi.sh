#!/usr/bin/env bash
# ABI tooling for liblazybreaker.so.1. The 'abi' CTest label and
# `make abi-update` call it; it can be run by hand as well.
#
#   abi/abi.sh symbols LIB           the exported symbols, as in symbols.txt
#   abi/abi.sh check-symbols LIB     exported symbols == abi/symbols.txt, and
#                                    every function the header declares is in it
#   abi/abi.sh diff LIB              abidiff against every release's baseline,
#                                    abi/lazybreaker-MAJOR.MINOR.abi, with
#                                    abi/suppressions.txt: fails on any change
#                                    but added functions and suppressed ones
#   abi/abi.sh dump LIB OUT          the libabigail representation of LIB
#   abi/abi.sh update LIB            writes LIB's release baseline
#                                    abi/lazybreaker-MAJOR.MINOR.abi and rewrites
#                                    abi/symbols.txt from LIB (on purpose only)
#
# LIB must carry debug info (RelWithDebInfo or Debug) for dump/diff/update.
set -euo pipefail

abi_dir=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$abi_dir")
headers=$src/include/lazybreaker
# One baseline per release: a library must stay compatible with all of them.
release_of() { readlink -f "$1" | sed -nE 's/.*\.so\.([0-9]+)\.([0-9]+)\.[0-9]+$/\1.\2/p'; }
symbols_file=$abi_dir/symbols.txt
suppressions=$abi_dir/suppressions.txt

die() { echo "abi: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || die "$1 is missing (Debian: apt-get install $2; or make deps)"; }
has_debug_info() { readelf -S "$1" | grep '\.debug_info' >/dev/null; } # no -q: SIGPIPE under pipefail

exported() { # name@@NODE per exported symbol, sorted; the node symbols themselves left out
  nm -D --defined-only "$1" | awk '$2 != "A" {print $3}' | LC_ALL=C sort
}

listed() { grep -v '^#' "$symbols_file" | grep -v '^[[:space:]]*$' | LC_ALL=C sort; }

declared() { # functions the public C header declares with CB_API
  grep -ho 'CB_API[^(]*[ *]cb_[a-z0-9_]*(' "$headers"/lazybreaker.h | sed -E 's/.*(cb_[a-z0-9_]+)\($/\1/' | LC_ALL=C sort -u
}

dump() { # LIB OUT
  need abidw abigail-tools
  has_debug_info "$1" || die "$1 has no debug info: build with -DCMAKE_BUILD_TYPE=RelWithDebInfo"
  # Only what the public header declares and the library exports; no
  # source locations or build paths, so the file changes only when the ABI does.
  abidw --no-show-locs --no-comp-dir-path --no-corpus-path --type-id-style hash \
    --headers-dir "$headers" --exported-interfaces-only "$1" --out-file "$2.tmp"
  sed -e "s#path='$src/#path='#g" "$2.tmp" >"$2"
  rm -f "$2.tmp"
}

cmd=${1:-}
lib=${2:-}
[ -n "$cmd" ] && [ -n "$lib" ] || { sed -n '2,16p' "$0" >&2; exit 2; }
[ -f "$lib" ] || die "no such library: $lib"

case $cmd in
  symbols)
    exported "$lib"
    ;;

  check-symbols)
    status=0
    leaks=$(exported "$lib" | grep -v '^cb_' || true)
    if [ -n "$leaks" ]; then
      echo "abi: $lib exports symbols outside cb_* (the version script must hide them):" >&2
      echo "$leaks" | sed 's/^/  /' >&2
      status=1
    fi
    if ! diff_out=$(diff -u <(listed) <(exported "$lib")); then
      echo "abi: exported symbols differ from abi/symbols.txt (- listed, + exported)." >&2
      echo "     If the change is intended, run 'make abi-update' and review the diff." >&2
      echo "$diff_out" | tail -n +3 | grep '^[-+]' | sed 's/^/  /' >&2
      status=1
    fi
    n_api=$(grep -c '^CB_API' "$headers"/lazybreaker.h)
    if [ "$(declared | wc -l)" -ne "$n_api" ]; then
      echo "abi: read $(declared | wc -l) function names from $n_api CB_API declarations in lazybreaker.h;" >&2
      echo "     keep each declaration's name on its CB_API line" >&2
      status=1
    fi
    missing=$(LC_ALL=C comm -23 <(declared) <(listed | sed 's/@.*//' | LC_ALL=C sort -u))
    if [ -n "$missing" ]; then
      echo "abi: functions declared in lazybreaker.h but not in abi/symbols.txt:" >&2
      echo "$missing" | sed 's/^/  /' >&2
      status=1
    fi
    [ $status -eq 0 ] && echo "abi: $(listed | wc -l) exported symbols match abi/symbols.txt and lazybreaker.h"
    exit $status
    ;;

  diff)
    need abidiff abigail-tools
    if ! has_debug_info "$lib"; then
      echo "abi: $lib has no debug info (a Release build?): abidiff skipped." >&2
      exit 77
    fi
    # Added functions are compatible and not reported here (abi/symbols.txt
    # pins them); every other change abidiff reports, after the justified
    # suppressions, fails. abidiff's status is a bit field: 1 error,
    # 2 usage, 4 ABI change, 8 incompatible change (a removed symbol) --
    # it calls a moved struct member or a changed parameter list merely
    # "a change", so any change at all is a failure here.
    shopt -s nullglob
    baselines=("$abi_dir"/lazybreaker-*.abi)
    [ ${#baselines[@]} -gt 0 ] || die "no baseline abi/lazybreaker-*.abi: run 'make abi-update'"
    for baseline in "${baselines[@]}"; do
      set +e
      report=$(abidiff --no-show-locs --no-added-syms --suppressions "$suppressions" "$baseline" "$lib" 2>&1)
      rc=$?
      set -e
      if (( rc & 3 )); then
        echo "$report" >&2; die "abidiff failed to run (status $rc)"
      elif (( rc & 12 )); then
        echo "$report" >&2
        echo "abi: liblazybreaker.so.1 changed its ABI against abi/$(basename "$baseline") (above)." >&2
        echo "     Programs built against that release would break. See docs/api-stability.md." >&2
        exit 1
      fi
      echo "abi: no incompatible change against abi/$(basename "$baseline")"
    done
    ;;

  dump)
    [ -n "${3:-}" ] || die "usage: $0 dump LIB OUT"
    dump "$lib" "$3"
    ;;

  update)
    release=$(release_of "$lib")
    [ -n "$release" ] || die "cannot tell the release of $lib (want liblazybreaker.so.X.Y.Z)"
    baseline=$abi_dir/lazybreaker-$release.abi
    dump "$lib" "$baseline"
    {
      echo "# The symbols liblazybreaker.so.1 exports: name@@version-node, sorted."
      echo "# Checked by the 'abi' tests; regenerated on purpose by 'make abi-update'."
      exported "$lib"
    } >"$symbols_file"
    echo "abi: wrote abi/$(basename "$baseline") and abi/symbols.txt from $lib; review with:"
    echo "     git diff -- abi/"
    ;;

  *)
    die "unknown command '$cmd'"
    ;;
esac
