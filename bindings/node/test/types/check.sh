#!/bin/sh
# index.d.ts under tsc --strict (label node, test node.types):
#   check.sh PACKAGE_DIR WORK_DIR
# TypeScript and @types/node are installed from npm into WORK_DIR, at the
# exact versions of package.json beside this script, never into the source
# tree. WORK_DIR gets a copy of the package's entry points and declarations
# under node_modules/lazybreaker, so usage.ts imports it as a user would.
# Without npm's registry: exit 77 (CTest: skipped, saying why), or fail
# under CI=true.
set -eu
package=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cp "$here/package.json" "$here/tsconfig.json" "$here/usage.ts" "$work/"
if [ ! -x "$work/node_modules/.bin/tsc" ] || ! cmp -s "$here/package.json" "$work/installed-package.json"; then
  if ! (cd "$work" && npm install --no-audit --no-fund --no-package-lock --ignore-scripts >npm.log 2>&1); then
    cat "$work/npm.log" >&2
    if [ "${CI:-}" = true ]; then
      echo "node.types: npm could not install TypeScript (CI=true: a failure)" >&2
      exit 1
    fi
    echo "node.types: SKIPPED: npm could not install TypeScript (see above); the declarations were not checked" >&2
    exit 77
  fi
  cp "$here/package.json" "$work/installed-package.json"
fi
rm -rf "$work/node_modules/lazybreaker"
mkdir -p "$work/node_modules/lazybreaker"
cp "$package/package.json" "$package/index.d.ts" "$package/index.cjs" "$package/index.mjs" "$work/node_modules/lazybreaker/"
cd "$work"
./node_modules/.bin/tsc --version
./node_modules/.bin/tsc -p tsconfig.json
echo "node.types: index.d.ts passes tsc --strict"
