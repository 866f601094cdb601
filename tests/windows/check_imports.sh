#!/bin/sh
# lazybreaker.dll imports only DLLs that every Windows (8 and later) ships:
# libgcc, libstdc++ and winpthread are linked in, not needed beside it. And
# no function Wine 8 lacks (QueryUnbiasedInterruptTimePrecise: a DLL that
# imports it does not load there).
set -eu
objdump=$1 dll=$2
dump=$("$objdump" -p "$dll")
names=$(printf '%s\n' "$dump" | sed -n 's/^[[:space:]]*DLL Name: //p')
[ -n "$names" ] || { echo "FAIL: no import table found in $dll" >&2; exit 1; }
echo "imports of $(basename "$dll"):" $names
status=0
for n in $names; do
  case $(printf '%s' "$n" | tr 'A-Z' 'a-z') in
    kernel32.dll | msvcrt.dll | bcrypt.dll | advapi32.dll | ntdll.dll | ucrtbase.dll | api-ms-win-*.dll) ;;
    *) echo "FAIL: imports $n, which Windows does not ship" >&2; status=1 ;;
  esac
done
for f in QueryUnbiasedInterruptTimePrecise; do
  if printf '%s\n' "$dump" | grep -qw "$f"; then
    echo "FAIL: imports $f, which Wine 8 does not export" >&2
    status=1
  fi
done
exit $status
