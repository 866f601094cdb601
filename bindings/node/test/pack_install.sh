#!/bin/sh
# pack_install.sh TARBALL [NODE NPM]: installs the packed tarball with npm, offline,
# into an empty folder and there requires and imports `lazybreaker` with no
# LAZYBREAKER_ADDON or LD_LIBRARY_PATH, so the addon and the library must
# come from the tarball's prebuilds/ folder. Trips a breaker through each
# entry point.
set -eu
tarball=${1:?usage: pack_install.sh TARBALL [NODE NPM]}
node=${2:-node}
npm=${3:-npm}
[ -f "$tarball" ] || { echo "pack_install.sh: no tarball $tarball (build target lazybreaker_node_pack)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/app"
cd "$work/app"
npm_config_cache="$work/npm-cache" npm_config_update_notifier=false \
  "$npm" install --offline --no-audit --no-fund --silent "$tarball"

cat > trip.cjs <<'JS'
const assert = require('node:assert');
const path = require('node:path');
const { CircuitBreaker, CircuitOpenError } = require('lazybreaker');
const prebuilt = path.join(__dirname, 'node_modules', 'lazybreaker', 'prebuilds',
  `${process.platform}-${process.arch}`, 'lazybreaker.node');
assert.ok(prebuilt in require.cache, `the addon was not loaded from ${prebuilt}`);
const breaker = new CircuitBreaker(async () => 'called', { failureThreshold: 2, resetTimeout: 600000 });
breaker.tryAcquire().failure();
breaker.tryAcquire().failure();
assert.strictEqual(breaker.state, 'open');
assert.strictEqual(breaker.tryAcquire(), null);
breaker.fire().then(() => assert.fail('an open breaker admitted a call'),
  (error) => { assert.ok(error instanceof CircuitOpenError); console.log('require: open'); });
JS
cat > trip.mjs <<'JS'
import assert from 'node:assert';
import { CircuitBreaker, Registry } from 'lazybreaker';
const breaker = Registry.default.getOrCreate('packed', { failureThreshold: 1, resetTimeout: 600000 });
breaker.tryAcquire().failure();
assert.strictEqual(breaker.state, 'open');
assert.ok(breaker instanceof CircuitBreaker);
console.log('import: open');
JS
for script in trip.cjs trip.mjs; do
  env -u LAZYBREAKER_ADDON -u LD_LIBRARY_PATH "$node" "$script"
done
