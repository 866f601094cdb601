#!/bin/sh
# lazybreaker_csharp.dll (the mingw-built SWIG glue) exports exactly the
# entry points the generated C# P/Invokes (EntryPoint="..." in the SWIG
# output folder given) and imports only lazybreaker.dll and DLLs Windows
# ships (libgcc and winpthread linked in).
set -eu
objdump=$1 dll=$2 generated=$3
dump=$("$objdump" -p "$dll")
status=0

imports=$(printf '%s\n' "$dump" | sed -n 's/^[[:space:]]*DLL Name: //p')
echo "imports of $(basename "$dll"):" $imports
for n in $imports; do
  case $(printf '%s' "$n" | tr 'A-Z' 'a-z') in
    lazybreaker.dll | kernel32.dll | msvcrt.dll | ucrtbase.dll | api-ms-win-*.dll) ;;
    *) echo "FAIL: imports $n, which Windows does not ship" >&2; status=1 ;;
  esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$dump" | sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] //p' |
  sort -u >"$tmp/exported"
cat "$generated"/*.cs | grep -o 'EntryPoint="[^"]*"' | sed 's/EntryPoint="//; s/"$//' | sort -u >"$tmp/invoked"
[ -s "$tmp/invoked" ] || { echo "FAIL: no EntryPoint in $generated/*.cs" >&2; exit 1; }
echo "$(wc -l <"$tmp/invoked") entry points P/Invoked, $(wc -l <"$tmp/exported") exported"
missing=$(comm -23 "$tmp/invoked" "$tmp/exported")
extra=$(comm -13 "$tmp/invoked" "$tmp/exported")
[ -z "$missing" ] || { echo "FAIL: P/Invoked but not exported:" $missing >&2; status=1; }
[ -z "$extra" ] || { echo "FAIL: exported but not P/Invoked:" $extra >&2; status=1; }
exit $status
