#!/bin/sh
# Builds lazybreaker.dll from this source tree with the mingw-w64 toolchain
# file, as `make windows` does, into the folder given (the fixture of the
# tests of label windows); the arguments after the two folders are more
# cache settings (the Node.js addon's inputs, cmake/windows.cmake).
set -eu
src=$1 out=$2
shift 2
cmake -S "$src" -B "$out" --toolchain "$src/cmake/toolchain-mingw64.cmake" -DLB_WERROR=ON \
  --log-level=WARNING "$@"
cmake --build "$out" -j 2
test -f "$out/bin/lazybreaker.dll" || { echo "no $out/bin/lazybreaker.dll" >&2; exit 1; }
test -f "$out/src/liblazybreaker.dll.a" || { echo "no import library liblazybreaker.dll.a" >&2; exit 1; }
# The zip of everything installed (packaging/CPackSetup.cmake, generator ZIP).
(cd "$out" && cpack --log-level=WARNING >/dev/null)
