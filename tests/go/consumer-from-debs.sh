#!/usr/bin/env bash
# The Go consumer (tests/go/consumer) built against the .deb packages alone:
# liblazybreaker1 and liblazybreaker-dev unpacked with dpkg -x into a
# scratch root, the module's `#cgo pkg-config: lazybreaker` answered by the
# unpacked lazybreaker.pc (prefix redefined, as tests/packaging/consumers.sh
# does for C), and the program run against the unpacked library.
#
#   consumer-from-debs.sh PKGDIR WORK GO-ENV...
set -euo pipefail
pkgdir=$(cd "${1:?usage: consumer-from-debs.sh PKGDIR WORK [VAR=VALUE...]}" && pwd)
work=${2:?}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "go-consumer[debs]: FAIL: $*" >&2; exit 1; }

shopt -s nullglob
debs=("$pkgdir"/liblazybreaker1_*.deb "$pkgdir"/liblazybreaker-dev_*.deb)
[ ${#debs[@]} -eq 2 ] || fail "liblazybreaker1 and liblazybreaker-dev .debs not in $pkgdir"
rm -rf "$work"
mkdir -p "$work/root"
work=$(cd "$work" && pwd)
for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$work/root"; done
pc=$(find "$work/root/usr" -name lazybreaker.pc -path '*/pkgconfig/*' | head -n1)
[ -n "$pc" ] || fail "lazybreaker.pc not in the packages"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")

# cgo runs $PKG_CONFIG: this one sees only the unpacked .pc.
cat >"$work/pkg-config" <<SH
#!/bin/sh
PKG_CONFIG_LIBDIR="$pcdir" exec pkg-config --define-variable=prefix="$work/root/usr" "\$@"
SH
chmod +x "$work/pkg-config"
echo "go-consumer[debs]: pkg-config: $("$work/pkg-config" --cflags --libs lazybreaker)"

cd "$here/consumer"
env "$@" PKG_CONFIG="$work/pkg-config" PKG_CONFIG_PATH= go build -o "$work/consumer" . ||
  fail "the consumer did not build against the packages"
readelf -d "$work/consumer" | grep 'NEEDED.*\[liblazybreaker\.so\.1\]' >/dev/null ||
  fail "the consumer does not link liblazybreaker.so.1"
LD_LIBRARY_PATH="$libdir" ldd "$work/consumer" | grep "liblazybreaker.so.1 => $libdir/" >/dev/null ||
  fail "the consumer did not load the unpacked liblazybreaker.so.1"
LD_LIBRARY_PATH="$libdir" "$work/consumer" || fail "the consumer failed"
