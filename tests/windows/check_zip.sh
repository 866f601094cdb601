#!/bin/sh
# `make windows`'s lazybreaker-<version>-win-x64.zip holds, under a folder of
# its own name, what a Windows consumer needs: the DLL, its import library,
# the static library, every public header, lazybreaker.pc and the CMake
# package config.
set -eu
zip=$1 include=$2
[ -f "$zip" ] || { echo "FAIL: no $zip" >&2; exit 1; }
top=$(basename "$zip" .zip)
listing=$(unzip -Z1 "$zip")
status=0
need() {
  printf '%s\n' "$listing" | grep -qx "$top/$1" || { echo "FAIL: $zip lacks $top/$1" >&2; status=1; }
}
need bin/lazybreaker.dll
need lib/liblazybreaker.dll.a
need lib/liblazybreaker.a
need lib/pkgconfig/lazybreaker.pc
need lib/cmake/lazybreaker/lazybreaker-config.cmake
need lib/cmake/lazybreaker/lazybreaker-config-version.cmake
need lib/cmake/lazybreaker/lazybreaker-targets.cmake
for h in "$include"/lazybreaker/*.h "$include"/lazybreaker/*.hpp; do
  need "include/lazybreaker/$(basename "$h")"
done
[ $status -eq 0 ] && echo "$(basename "$zip"): $(printf '%s\n' "$listing" | grep -vc '/$') files, all expected ones there"
exit $status
