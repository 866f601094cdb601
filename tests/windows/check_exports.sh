#!/bin/sh
# lazybreaker.dll exports exactly the functions the public headers declare
# (CB_API ... cb_name(...)): none missing, and nothing else (no C++
# internals, nothing of libstdc++ or winpthread linked into it).
set -eu
objdump=$1 dll=$2 include=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$(dirname "$0")/declared_functions.sh" "$include" >"$tmp/declared"
"$objdump" -p "$dll" | sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/p' |
  sed -n 's/^[[:space:]]*\[ *[0-9]*\] //p' | sort -u >"$tmp/exported"
declared=$(wc -l <"$tmp/declared") exported=$(wc -l <"$tmp/exported")
echo "declared in the headers: $declared functions; exported by $(basename "$dll"): $exported"
[ "$declared" -ge 40 ] || { echo "FAIL: found only $declared declarations (the header parse is broken)" >&2; exit 1; }
status=0
if ! cmp -s "$tmp/declared" "$tmp/exported"; then
  echo "FAIL: declared but not exported:" >&2
  comm -23 "$tmp/declared" "$tmp/exported" | sed 's/^/  /' >&2
  echo "FAIL: exported but not declared:" >&2
  comm -13 "$tmp/declared" "$tmp/exported" | sed 's/^/  /' >&2
  status=1
fi
exit $status
