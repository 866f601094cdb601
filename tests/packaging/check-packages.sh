#!/usr/bin/env bash
# Checks on the built packages themselves (no installation):
#   check-packages.sh lintian  PKGDIR   no lintian error on the .debs
#   check-packages.sh rpmlint  PKGDIR   no rpmlint error on the .rpms
#                                       (packaging/rpm/rpmlint.toml says why
#                                       each filtered check cannot apply)
#   check-packages.sh metadata PKGDIR   names, versions, dependencies,
#                                       shlibs/symbols/triggers, scriptlets
#   check-packages.sh contents PKGDIR   which file is in which package, and the
#                                       .rpm contents equal the .deb contents
set -euo pipefail

mode=${1:?usage: check-packages.sh lintian|rpmlint|metadata|contents PKGDIR}
pkgdir=$(cd "${2:?}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)

# grep -q would exit at the first match and, under pipefail, turn the
# writer's SIGPIPE into a failure: read everything instead.
has() { grep "$@" >/dev/null; }
errors=0
say() { echo "check[$mode]: $*"; }
bad() { echo "check[$mode]: FAIL: $*" >&2; errors=$((errors + 1)); }
expect_eq() { # what got want
  if [ "$2" = "$3" ]; then say "ok   $1 = $2"; else bad "$1 is '$2', want '$3'"; fi
}

# The version being packaged, from the header (where CMake reads it too) and the changelog.
version=$(sed -n 's/^#define CB_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$src/include/lazybreaker/lazybreaker.h" | paste -sd.)
release=$(sed -n '1s/^lazybreaker ([0-9.]*-\([0-9A-Za-z.+~]*\)).*/\1/p' "$src/packaging/debian/changelog")
[ -n "$version" ] && [ -n "$release" ] || { echo "cannot read version/release" >&2; exit 1; }
major=${version%%.*}
debarch=$(dpkg --print-architecture)
rpmarch=$(rpm --eval '%{_arch}')
rpmisa=$(rpm --eval '%{?_isa}')

runtime_deb=$pkgdir/liblazybreaker${major}_${version}-${release}_${debarch}.deb
dev_deb=$pkgdir/liblazybreaker-dev_${version}-${release}_${debarch}.deb
tools_deb=$pkgdir/lazybreaker-tools_${version}-${release}_${debarch}.deb
runtime_rpm=$pkgdir/lazybreaker-${version}-${release}.${rpmarch}.rpm
dev_rpm=$pkgdir/lazybreaker-devel-${version}-${release}.${rpmarch}.rpm
tools_rpm=$pkgdir/lazybreaker-tools-${version}-${release}.${rpmarch}.rpm
lua_deb=$pkgdir/lua-lazybreaker_${version}-${release}_${debarch}.deb
lua_rpm=$pkgdir/lua-lazybreaker-${version}-${release}.${rpmarch}.rpm
# The Python binding's package, when the binding was built (LB_PYTHON).
python_deb=$pkgdir/python3-lazybreaker_${version}-${release}_${debarch}.deb
python_rpm=$pkgdir/python3-lazybreaker-${version}-${release}.${rpmarch}.rpm
php_deb=$pkgdir/php-lazybreaker_${version}-${release}_${debarch}.deb
php_rpm=$pkgdir/php-lazybreaker-${version}-${release}.${rpmarch}.rpm
# The Java binding's package, when the binding was built (LB_JAVA).
java_deb=$pkgdir/liblazybreaker-java_${version}-${release}_${debarch}.deb
java_rpm=$pkgdir/lazybreaker-java-${version}-${release}.${rpmarch}.rpm

deb_files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sed 's#^\./#/#'; }
rpm_files() { rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$1" 2>/dev/null | awk '$1 !~ /^d/ {print $2}'; }

case $mode in
  lintian)
    shopt -s nullglob
    debs=("$pkgdir"/*.deb)
    [ ${#debs[@]} -gt 0 ] || { bad "no .deb in $pkgdir"; exit 1; }
    # Errors and warnings fail, and so does an override that matches
    # nothing; infos are shown. Overrides (shipped in the packages that need
    # one) each carry their reason.
    report=$(lintian --fail-on none --display-info --show-overrides "${debs[@]}" 2>&1 | grep -v 'running with root privileges' || true)
    printf '%s\n' "$report"
    lintian --fail-on error,warning "${debs[@]}" >/dev/null 2>&1 || bad "lintian reports errors or warnings (above)"
    ! grep -q 'unused-override' <<<"$report" || bad "a lintian override matches nothing (above)"
    ! grep -q 'unstripped-static-library' <<<"$report" || bad "the static library keeps its debug info"
    ;;

  rpmlint)
    shopt -s nullglob
    rpms=("$pkgdir"/*.rpm)
    [ ${#rpms[@]} -gt 0 ] || { bad "no .rpm in $pkgdir"; exit 1; }
    # rpmlint exits non-zero on any error (BadnessThreshold -1).
    rpmlint -c "$src/packaging/rpm/rpmlint.toml" "${rpms[@]}" || bad "rpmlint reports errors (above)"
    ;;

  metadata)
    for f in "$runtime_deb" "$dev_deb" "$runtime_rpm" "$dev_rpm"; do
      if [ -f "$f" ]; then say "ok   $(basename "$f") exists"; else bad "missing $(basename "$f")"; fi
    done
    [ $errors -eq 0 ] || exit 1

    # Debian: fields, exact -dev dependency, shlibs, symbols, trigger
    expect_eq "runtime Package" "$(dpkg-deb -f "$runtime_deb" Package)" "liblazybreaker${major}"
    expect_eq "runtime Architecture (dpkg's)" "$(dpkg-deb -f "$runtime_deb" Architecture)" "$debarch"
    expect_eq "runtime Section" "$(dpkg-deb -f "$runtime_deb" Section)" "libs"
    expect_eq "runtime Version" "$(dpkg-deb -f "$runtime_deb" Version)" "$version-$release"
    expect_eq "-dev Depends" "$(dpkg-deb -f "$dev_deb" Depends)" "liblazybreaker${major} (= $version-$release)"
    expect_eq "-dev Section" "$(dpkg-deb -f "$dev_deb" Section)" "libdevel"
    expect_eq "runtime Multi-Arch" "$(dpkg-deb -f "$runtime_deb" Multi-Arch)" "same"
    expect_eq "-dev Multi-Arch" "$(dpkg-deb -f "$dev_deb" Multi-Arch)" "same"
    [[ $(dpkg-deb -f "$dev_deb" Description) == *lazybreaker.h\ * ]] || bad "-dev's description does not name lazybreaker.h"
    [[ $(dpkg-deb -f "$dev_deb" Description) == *lazybreaker.hpp* ]] || bad "-dev's description does not name lazybreaker.hpp"
    [ -n "$(dpkg-deb -f "$runtime_deb" Homepage)" ] || bad "runtime has no Homepage"
    depends=$(dpkg-deb -f "$runtime_deb" Depends)
    [[ $depends == *"libc6 (>="* ]] && say "ok   runtime Depends from dpkg-shlibdeps: $depends" ||
      bad "runtime Depends lacks the shlibdeps result: $depends"
    ctl=$(mktemp -d)
    trap 'rm -rf "$ctl"' EXIT
    dpkg-deb -e "$runtime_deb" "$ctl"
    # shlibs asks for the release of the newest version node in symbols.txt
    newest=$(grep -v '^#' "$src/abi/symbols.txt" | sed -n 's/.*@@LAZYBREAKER_\([0-9]*\.[0-9]*\)$/\1.0/p' | sort -V | tail -n1)
    expect_eq "runtime shlibs" "$(cat "$ctl/shlibs")" "liblazybreaker ${major} liblazybreaker${major} (>= $newest)"
    expect_eq "runtime triggers" "$(grep -v '^#' "$ctl/triggers")" "activate-noawait ldconfig"
    ! cat "$ctl/postinst" "$ctl/postrm" 2>/dev/null | grep -v '^#' | has ldconfig ||
      bad "maintainer scripts call ldconfig by hand"
    want_syms=$(grep -v '^#' "$src/abi/symbols.txt" | sed 's/@@/@/' | LC_ALL=C sort)
    got_syms=$(sed -n 's/^ \(cb_[^ ]*\) .*/\1/p' "$ctl/symbols" | LC_ALL=C sort)
    expect_eq "symbols file covers abi/symbols.txt" "$(echo "$got_syms" | wc -l)" "$(echo "$want_syms" | wc -l)"
    [ "$got_syms" = "$want_syms" ] || bad "DEBIAN/symbols differs from abi/symbols.txt"
    # the shared library: SONAME, no RPATH, not executable on Debian
    dpkg-deb -x "$runtime_deb" "$ctl/root"
    so=$(find "$ctl/root" -name "liblazybreaker.so.${major}.*" -type f)
    expect_eq "SONAME" "$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" "liblazybreaker.so.${major}"
    ! readelf -d "$so" | has -E 'RPATH|RUNPATH' || bad "$so has an RPATH"
    expect_eq "shared library mode (deb)" "$(stat -c %a "$so")" "644"

    # lua-lazybreaker: exactly this runtime, and no Lua library linked
    if [ -f "$lua_deb" ]; then
      lua_depends=$(dpkg-deb -f "$lua_deb" Depends)
      [[ $lua_depends == *"liblazybreaker${major} (= $version-$release)"* ]] &&
        say "ok   lua-lazybreaker Depends: $lua_depends" || bad "lua-lazybreaker Depends: $lua_depends"
      expect_eq "lua-lazybreaker Section" "$(dpkg-deb -f "$lua_deb" Section)" "interpreters"
    fi
    if [ -f "$lua_rpm" ]; then
      rpm -qp --requires "$lua_rpm" 2>/dev/null | has -x "lazybreaker${rpmisa} = $version-$release" &&
        say "ok   lua-lazybreaker requires lazybreaker${rpmisa} = $version-$release" ||
        bad "lua-lazybreaker does not require lazybreaker${rpmisa} = $version-$release"
      ! rpm -qp --requires "$lua_rpm" 2>/dev/null | has -E 'liblua|libluajit' || bad "lua-lazybreaker requires a Lua library"
    fi

    # python3-lazybreaker: exactly this runtime and the interpreter's minor
    # version (the extension is built for its ABI), byte-compiled on install
    if [ -f "$python_deb" ]; then
      py_depends=$(dpkg-deb -f "$python_deb" Depends)
      [[ $py_depends == *"liblazybreaker${major} (= $version-$release)"* && $py_depends == *"python3 (>= 3."*"python3 (<< 3."* ]] &&
        say "ok   python3-lazybreaker Depends: $py_depends" || bad "python3-lazybreaker Depends: $py_depends"
      expect_eq "python3-lazybreaker Section" "$(dpkg-deb -f "$python_deb" Section)" "python"
      dpkg-deb -e "$python_deb" "$ctl/python"
      grep -q 'py3compile -p python3-lazybreaker' "$ctl/python/postinst" && grep -q 'py3clean -p python3-lazybreaker' "$ctl/python/prerm" &&
        say "ok   python3-lazybreaker byte-compiles in postinst and cleans in prerm" || bad "python3-lazybreaker lacks py3compile/py3clean"
    fi
    if [ -f "$python_rpm" ]; then
      reqs=$(rpm -qp --requires "$python_rpm" 2>/dev/null)
      has -x "lazybreaker${rpmisa} = $version-$release" <<<"$reqs" && has -E '^python\(abi\) = 3\.[0-9]+$' <<<"$reqs" &&
        say "ok   python3-lazybreaker rpm requires lazybreaker${rpmisa} = $version-$release and python(abi)" ||
        bad "python3-lazybreaker rpm requires: $reqs"
      ! has -E 'libpython' <<<"$reqs" || bad "python3-lazybreaker requires libpython (an extension must not link it)"
    fi
    # php-lazybreaker: exactly this runtime and the PHP ABI it was built
    # for; its postinst enables it for cli and fpm, its prerm disables it;
    # the ini is a conffile (.deb) and %config (.rpm)
    if [ -f "$php_deb" ]; then
      php_depends=$(dpkg-deb -f "$php_deb" Depends)
      [[ $php_depends == *"liblazybreaker${major} (= $version-$release)"* && $php_depends == *"phpapi-"* ]] &&
        say "ok   php-lazybreaker Depends: $php_depends" || bad "php-lazybreaker Depends: $php_depends"
      expect_eq "php-lazybreaker Section" "$(dpkg-deb -f "$php_deb" Section)" "php"
      php_ctl=$(mktemp -d)
      dpkg-deb -e "$php_deb" "$php_ctl"
      for sapi in cli fpm; do
        has -E "phpenmod .*-s $sapi lazybreaker" "$php_ctl/postinst" || bad "php-lazybreaker's postinst does not enable it for $sapi"
        has -E "phpdismod .*-s $sapi lazybreaker" "$php_ctl/prerm" || bad "php-lazybreaker's prerm does not disable it for $sapi"
      done
      has -x '/etc/php/[0-9.]*/mods-available/lazybreaker.ini' "$php_ctl/conffiles" || bad "php-lazybreaker: the ini is no conffile"
      rm -rf "$php_ctl"
    fi
    if [ -f "$php_rpm" ]; then
      rpm -qp --requires "$php_rpm" 2>/dev/null | has -x "lazybreaker${rpmisa} = $version-$release" ||
        bad "php-lazybreaker.rpm does not require lazybreaker${rpmisa} = $version-$release"
      rpm -qp --configfiles "$php_rpm" 2>/dev/null | has -x /etc/php.d/40-lazybreaker.ini ||
        bad "php-lazybreaker.rpm: /etc/php.d/40-lazybreaker.ini is not %config"
    fi

    # lazybreaker-tools: exactly this runtime; with cbctl, the cpp-httplib
    # library it links, from dpkg-shlibdeps (Debian's shlibs for it)
    if [ -f "$tools_deb" ]; then
      tools_depends=$(dpkg-deb -f "$tools_deb" Depends)
      [[ $tools_depends == *"liblazybreaker${major} (= $version-$release)"* ]] &&
        say "ok   lazybreaker-tools Depends: $tools_depends" || bad "lazybreaker-tools Depends: $tools_depends"
      if deb_files "$tools_deb" | has -x /usr/bin/cbctl; then
        dpkg-deb -x "$tools_deb" "$ctl/tools"
        httplib_so=$(readelf -d "$ctl/tools/usr/bin/cbctl" | sed -n 's/.*NEEDED.*\[\(libcpp-httplib\.so\.[0-9.]*\)\]/\1/p')
        if [ -n "$httplib_so" ]; then
          httplib_pkg=$(dpkg -S "*/$httplib_so" 2>/dev/null | head -n1 | cut -d: -f1)
          [[ -n $httplib_pkg && $tools_depends == *"$httplib_pkg (>="* ]] &&
            say "ok   cbctl links $httplib_so and lazybreaker-tools depends on $httplib_pkg" ||
            bad "cbctl links $httplib_so ($httplib_pkg) but lazybreaker-tools Depends is: $tools_depends"
        fi
        [ -n "$(dpkg-deb -f "$tools_deb" Description | grep -w cbctl)" ] || bad "lazybreaker-tools' description does not name cbctl"
      fi
    fi

    # RPM: names, exact -devel requirement, ldconfig scriptlets, licence
    expect_eq "runtime Name" "$(rpm -qp --qf '%{NAME}' "$runtime_rpm" 2>/dev/null)" "lazybreaker"
    expect_eq "runtime License" "$(rpm -qp --qf '%{LICENSE}' "$runtime_rpm" 2>/dev/null)" "MIT"
    rpm -qp --requires "$dev_rpm" 2>/dev/null | has -x "lazybreaker${rpmisa} = $version-$release" &&
      say "ok   -devel requires lazybreaker${rpmisa} = $version-$release" ||
      bad "-devel does not require lazybreaker${rpmisa} = $version-$release"
    rpm -qp --provides "$runtime_rpm" 2>/dev/null | has "^liblazybreaker.so.${major}(LAZYBREAKER_1.0)" &&
      say "ok   runtime provides liblazybreaker.so.${major}(LAZYBREAKER_1.0)" || bad "runtime lacks the soname provide"
    scripts=$(rpm -qp --scripts "$runtime_rpm" 2>/dev/null)
    [[ $scripts == *"postinstall scriptlet"*ldconfig*"postuninstall scriptlet"*ldconfig* ]] &&
      say "ok   runtime runs ldconfig in %post and %postun" || bad "runtime lacks ldconfig scriptlets: $scripts"
    rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$runtime_rpm" 2>/dev/null | has '^l .*/LICENSE$' &&
      say "ok   LICENSE is a %license file" || bad "LICENSE is not marked %license"

    # Java: exact runtime dependency, Debian's Java section, a thin jar with
    # its pom, a glue without RPATH
    if [ -f "$java_deb" ] || [ -f "$java_rpm" ]; then
      [ -f "$java_deb" ] && [ -f "$java_rpm" ] || bad "the Java binding needs both a .deb and an .rpm"
      expect_eq "java Section" "$(dpkg-deb -f "$java_deb" Section)" "java"
      [[ $(dpkg-deb -f "$java_deb" Depends) == "liblazybreaker${major} (= $version-$release)"* ]] &&
        say "ok   java Depends on liblazybreaker${major} (= $version-$release)" ||
        bad "java Depends is '$(dpkg-deb -f "$java_deb" Depends)'"
      rpm -qp --requires "$java_rpm" 2>/dev/null | has -x "lazybreaker${rpmisa} = $version-$release" &&
        say "ok   java rpm requires lazybreaker${rpmisa} = $version-$release" ||
        bad "java rpm does not require lazybreaker${rpmisa} = $version-$release"
      dpkg-deb -x "$java_deb" "$ctl/java"
      jar=$ctl/java/usr/share/java/lazybreaker-$version.jar
      entries=$(unzip -Z1 "$jar")
      has -x "META-INF/maven/io.lazybreaker/lazybreaker/pom.xml" <<<"$entries" &&
        say "ok   the packaged jar has META-INF/maven/io.lazybreaker/lazybreaker/pom.xml" ||
        bad "the packaged jar lacks its pom.xml"
      ! has '^io/lazybreaker/native/' <<<"$entries" || bad "the packaged jar carries natives (the glue is in jni/)"
      glue=$(find "$ctl/java" -name liblazybreaker_jni.so)
      ! readelf -d "$glue" | has -E 'RPATH|RUNPATH' || bad "$glue has an RPATH"
      readelf -d "$glue" | has 'NEEDED.*\[liblazybreaker\.so\.'"$major"'\]' &&
        say "ok   the JNI glue links liblazybreaker.so.$major" || bad "the JNI glue does not link liblazybreaker.so.$major"
    else
      say "no Java package (binding not built)"
    fi
    ;;

  contents)
    # What each component holds, wherever the distro puts libdir.
    check_set() { # name files... : patterns every package must match exactly
      local name=$1 files=$2; shift 2
      local f p matched
      for p in "$@"; do
        grep -qE "^$p\$" <<<"$files" || bad "$name lacks a file matching $p"
      done
      while read -r f; do
        matched=0
        for p in "$@"; do [[ $f =~ ^$p$ ]] && matched=1; done
        [ $matched -eq 1 ] || bad "$name holds an unexpected file: $f"
      done <<<"$files"
      [ $errors -eq 0 ] && say "ok   $name holds exactly what it should"
    }
    lib='/usr/lib(64|/[a-z0-9_]+-linux-[a-z0-9_]+)?'
    doc='/usr/share/(doc/[^/]+/(copyright|changelog\.Debian\.gz)|licenses/[^/]+/LICENSE|lintian/overrides/[^/]+)'
    runtime_pat=("$lib/liblazybreaker\.so\.${major}" "$lib/liblazybreaker\.so\.${major}\.[0-9]+\.[0-9]+")
    dev_pat=("/usr/include/lazybreaker/lazybreaker\.h" "/usr/include/lazybreaker/lists\.h" "/usr/include/lazybreaker/fastpath\.h" "$lib/liblazybreaker\.so" "$lib/liblazybreaker\.a"
             "$lib/pkgconfig/lazybreaker\.pc" "$lib/cmake/lazybreaker/lazybreaker-config(-version)?\.cmake"
             "$lib/cmake/lazybreaker/lazybreaker-targets(-[a-z]+)?\.cmake"
             "/usr/share/doc/[^/]+/README\.md" "/usr/share/doc/[^/]+/docs/[a-z-]+\.md"
             "/usr/share/doc/[^/]+/examples/[a-z_]+\.(c|cpp)")
    optional_dev=("/usr/include/lazybreaker/[a-z_]+\.hpp")
    for pair in "$runtime_deb $runtime_rpm runtime_pat" "$dev_deb $dev_rpm dev_pat"; do
      read -r deb rpmf var <<<"$pair"
      declare -n pats=$var
      check_set "$(basename "$deb")" "$(deb_files "$deb" | grep -vE "^$doc$" | grep -vE "^${optional_dev[0]}$")" "${pats[@]}"
      check_set "$(basename "$rpmf")" "$(rpm_files "$rpmf" | grep -vE "^$doc$" | grep -vE "^${optional_dev[0]}$")" "${pats[@]}"
      unset -n pats
    done
    java_pat=("/usr/share/java/lazybreaker-${version//./\\.}\.jar" "/usr/share/java/lazybreaker\.jar"
              "$lib/jni/liblazybreaker_jni\.so")
    if [ -f "$java_deb" ]; then
      check_set "$(basename "$java_deb")" "$(deb_files "$java_deb" | grep -vE "^$doc$")" "${java_pat[@]}"
    fi
    if [ -f "$java_rpm" ]; then
      check_set "$(basename "$java_rpm")" "$(rpm_files "$java_rpm" | grep -vE "^$doc$")" "${java_pat[@]}"
    fi
    # lazybreaker-tools: the demo, cbctl and lazybreaker-agent, their manual
    # pages, cbctl's bash completion and the agent's systemd unit, sysusers.d
    # and tmpfiles.d files (cbctl and the agent only when they were built:
    # LB_CBCTL and its libraries).
    tools_pat=("/usr/bin/lazybreaker-demo" "/usr/share/man/man1/lazybreaker-demo\.1\.gz")
    if [ -f "$tools_deb" ] && deb_files "$tools_deb" | has -x /usr/bin/cbctl; then
      tools_pat+=("/usr/bin/cbctl" "/usr/share/man/man1/cbctl\.1\.gz" "/usr/share/bash-completion/completions/cbctl" "/usr/share/lazybreaker/grafana/lazybreaker\.json"
                  "/usr/bin/lazybreaker-agent" "/usr/share/man/man1/lazybreaker-agent\.1\.gz"
                  "/usr/lib/systemd/system/lazybreaker-agent\.service"
                  "/usr/lib/sysusers\.d/lazybreaker\.conf" "/usr/lib/tmpfiles\.d/lazybreaker\.conf")
    else
      say "no cbctl in lazybreaker-tools (built without it: LB_CBCTL off or its libraries missing)"
    fi
    [ -f "$tools_deb" ] && check_set "$(basename "$tools_deb")" "$(deb_files "$tools_deb" | grep -vE "^$doc$")" "${tools_pat[@]}"
    [ -f "$tools_rpm" ] && check_set "$(basename "$tools_rpm")" "$(rpm_files "$tools_rpm" | grep -vE "^$doc$")" "${tools_pat[@]}"
    pairs=("$runtime_deb $runtime_rpm" "$dev_deb $dev_rpm")
    if [ -f "$java_deb" ] || [ -f "$java_rpm" ]; then
      pairs+=("$java_deb $java_rpm")
    fi
    if [ -f "$tools_deb" ] || [ -f "$tools_rpm" ]; then
      pairs+=("$tools_deb $tools_rpm")
    else
      say "no tools package (no tool to install yet)"
    fi
    # The Lua module (when the Lua binding was built): each interpreter's C
    # module and lazybreaker.lua, where Debian's and Fedora's Lua 5.4 and
    # LuaJIT look, and nothing else.
    if [ -f "$lua_deb" ] || [ -f "$lua_rpm" ]; then
      lua_pat=("$lib/lua/5\.(1|4)/lazybreaker_core\.so" "/usr/share/lua/5\.(1|4)/lazybreaker\.lua")
      [ -f "$lua_deb" ] && check_set "$(basename "$lua_deb")" "$(deb_files "$lua_deb" | grep -vE "^$doc$")" "${lua_pat[@]}"
      [ -f "$lua_rpm" ] && check_set "$(basename "$lua_rpm")" "$(rpm_files "$lua_rpm" | grep -vE "^$doc$")" "${lua_pat[@]}"
      pairs+=("$lua_deb $lua_rpm")
    else
      say "no lua-lazybreaker package (Lua binding not built)"
    fi
    # The Python package: the package directory where each distro's
    # python3 looks (Debian: dist-packages for every 3.x; RPM: the
    # interpreter's site-packages under lib64), and nothing else.
    if [ -f "$python_deb" ] || [ -f "$python_rpm" ]; then
      py_pkg='(/usr/lib/python3/dist-packages|/usr/lib(64)?/python3\.[0-9]+/site-packages)/lazybreaker'
      py_pat=("$py_pkg/(__init__|_breaker|_config|_errors|_registry|_shed|_upstreams|_watch|aiohttp|asgi|circuitbreaker|http|httpx|prometheus|requests|wsgi|_core)\.py"
              "$py_pkg/_core\.pyi"
              "$py_pkg/py\.typed" "$py_pkg/_core\.cpython-3[0-9]+-[a-z0-9_]+-linux-gnu\.so")
      [ -f "$python_deb" ] && check_set "$(basename "$python_deb")" "$(deb_files "$python_deb" | grep -vE "^$doc$")" "${py_pat[@]}"
      [ -f "$python_rpm" ] && check_set "$(basename "$python_rpm")" "$(rpm_files "$python_rpm" | grep -vE "^$doc$")" "${py_pat[@]}"
      pairs+=("$python_deb $python_rpm")
    else
      say "no python3-lazybreaker package (Python binding not built)"
    fi
    # The PHP extension (when the PHP binding was built): the extension where
    # each distro's PHP looks (Debian: php-config's extension dir; Fedora:
    # <libdir>/php/modules), its ini (Debian: mods-available, enabled by
    # the postinst; Fedora: /etc/php.d), the classes under /usr/share/php.
    php_classes="/usr/share/php/LazyBreaker/([A-Za-z]+/)?[A-Za-z]+\.php"
    php_deb_pat=("/usr/lib/php/[0-9]+/lazybreaker\.so" "/etc/php/[0-9.]+/mods-available/lazybreaker\.ini" "$php_classes")
    php_rpm_pat=("$lib/php/modules/lazybreaker\.so" "/etc/php\.d/40-lazybreaker\.ini" "$php_classes")
    if [ -f "$php_deb" ] || [ -f "$php_rpm" ]; then
      [ -f "$php_deb" ] && check_set "$(basename "$php_deb")" "$(deb_files "$php_deb" | grep -vE "^$doc$")" "${php_deb_pat[@]}"
      [ -f "$php_rpm" ] && check_set "$(basename "$php_rpm")" "$(rpm_files "$php_rpm" | grep -vE "^$doc$")" "${php_rpm_pat[@]}"
      pairs+=("$php_deb $php_rpm")
    else
      say "no php-lazybreaker package (PHP binding not built)"
    fi
    # The .rpm holds the same files as the .deb, libdir and licence files
    # aside (Debian: /usr/lib/<multiarch>, doc/<pkg>/copyright; RPM:
    # /usr/lib64, licenses/<pkg>/LICENSE).
    normalise() { sed -E -e "s#^(/usr/lib/python3/dist-packages|/usr/lib(64)?/python3\.[0-9]+/site-packages)/#PYTHONDIR/#" -e "s#^/usr/lib/php/[0-9]+/#PHPEXT/#" -e "s#^$lib/php/modules/#PHPEXT/#" \
                        -e "s#^/etc/php/[0-9.]+/mods-available/lazybreaker\.ini\$#PHPINI#" -e "s#^/etc/php\.d/40-lazybreaker\.ini\$#PHPINI#" |
                  sed -E "s#^$lib/#LIBDIR/#" | grep -vE "^$doc$" | sed -E "s#^/usr/share/doc/[^/]+/#DOCDIR/#" | LC_ALL=C sort; }
    for pair in "${pairs[@]}"; do
      read -r deb rpmf <<<"$pair"
      [ -f "$deb" ] && [ -f "$rpmf" ] || { bad "$(basename "$deb") and $(basename "$rpmf") must both exist"; continue; }
      if d=$(diff <(deb_files "$deb" | normalise) <(rpm_files "$rpmf" | normalise)); then
        say "ok   $(basename "$rpmf") holds the files of $(basename "$deb")"
      else
        bad "$(basename "$rpmf") and $(basename "$deb") differ (< deb, > rpm):"$'\n'"$d"
      fi
      deb_files "$deb" | has "^/usr/share/doc/$(dpkg-deb -f "$deb" Package)/copyright$" || bad "$(basename "$deb") lacks its copyright file"
      rpm_files "$rpmf" | has "^/usr/share/licenses/.*/LICENSE$" || bad "$(basename "$rpmf") lacks its LICENSE"
    done
    ;;

  *)
    echo "unknown mode $mode" >&2; exit 2 ;;
esac

if [ $errors -ne 0 ]; then
  echo "check[$mode]: $errors problem(s)" >&2
  exit 1
fi
say "passed"
