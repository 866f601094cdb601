#!/bin/sh
# index.d.ts under tsc --strict (label node, test node.types):
#   check.sh PACKAGE_DIR DEV_DIR
# TypeScript and @types/node come from DEV_DIR/node_modules, where the test
# fixture node.dev_dependencies installed them (exit 77, skipped, when it
# could not: it said why). DEV_DIR/types gets this folder's usage.ts and a
# copy of the package's entry points and declarations under
# node_modules/lazybreaker, so usage.ts imports it as a user would.
set -eu
package=$1
dev=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$dev/node_modules/.bin/tsc" ]; then
  [ "${CI:-}" != true ] || { echo "node.types: no TypeScript in $dev (CI=true: a failure)" >&2; exit 1; }
  echo "node.types: SKIPPED: no TypeScript in $dev (see node.dev_dependencies)" >&2
  exit 77
fi
work=$dev/types
rm -rf "$work"
mkdir -p "$work/node_modules/lazybreaker"
cp "$here/tsconfig.json" "$here/usage.ts" "$work/"
cp "$package/package.json" "$package/index.d.ts" "$package/index.cjs" "$package/index.mjs" "$work/node_modules/lazybreaker/"
cd "$work"
"$dev/node_modules/.bin/tsc" --version
"$dev/node_modules/.bin/tsc" -p tsconfig.json
echo "node.types: index.d.ts passes tsc --strict"
