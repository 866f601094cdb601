#!/usr/bin/env bash
# packaging/lua/lazybreaker-*.rockspec builds the module against an
# installed library, for Lua 5.4 and for LuaJIT (LuaRocks' 5.1 tree, with
# LuaJIT's headers, as OpenResty's own luarocks does), and the rock loads:
#
#   rockspec.sh BUILD_DIR WORK
#
# The library is installed from BUILD_DIR (cmake --install: Runtime and
# Development) into WORK/prefix; the rock builds in a copy of the sources
# (luarocks make builds in place) into WORK/tree-<version>.
set -euo pipefail
build=$(cd "${1:?usage: rockspec.sh BUILD_DIR WORK}" && pwd)
work=${2:?}
src=$(cd "$(dirname "$0")/../.." && pwd)
say() { echo "rockspec: $*"; }
fail() { echo "rockspec: FAIL: $*" >&2; exit 1; }
command -v luarocks >/dev/null || fail "no luarocks (packaging/install-deps.sh)"

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
for component in Runtime Development; do
  cmake --install "$build" --prefix "$work/prefix" --component $component >/dev/null
done
libdir=$(dirname "$(find "$work/prefix" -name 'liblazybreaker.so' | head -n1)")
[ -n "$libdir" ] || fail "no liblazybreaker.so installed from $build"
rockspec=$(ls "$src"/packaging/lua/lazybreaker-*.rockspec)
# The version the rock and the module must both be: the header's.
want=$(sed -n 's/^#define CB_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$src/include/lazybreaker/lazybreaker.h" | paste -sd.)
[ -n "$want" ] || fail "cannot read CB_VERSION_* from include/lazybreaker/lazybreaker.h"

status=0
for entry in "5.4 lua5.4 /usr/include/lua5.4" "5.1 luajit /usr/include/luajit-2.1"; do
  read -r version exe incdir <<<"$entry"
  copy=$work/src-$version
  mkdir -p "$copy"
  cp -r "$src/bindings" "$copy/"
  tree=$work/tree-$version
  if ! (cd "$copy" && luarocks --lua-version "$version" make --tree "$tree" "$rockspec" \
          LUA_INCDIR="$incdir" LAZYBREAKER_DIR="$work/prefix" LAZYBREAKER_LIBDIR="$libdir") \
          >"$work/luarocks-$version.log" 2>&1; then
    cat "$work/luarocks-$version.log" >&2
    echo "rockspec: FAIL: luarocks make for $version" >&2
    status=1
    continue
  fi
  rock=$(luarocks --lua-version "$version" --tree "$tree" list --porcelain lazybreaker | cut -f2)
  case $rock in
    "$want"-*) ;;
    *) echo "rockspec: FAIL: the rock is lazybreaker $rock, the header says $want" >&2; status=1 ;;
  esac
  if out=$(env LD_LIBRARY_PATH="$libdir" "$exe" -e "
      package.path = '$tree/share/lua/$version/?.lua'
      package.cpath = '$tree/lib/lua/$version/?.so'
      local lb = require 'lazybreaker'
      local b = lb.registry { manual_clock = true }:new { failure_threshold = 1 }
      assert(b:call(function() return 7 end) == 7)
      pcall(b.call, b, error)
      assert(b:state() == 'open')
      assert(lb.version == '$want', 'lb.version is ' .. lb.version .. ', the header says $want')
      print('ok ' .. (jit and jit.version or _VERSION) .. ' ' .. lb.version)" 2>&1); then
    say "$out"
  else
    echo "rockspec: FAIL: $exe: $out" >&2
    status=1
  fi
done
[ $status -eq 0 ] && say "passed"
exit $status
