#!/bin/sh
# readme_example.sh README PACKAGE_DIR WORK_DIR: runs the README's Node.js
# example as written. The first ```js block after the "**Node.js" line is
# saved as WORK_DIR/example.mjs beside node_modules/lazybreaker, a link to
# PACKAGE_DIR, the package as npm packs it (build/node/package, with its
# prebuilt addon: no LAZYBREAKER_ADDON), run with node, and its output
# compared with the lines the example's comment promises ("// prints: a | b").
set -eu
readme=$1
package=$2
work=$3
rm -rf "$work"
mkdir -p "$work/node_modules"
ln -s "$package" "$work/node_modules/lazybreaker"
awk '/^\*\*Node\.js/ { found = 1; next }
     found && /^```js$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' "$readme" >"$work/example.mjs"
[ -s "$work/example.mjs" ] || { echo "readme_example.sh: no \`\`\`js block after **Node.js in $readme" >&2; exit 1; }
sed -n 's#.*// prints: ##p' "$work/example.mjs" | tr '|' '\n' | sed 's/^ *//; s/ *$//' >"$work/expected.txt"
[ -s "$work/expected.txt" ] || { echo "readme_example.sh: the example promises no output (// prints: ...)" >&2; exit 1; }
cd "$work"
env -u LAZYBREAKER_ADDON node example.mjs >actual.txt
if ! diff -u expected.txt actual.txt; then
  echo "readme_example.sh: the README's Node.js example does not print what it says" >&2
  exit 1
fi
echo "readme_example.sh: the README's Node.js example runs as written"
cat actual.txt
