#!/usr/bin/env bash
# The lua-lazybreaker .deb, unpacked with the runtime package into a scratch
# root (dpkg -x): on Lua 5.4 and on LuaJIT, require "lazybreaker" finds the
# module in the packaged paths and a breaker trips and recovers. The C
# modules must not link a Lua library (the interpreter provides lua_*; a
# second LuaJIT in an OpenResty worker would break it).
#
#   lua-module.sh PKGDIR WORK
set -euo pipefail
pkgdir=$(cd "${1:?usage: lua-module.sh PKGDIR WORK}" && pwd)
work=${2:?}
say() { echo "lua-module: $*"; }
fail() { echo "lua-module: FAIL: $*" >&2; exit 1; }

shopt -s nullglob
lua_debs=("$pkgdir"/lua-lazybreaker_*.deb)
runtime_debs=("$pkgdir"/liblazybreaker[0-9]*_*.deb)
[ ${#lua_debs[@]} -eq 1 ] || fail "no single lua-lazybreaker .deb in $pkgdir"
[ ${#runtime_debs[@]} -eq 1 ] || fail "no single runtime .deb in $pkgdir"
rm -rf "$work"
mkdir -p "$work/root"
root=$(cd "$work/root" && pwd)
dpkg -x "${runtime_debs[0]}" "$root"
dpkg -x "${lua_debs[0]}" "$root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
libdir=$root/usr/lib/$multiarch

script='
local lb = require "lazybreaker"
local reg = lb.registry { manual_clock = true }
local b = reg:new { name = "pkg", failure_threshold = 1, open_duration = 5 }
assert(select(2, pcall(b.call, b, error, "down")) == "down")
local ok, reason, retry = b:call(print)
assert(ok == nil and reason == "open" and retry == 5, tostring(reason))
reg:advance(5)
assert(b:call(function() return "up" end) == "up")
assert(b:state() == "closed")
print("ok " .. (jit and jit.version or _VERSION) .. " " .. package.searchpath("lazybreaker_core", package.cpath))
'
status=0
for pair in "lua5.4 5.4" "luajit 5.1"; do
  read -r exe abi <<<"$pair"
  so=$libdir/lua/$abi/lazybreaker_core.so
  [ -f "$so" ] || { echo "lua-module: FAIL: $so is not in the package" >&2; status=1; continue; }
  if readelf -d "$so" | grep -E 'NEEDED.*(liblua|libluajit)' >/dev/null; then
    echo "lua-module: FAIL: $so links a Lua library" >&2
    status=1
  fi
  command -v "$exe" >/dev/null || { echo "lua-module: FAIL: no $exe (packaging/install-deps.sh)" >&2; status=1; continue; }
  # Only the scratch root: LUA_PATH and LUA_CPATH without ";;" leave out
  # the interpreter's defaults (and any installed lazybreaker).
  if out=$(env LD_LIBRARY_PATH="$libdir" LUA_PATH="$root/usr/share/lua/$abi/?.lua" \
             LUA_PATH_5_4="$root/usr/share/lua/$abi/?.lua" LUA_CPATH="$libdir/lua/$abi/?.so" \
             LUA_CPATH_5_4="$libdir/lua/$abi/?.so" "$exe" -e "$script" 2>&1); then
    say "$out"
  else
    echo "lua-module: FAIL: $exe: $out" >&2
    status=1
  fi
done
[ $status -eq 0 ] && say "passed"
exit $status
