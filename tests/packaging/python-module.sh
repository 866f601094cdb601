#!/usr/bin/env bash
# The python3-lazybreaker .deb, unpacked with the runtime package into a
# scratch root (dpkg -x): Debian's python3 imports lazybreaker from the
# packaged dist-packages (and nothing from this build), a breaker trips and
# recovers, the typed package has its py.typed, and the extension links
# liblazybreaker.so but no libpython (the interpreter provides it).
#
#   python-module.sh PKGDIR WORK
set -euo pipefail
pkgdir=$(cd "${1:?usage: python-module.sh PKGDIR WORK}" && pwd)
work=${2:?}
say() { echo "python-module: $*"; }
fail() { echo "python-module: FAIL: $*" >&2; exit 1; }

shopt -s nullglob
py_debs=("$pkgdir"/python3-lazybreaker_*.deb)
runtime_debs=("$pkgdir"/liblazybreaker[0-9]*_*.deb)
[ ${#py_debs[@]} -eq 1 ] || fail "no single python3-lazybreaker .deb in $pkgdir"
[ ${#runtime_debs[@]} -eq 1 ] || fail "no single runtime .deb in $pkgdir"
rm -rf "$work"
mkdir -p "$work/root"
root=$(cd "$work/root" && pwd)
dpkg -x "${runtime_debs[0]}" "$root"
dpkg -x "${py_debs[0]}" "$root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
site=$root/usr/lib/python3/dist-packages
so=$(find "$site/lazybreaker" -name '_core.cpython-*.so')
[ -f "$so" ] || fail "no extension module in the package"
readelf -d "$so" | grep -q 'NEEDED.*\[liblazybreaker\.so\.[0-9]*\]' || fail "$so does not link liblazybreaker.so"
! readelf -d "$so" | grep -E 'NEEDED.*libpython' >/dev/null || fail "$so links libpython"
[ -f "$site/lazybreaker/py.typed" ] || fail "no py.typed"

out=$(cd "$work" && env -u PYTHONPATH LD_LIBRARY_PATH="$root/usr/lib/$multiarch" \
  /usr/bin/python3 -s -c '
import sys
sys.path.insert(0, sys.argv[1])
import lazybreaker as lb
assert lb.__file__.startswith(sys.argv[1]), lb.__file__
reg = lb.Registry.manual_clock()
b = reg.get_or_create("pkg", lb.Config(failure_threshold=1, open_duration=5))
try:
    b.call(lambda: 1 / 0)
except ZeroDivisionError:
    pass
assert b.state == "open"
try:
    b.call(print)
    raise SystemExit("an open breaker ran the call")
except lb.CircuitOpenError as e:
    assert e.retry_after.total_seconds() == 5
reg.advance(5)
assert b.call(lambda: "up") == "up" and b.state == "closed"
print("ok", lb.__version__, lb.__file__)
' "$site" 2>&1) || fail "$out"
say "$out"
say "passed"
