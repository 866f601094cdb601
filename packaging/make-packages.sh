#!/usr/bin/env bash
# Builds the .deb and .rpm packages from a clean configuration of the
# source tree and puts them in one folder.
#
#   packaging/make-packages.sh [--work DIR] [--out DIR] [--only deb|rpm]
#
# One build tree per format, because the distros put libraries in different
# places and the installed lazybreaker.pc and CMake files record the place:
#   deb: prefix /usr, libdir lib/<multiarch> (GNUInstallDirs on Debian),
#        flags from dpkg-buildflags (hardening as Debian builds it)
#   rpm: prefix /usr, libdir lib64 (x86_64, aarch64, ...) or lib
# Defaults: --work build/packaging, --out build/packages.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
work=$src/build/packaging
out=$src/build/packages
only=""
while [ $# -gt 0 ]; do
  case $1 in
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [--work DIR] [--out DIR] [--only deb|rpm]" >&2; exit 2 ;;
  esac
done
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)

build_format() { # <deb|rpm> <libdir or ""> [extra cmake args...]
  local fmt=$1 libdir=$2; shift 2
  local tree=$work/$fmt
  # C#, Go and Node.js ship through NuGet, go.mod and npm, not these
  # packages: their parts are not built here.
  local args=(-S "$src" -B "$tree" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
              -DLB_PACKAGE_LAYOUT="$fmt" -DLB_BUILD_TESTS=OFF -DLB_BUILD_BENCH=OFF -DLB_WERROR=ON
              -DLB_CSHARP=OFF -DLB_GO=OFF -DLB_NODE=OFF)
  [ -n "$libdir" ] && args+=(-DCMAKE_INSTALL_LIBDIR="$libdir")
  echo "make-packages: $fmt in $tree"
  cmake "${args[@]}" "$@" >"$work/$fmt-configure.log" 2>&1 || { cat "$work/$fmt-configure.log"; return 1; }
  cmake --build "$tree" -j "$jobs" >"$work/$fmt-build.log" 2>&1 || { cat "$work/$fmt-build.log"; return 1; }
  rm -rf "$tree/packages"
  (cd "$tree" && cpack -C RelWithDebInfo >"$work/$fmt-cpack.log" 2>&1) || { cat "$work/$fmt-cpack.log"; return 1; }
  rm -f "$out"/*."$fmt"
  cp "$tree"/packages/*."$fmt" "$out"/
}

# The library and its -dev package may be installed for several
# architectures at once (their files are the same or in multiarch paths):
# Multi-Arch: same, which CPack's DEB generator cannot write.
mark_multiarch_same() { # <deb>...
  local deb dir
  for deb in "$@"; do
    dir=$(mktemp -d)
    dpkg-deb -R "$deb" "$dir/pkg"
    grep -q '^Multi-Arch:' "$dir/pkg/DEBIAN/control" ||
      sed -i '/^Architecture:/a Multi-Arch: same' "$dir/pkg/DEBIAN/control"
    dpkg-deb --root-owner-group -Zxz --build "$dir/pkg" "$deb" >/dev/null
    rm -rf "$dir"
  done
}

if [ -z "$only" ] || [ "$only" = deb ]; then
  command -v dpkg-deb >/dev/null || { echo "make-packages: dpkg-deb missing (make deps)" >&2; exit 1; }
  # Debian's own compiler and linker flags for packages (-O2, hardening).
  flags=()
  if command -v dpkg-buildflags >/dev/null; then
    cppflags=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CPPFLAGS)
    flags=("-DCMAKE_C_FLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS) $cppflags"
           "-DCMAKE_CXX_FLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CXXFLAGS) $cppflags"
           "-DCMAKE_SHARED_LINKER_FLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS)"
           "-DCMAKE_EXE_LINKER_FLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS)")
  fi
  build_format deb "" "${flags[@]}"
  mark_multiarch_same "$out"/liblazybreaker[0-9]*_*.deb "$out"/liblazybreaker-dev_*.deb
fi
if [ -z "$only" ] || [ "$only" = rpm ]; then
  command -v rpmbuild >/dev/null || { echo "make-packages: rpmbuild missing (make deps)" >&2; exit 1; }
  case $(uname -m) in
    x86_64 | aarch64 | ppc64le | s390x | riscv64) rpm_libdir=lib64 ;;
    *) rpm_libdir=lib ;;
  esac
  build_format rpm "$rpm_libdir" -DCMAKE_C_FLAGS="-fstack-protector-strong -D_FORTIFY_SOURCE=2" \
    -DCMAKE_CXX_FLAGS="-fstack-protector-strong -D_FORTIFY_SOURCE=2"
fi
echo "make-packages: packages in $out:"
ls -1 "$out"
