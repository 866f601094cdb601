#!/usr/bin/env bash
# Installs, from Debian's archive, whatever the build and the tests need and
# this machine lacks. Run by `make`; safe to run again (it installs nothing
# when all is there).
#
#   install-deps.sh [GROUP...]    the packages of these groups (below)
#   install-deps.sh [all]         every group: what `make test` needs
#
# The packages come in groups by purpose, so that a target asks only for
# what it builds: `make demo` for the demo group alone (a first run in
# seconds), `make test` and `make build` for all of them.
set -euo pipefail

declare -A groups
order=()
group() { # NAME PACKAGE...
  order+=("$1")
  groups[$1]="${*:2}"
}

# demo: the library and the demo (`make demo`): a C++ toolchain, CMake, make,
# and pkg-config (cmake/Install.cmake writes lazybreaker.pc, and the install
# docs' commands read it)
group demo cmake g++ make pkg-config
# test: the C and C++ suites (doctest), the benchmarks (Google Benchmark),
# the exact instruction count (valgrind's callgrind) and `file` for the
# tests that look at what was built
group test doctest-dev libbenchmark-dev valgrind file
# packaging: the ABI check (abigail-tools) and the .deb and .rpm packages
# with their linters (label packaging, `make package`)
group packaging abigail-tools lintian rpm rpmlint dpkg-dev fakeroot unzip
# the language bindings: SWIG for all but Go (whose SWIG output is committed;
# SWIG checks that it is current); Java: a JDK and JUnit 5 (Debian's jars
# only, no Maven Central), OkHttp and the javax servlet API for the
# integrations jar, Jetty 9.4 to test its servlet filter in
group java swig default-jdk-headless junit5 libokhttp-java libservlet-api-java libjetty9-java
# Lua: both interpreters the module is built and tested for, and their
# headers (the module links neither library: the interpreter provides it);
# and LuaRocks, to build the rock from packaging/lua/*.rockspec in a test
group lua swig lua5.4 liblua5.4-dev luajit libluajit-5.1-dev luarocks
# Go: Debian's toolchain (1.19), the standard library only, no module proxy;
# the modules beside the package (bindings/go/lbprometheus, lbgrpc) build
# against Debian's Go packages
group go swig golang-go golang-github-prometheus-client-golang-dev golang-google-grpc-dev
# node: Debian's Node.js, its Node-API headers (node_api.h) and npm, only
# when no node is on the PATH (a Node.js installed otherwise brings its own)
group node $(command -v node >/dev/null || echo nodejs libnode-dev npm)
# Python: the module for Debian's CPython 3.11 (its headers), pytest, the
# type checker, gunicorn for the pre-fork test, the circuitbreaker package
# for the compatibility shim's tests and the bench, an offline wheel build
# (python3-build, setuptools, wheel) tried in a fresh venv, and the
# frameworks the HTTP and metrics integrations wrap (httpx, requests,
# aiohttp; Starlette for the ASGI test; prometheus_client)
group python swig python3 python3-dev python3-pytest mypy gunicorn python3-circuitbreaker \
  python3-build python3-setuptools python3-wheel python3-venv \
  python3-httpx python3-requests python3-aiohttp python3-starlette python3-prometheus-client
# PHP 8.2: the extension's headers and php-config, the interpreters it is
# tested in (cli; fpm behind nginx in the PHP-FPM test), PHPUnit; PSR-7
# and PSR-15's interfaces (php8.2-psr) with Nyholm's PSR-7 for the
# middleware's test, Guzzle for the outgoing middleware; bench/php's
# competitors (pdo_sqlite, php-redis with a redis-server) and ab
group php swig php8.2-dev php8.2-cli php8.2-fpm nginx-light phpunit \
  php8.2-psr php-nyholm-psr7 php-guzzlehttp-guzzle php-guzzlehttp-psr7 \
  php8.2-sqlite3 php8.2-intl php-redis redis-server apache2-utils
# C#: SWIG only from here: the .NET SDK (8 or later, `dotnet` on PATH) is
# not in Debian's archive; the project's machines come with it.
# cmake/csharp.cmake reports it missing (fatally under CI=true); NuGet
# packages are restored at exact versions by dotnet itself.
group csharp swig
# cbctl (lazybreaker-tools): its arguments, its /metrics server, and its
# tests (watch in tmux, a real Prometheus scraping serve, curl)
group cbctl libcli11-dev libcpp-httplib-dev prometheus tmux curl
# the fleet (lazybreaker-agent, `cbctl fleet`): hiredis 0.14 and OpenSSL
# (TLS to Redis), and a real Redis 7 for their tests (label fleet) and
# bench, driven by python3; the TLS test makes its certificates with the
# openssl command and an expired one under faketime; Prometheus scraping
# the agents for the dashboard's fleet panels; systemd's tools and strace
# check the agent's unit (fleet.systemd_unit)
group fleet libhiredis-dev libssl-dev redis-server redis-tools python3 openssl faketime prometheus systemd strace
# cbctl serve's page (label dashboard): a real headless Chromium, driven
# through its DevTools protocol by /usr/bin/python3 with python3-websocket;
# (axe-core for the accessibility check comes from npm, whichever node is
# installed: the test skips loudly without it, fails with CI=true)
group dashboard chromium python3-websocket
# fuzzing (tests/fuzz): clang, and the libFuzzer runtime, which is only a
# recommendation of clang; stress-ng to load the machine while the suite runs
group fuzz clang libclang-rt-14-dev stress-ng
# the size gate over src/, tools/ and the bindings' C (.clang-tidy, label
# tidy), and the format check (.clang-format, label format)
group tidy clang-tidy clang-format
# Windows (make windows, label windows): mingw-w64's GCC for
# x86_64-w64-mingw32 in its -posix variant (std::thread and std::mutex;
# the -win32 one has neither), its objdump for the export/import tests,
# and Wine to run the Windows tests on this machine
group windows g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64 \
  wine wine64

wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(all)
packages=()
for g in "${wanted[@]}"; do
  if [ "$g" = all ]; then
    for a in "${order[@]}"; do packages+=(${groups[$a]}); done
  elif [ -n "${groups[$g]+set}" ]; then
    packages+=(${groups[$g]})
  else
    echo "install-deps: no group '$g' (groups: ${order[*]} all)" >&2
    exit 2
  fi
done

missing=()
declare -A seen
for p in "${packages[@]}"; do
  [ -n "${seen[$p]+set}" ] && continue
  seen[$p]=1
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -qq
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends "${missing[@]}"
