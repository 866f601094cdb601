#!/bin/sh
# check_addon.sh OBJDUMP NM ADDON: the Windows addon's tables. It exports
# the entry points Node looks for (napi_register_module_v1 and, from
# Node-API 9 headers on, node_api_module_get_api_version_v1). It gets
# Node-API from NODE.EXE through a delay-load descriptor (GNU ld writes none
# in the PE header's delay-import directory, so the symbols say it), with
# the hook set. It imports lazybreaker.dll, and otherwise only DLLs that
# Windows ships (libgcc and winpthread are linked in or not needed).
set -eu
objdump=$1 nm=$2 addon=$3
dump=$("$objdump" -p "$addon")
symbols=$("$nm" "$addon")
status=0
fail() { echo "FAIL: $(basename "$addon") $*" >&2; status=1; }
for f in napi_register_module_v1 node_api_module_get_api_version_v1; do
  printf '%s\n' "$dump" | grep -qw "$f" || fail "does not export $f"
done
printf '%s\n' "$symbols" | grep -q ' __DELAY_IMPORT_DESCRIPTOR_' || fail "has no delay-load descriptor"
printf '%s\n' "$symbols" | grep -q ' __imp_napi_create_function$' || fail "does not import napi_create_function"
printf '%s\n' "$symbols" | grep -q ' D __pfnDliNotifyHook2$' || fail "does not set the delay-load hook"
LC_ALL=C grep -aq 'NODE\.EXE' "$addon" || fail "does not name NODE.EXE"
names=$(printf '%s\n' "$dump" | sed -n 's/^[[:space:]]*DLL Name: //p')
echo "imports of $(basename "$addon"):" $names
for n in $names; do
  case $(printf '%s' "$n" | tr 'A-Z' 'a-z') in
    lazybreaker.dll | kernel32.dll | msvcrt.dll | api-ms-win-*.dll) ;;
    *) fail "imports $n, which Windows does not ship" ;;
  esac
done
printf '%s\n' "$names" | grep -qix 'lazybreaker.dll' || fail "does not import lazybreaker.dll"
exit $status
