#!/usr/bin/env bash
# Consumers of the .deb packages, built from the installed files only:
#   a C program through pkg-config, a CMake project through
#   find_package(lazybreaker 1) (shared and static), a C program linked
#   statically through pkg-config --static, and a C program that only
#   dlopens liblazybreaker.so.1. Each runs the lazy-recovery cycle.
#
#   consumers.sh scratch PKGDIR WORK   unpack with dpkg -x into WORK/root
#   consumers.sh system  PKGDIR WORK   dpkg -i, build and run against /usr,
#                                      then dpkg --purge (always), each
#                                      waiting for a held package lock;
#                                      needs root, exits 77 (skipped)
#                                      otherwise
set -euo pipefail

mode=${1:?usage: consumers.sh scratch|system PKGDIR WORK}
pkgdir=$(cd "${2:?}" && pwd)
work=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
consumer=$here/consumer
cc=${CC:-cc}
runtime_pkg=liblazybreaker1

# grep -q would exit at the first match and, under pipefail, turn the
# writer's SIGPIPE into a failure: read everything instead.
has() { grep "$@" >/dev/null; }
say() { echo "consumers[$mode]: $*"; }
fail() { echo "consumers[$mode]: FAIL: $*" >&2; exit 1; }
# dpkg_waiting LOG ARGS...: dpkg ARGS, its output in LOG, waiting up to
# 120 s for the package lock while another process (an apt run, another
# test) holds it, as apt-get -o DPkg::Lock::Timeout=120 does: dpkg itself
# has no such option, and fails at once on a held lock, having done
# nothing. Any other failure is returned at once.
dpkg_waiting() {
  local log=$1 deadline=$((SECONDS + 120)) rc
  shift
  while :; do
    rc=0
    dpkg "$@" >"$log" 2>&1 || rc=$?
    if [ $rc -eq 0 ] || ! has -E 'locked by another process|has locked the database' "$log" ||
      [ $SECONDS -ge $deadline ]; then
      return $rc
    fi
    sleep 1
  done
}

shopt -s nullglob
debs=("$pkgdir"/*.deb)
[ ${#debs[@]} -ge 2 ] || fail "no .deb packages in $pkgdir (run packaging/make-packages.sh)"

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
unset PKG_CONFIG_PATH

needs_lazybreaker() { readelf -d "$1" | has 'NEEDED.*\[liblazybreaker\.so\.1\]'; }
# $1 = program, rest = the environment to run it in
run() {
  local prog=$1; shift
  say "running $(basename "$prog")"
  env "$@" "$prog" || fail "$(basename "$prog") did not complete the cycle"
}

# build_and_run <root> : everything below <root>/usr must be enough
build_and_run() {
  local root=$1 usr=$1/usr
  local pc
  pc=$(find "$usr" -name lazybreaker.pc -path '*/pkgconfig/*' | head -n1)
  [ -n "$pc" ] || fail "lazybreaker.pc not installed"
  local pcdir libdir
  pcdir=$(dirname "$pc")
  libdir=$(dirname "$pcdir")
  local pkgconf=(pkg-config) # installed: exactly what a user types
  local runenv=()
  if [ "$root" != "" ]; then
    # An unpacked tree: only its .pc, prefix redefined, and the loader
    # pointed there.
    pkgconf=(env PKG_CONFIG_LIBDIR="$pcdir" pkg-config --define-variable=prefix="$usr")
    runenv=(LD_LIBRARY_PATH="$libdir")
  fi

  # 1. pkg-config, shared
  say "pkg-config: $("${pkgconf[@]}" --modversion lazybreaker) $("${pkgconf[@]}" --cflags --libs lazybreaker)"
  # shellcheck disable=SC2046
  $cc -std=c99 -Wall -Wextra -pedantic -Werror -o "$work/app_pkgconfig" "$consumer/cycle.c" \
    $("${pkgconf[@]}" --cflags --libs lazybreaker)
  needs_lazybreaker "$work/app_pkgconfig" || fail "app_pkgconfig does not link liblazybreaker.so.1"
  run "$work/app_pkgconfig" "${runenv[@]}"
  if [ ${#runenv[@]} -gt 0 ]; then
    env "${runenv[@]}" ldd "$work/app_pkgconfig" | has "liblazybreaker.so.1 => $libdir/" ||
      fail "app_pkgconfig did not load the unpacked liblazybreaker.so.1"
  fi

  # 2. pkg-config --static, with the archive picked by name
  local static_libs
  static_libs=$("${pkgconf[@]}" --static --libs lazybreaker | sed 's/-llazybreaker\b/-l:liblazybreaker.a/')
  say "pkg-config --static: $static_libs"
  # shellcheck disable=SC2046,SC2086
  $cc -std=c99 -Wall -Wextra -pedantic -Werror -o "$work/app_pkgconfig_static" "$consumer/cycle.c" \
    $("${pkgconf[@]}" --cflags lazybreaker) $static_libs
  ! needs_lazybreaker "$work/app_pkgconfig_static" || fail "app_pkgconfig_static needs the shared library"
  run "$work/app_pkgconfig_static"

  # 3. CMake find_package(lazybreaker 1 REQUIRED), shared and static
  local cmake_args=(-S "$consumer" -B "$work/cmake" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release)
  [ "$root" != "" ] && cmake_args+=(-DCMAKE_PREFIX_PATH="$usr" -DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF)
  cmake "${cmake_args[@]}" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "find_package(lazybreaker 1) failed"; }
  grep -q "found lazybreaker 1\.[0-9.]* in $libdir/cmake/lazybreaker" "$work/cmake.log" ||
    { cat "$work/cmake.log"; fail "find_package found another lazybreaker"; }
  cmake --build "$work/cmake" >"$work/cmake-build.log" 2>&1 || { cat "$work/cmake-build.log"; fail "CMake consumer did not build"; }
  needs_lazybreaker "$work/cmake/app" || fail "CMake app does not link liblazybreaker.so.1"
  ! needs_lazybreaker "$work/cmake/app_static" || fail "CMake app_static needs the shared library"
  run "$work/cmake/app" "${runenv[@]}"
  run "$work/cmake/app_static"

  # 4. SameMajorVersion: asking for 2 must fail
  if cmake "${cmake_args[@]}" -B "$work/cmake2" -DLB_WANT_VERSION=2 >"$work/cmake2.log" 2>&1; then
    fail "find_package(lazybreaker 2) accepted version 1"
  fi
  say "find_package(lazybreaker 2) refused, as it must"

  # 5. dlopen only: no header, no -llazybreaker
  $cc -std=c99 -Wall -Wextra -pedantic -Werror -o "$work/app_dlopen" "$consumer/dlopen_cycle.c" -ldl
  ! needs_lazybreaker "$work/app_dlopen" || fail "app_dlopen links the library"
  run "$work/app_dlopen" "${runenv[@]}"

  # 6. Java, if packaged: the thin jar with the JNI glue from the package
  #    (java.library.path), never a copy of its own
  local jar=$usr/share/java/lazybreaker.jar
  if [ -f "$jar" ]; then
    if command -v javac >/dev/null && command -v java >/dev/null; then
      mkdir -p "$work/java"
      javac -d "$work/java" -cp "$jar" "$here/../../bindings/java/tests/consumer/App.java"
      local javaenv=() javaopts=(-Dlazybreaker.native=system)
      if [ "$root" != "" ]; then
        javaenv=(LD_LIBRARY_PATH="$libdir")
        javaopts+=(-Djava.library.path="$libdir/jni")
      fi
      local out
      out=$(env "${javaenv[@]}" java "${javaopts[@]}" -cp "$jar:$work/java" App) ||
        fail "the Java consumer did not complete the cycle"
      echo "$out"
      [[ $out == *"natives from java.library.path"* ]] || fail "the Java consumer did not use the packaged glue"
      say "Java consumer ran against the packaged jar and glue"
    else
      fail "a Java package was built but there is no JDK here to consume it"
    fi
  fi

  # 7. the tools, if packaged, find their library
  local tool
  for tool in $(for d in "${debs[@]}"; do dpkg-deb -c "$d"; done | awk '$1 ~ /^-..x/ {print $6}' | sed -n 's#^\./usr/bin/##p'); do
    if env "${runenv[@]}" ldd "$usr/bin/$tool" | has 'not found'; then
      fail "$tool has unresolved libraries"
    fi
    say "$tool resolves its libraries"
  done

  # 7. installed for real: Debian's Lua 5.4 and LuaJIT find the Lua module
  #    on their default paths (the unpacked tree: tests/packaging/lua-module.sh)
  if [ "$root" = "" ] && for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | has -x lua-lazybreaker; then
    local exe
    for exe in lua5.4 luajit; do
      command -v "$exe" >/dev/null || fail "no $exe to load the installed Lua module (packaging/install-deps.sh)"
      env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 "$exe" -e '
        local lb = require "lazybreaker"
        local b = lb.registry { manual_clock = true }:new { failure_threshold = 1 }
        pcall(b.call, b, error)
        assert(b:state() == "open")' || fail "$exe cannot use the installed lua-lazybreaker"
      say "$exe loads the installed lua-lazybreaker from its default paths"
    done
  fi
}

case $mode in
  scratch)
    root=$work/root
    mkdir -p "$root"
    for d in "${debs[@]}"; do
      say "dpkg -x $(basename "$d")"
      dpkg -x "$d" "$root"
    done
    build_and_run "$root"
    ;;

  system)
    if [ "$(id -u)" -ne 0 ]; then
      echo "consumers[system]: SKIPPED: installing packages with dpkg -i needs root"
      exit 77
    fi
    if dpkg-query -W -f='${Status}' "$runtime_pkg" 2>/dev/null | has 'installed'; then
      echo "consumers[system]: SKIPPED: $runtime_pkg is already installed here; not touching it"
      exit 77
    fi
    names=()
    for d in "${debs[@]}"; do names+=("$(dpkg-deb -f "$d" Package)"); done
    cleanup() {
      say "dpkg --purge ${names[*]}"
      dpkg_waiting "$work/dpkg-purge.log" --purge "${names[@]}" ||
        echo "consumers[system]: WARNING: dpkg --purge failed: $(cat "$work/dpkg-purge.log")" >&2
    }
    trap cleanup EXIT
    say "dpkg -i ${names[*]}"
    dpkg_waiting "$work/dpkg-i.log" -i "${debs[@]}" || { cat "$work/dpkg-i.log"; fail "dpkg -i failed"; }
    # the ldconfig trigger ran
    ldconfig -p | has 'liblazybreaker\.so\.1 ' || fail "ldconfig cache lacks liblazybreaker.so.1 after install"
    build_and_run ""
    # php-lazybreaker (when built): its postinst enabled the extension for
    # cli and fpm, and the packaged classes load from include_path
    php_enabled=
    if [[ " ${names[*]} " == *" php-lazybreaker "* ]]; then
      for sapi in cli fpm; do
        compgen -G "/etc/php/*/$sapi/conf.d/*-lazybreaker.ini" >/dev/null || fail "php-lazybreaker is not enabled for $sapi"
      done
      php -r 'require_once "LazyBreaker/autoload.php"; LazyBreaker\Registry::manualClock()->getOrCreate("pkg");' ||
        fail "php does not load the installed extension and classes"
      php_enabled=1
      say "php-lazybreaker: enabled for cli and fpm, its classes load"
    fi
    files=$(dpkg -L "$runtime_pkg" | grep 'liblazybreaker\.so')
    trap - EXIT
    cleanup
    for f in $files; do
      [ ! -e "$f" ] || fail "$f is still there after dpkg --purge"
    done
    ! ldconfig -p | has 'liblazybreaker\.so\.1 ' || fail "ldconfig cache still lists liblazybreaker.so.1"
    # compgen -G: a glob that matches nothing is false (under nullglob, a
    # bare ls of it would list the working directory and succeed)
    if [ -n "$php_enabled" ] && compgen -G '/etc/php/*/*/conf.d/*-lazybreaker.ini' >/dev/null; then
      fail "php-lazybreaker is still enabled after dpkg --purge"
    fi
    say "installed, used and removed; the machine is as before"
    ;;

  *)
    fail "unknown mode $mode"
    ;;
esac
say "all consumers passed"
