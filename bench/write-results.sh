#!/usr/bin/env bash
# Writes bench/RESULTS.md from the benchmarks' own tables, as they print
# them: the machine they ran on (CPU, cores, memory, kernel, compiler, build
# type, the load average before and after), then each benchmark under a
# heading with the command that runs it again. A figure quoted anywhere in
# the documents comes from this file, so it is rewritten whole, never edited.
#
#   write-results.sh BUILD_DIR [OUT]   OUT defaults to bench/RESULTS.md
#
# BUILD_DIR is a configured build folder with -DLB_BUILD_BENCH=ON (make
# bench passes build/); a release build gives the figures worth keeping.
# The C++ programs are built first if needed. A binding's benchmark runs
# when its target exists in BUILD_DIR (its toolchain was found at
# configure); otherwise its section says it was skipped, and why.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 BUILD_DIR [OUT]" >&2; exit 2; }
build=$(cd "$1" 2>/dev/null && pwd) || { echo "write-results: $1: no such build folder" >&2; exit 2; }
out=${2:-$source_dir/bench/RESULTS.md}
cache=$build/CMakeCache.txt
[ -f "$cache" ] || { echo "write-results: $build is not a configured CMake build folder (no CMakeCache.txt)" >&2; exit 2; }

cache_value() { # NAME: its value in the build folder's CMakeCache.txt
  sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n1
}
[ "$(cache_value LB_BUILD_BENCH)" = ON ] ||
  { echo "write-results: $build was configured without -DLB_BUILD_BENCH=ON" >&2; exit 2; }

# The commands are written as a reader would type them: build/... when the
# folder is inside the checkout, its full path otherwise.
case $build/ in
  "$source_dir"/*) shown=${build#"$source_dir"/} ;;
  *) shown=$build ;;
esac

jobs=${JOBS:-$(nproc)}
cmake --build "$build" -j "$jobs" --target lazybreaker-bench lazybreaker-icount lazybreaker-scale lazybreaker-growth

generator=$(cache_value CMAKE_GENERATOR)
if [ "$generator" = Ninja ]; then
  targets=$(cmake --build "$build" -- -t targets all 2>/dev/null | sed 's/:.*//')
else
  targets=$(cmake --build "$build" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
fi
has_target() { grep -qx "$1" <<<"$targets"; }

body=$(mktemp)
trap 'rm -f "$body" "$body.run"' EXIT

# CMake's own lines around a custom target's output (progress, "Built
# target", the dependency scan) are not the benchmark's, and a terminal's
# colours (Google Benchmark colours its table even into a pipe) are no text.
strip_build_lines() {
  sed 's/\x1b\[[0-9;]*m//g' |
    grep -vE '^(\[ *[0-9]+%\] |Built target |Scanning dependencies |Consolidate compiler generated dependencies )' || true
}

failed=0
section() { # TITLE COMMAND_SHOWN COMMAND...: runs COMMAND, appends its output under TITLE
  local title=$1 shown_cmd=$2 start status seconds
  shift 2
  echo "write-results: $title: $shown_cmd" >&2
  start=$(date +%s)
  # Shown as it runs (on standard error), and kept for the file.
  set +e
  "$@" 2>&1 | tee "$body.run" >&2
  status=${PIPESTATUS[0]}
  set -e
  seconds=$(($(date +%s) - start))
  [ "$status" -eq 0 ] || failed=$((failed + 1))
  {
    printf '## %s\n\n    %s\n\n' "$title" "$shown_cmd"
    if [ $status -ne 0 ]; then
      printf 'It failed (exit status %d) after %d s; its output:\n\n' "$status" "$seconds"
    else
      printf 'Ran for %d s.\n\n' "$seconds"
    fi
    printf '```text\n'
    strip_build_lines <"$body.run"
    printf '```\n\n'
  } >>"$body"
}

skipped() { # TITLE WHY
  echo "write-results: SKIPPED $1: $2" >&2
  printf '## %s\n\nSkipped: %s.\n\n' "$1" "$2" >>"$body"
}

# A binding's benchmark target, or why it did not run: switched off, or
# named in skipped-bindings.txt (the configure's record of missing
# toolchains, one "NAME: why" a line), or else NEEDS.
binding_section() { # TITLE TARGET OPTION SKIP_NAME NEEDS
  local title=$1 target=$2 option=$3 skip_name=$4 needs=$5 why
  if has_target "$target"; then
    section "$title" "cmake --build $shown --target $target" \
      bash -c 'cmake --build "$1" --target "$2" -- "${@:3}"' _ "$build" "$target" \
      $([ "$generator" = Ninja ] || echo --no-print-directory)
    return
  fi
  if [ "$(cache_value "$option")" = OFF ]; then
    why="this build folder was configured with -D$option=OFF"
  elif [ -s "$build/skipped-bindings.txt" ] &&
       why=$(grep -F "$skip_name: " "$build/skipped-bindings.txt" | head -n1) && [ -n "$why" ]; then
    why="the configure skipped it: $why"
  else
    why="the target $target is not in this build folder ($needs)"
  fi
  skipped "$title" "$why"
}

machine() {
  local cpu cores mem kernel compiler cxx
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
  cores=$(nproc)
  mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1024 / 1024 }' /proc/meminfo)
  kernel=$(uname -srm)
  cxx=$(cache_value CMAKE_CXX_COMPILER)
  compiler=$("$cxx" --version 2>/dev/null | head -n1)
  printf -- '- CPU: %s\n- Cores: %s (online, as `nproc` counts them)\n- Memory: %s\n' "${cpu:-unknown}" "$cores" "$mem"
  printf -- '- Kernel: %s\n- Compiler: %s (%s)\n- Build type: %s\n' "$kernel" "${compiler:-unknown}" "$cxx" \
    "$(cache_value CMAKE_BUILD_TYPE)"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

date_run=$(date -u '+%Y-%m-%d %H:%M UTC')
load_before=$(load)

bin=$build/bench
section "cb_allow + cb_done beside the floor and the baselines (Google Benchmark)" \
  "$shown/bench/lazybreaker-bench --benchmark_enable_random_interleaving=true" \
  "$bin/lazybreaker-bench" --benchmark_enable_random_interleaving=true
if command -v valgrind >/dev/null; then
  section "Instructions per call (callgrind)" \
    "bench/callgrind-count.sh $shown/bench/lazybreaker-icount" \
    "$here/callgrind-count.sh" "$bin/lazybreaker-icount"
else
  skipped "Instructions per call (callgrind)" "valgrind is not installed (group test of packaging/install-deps.sh)"
fi
section "A million consecutive breakers: footprint, create and destroy" \
  "$shown/bench/lazybreaker-scale 1000000 consecutive" "$bin/lazybreaker-scale" 1000000 consecutive
section "A million count-window breakers: footprint, create and destroy" \
  "$shown/bench/lazybreaker-scale 1000000 count_window" "$bin/lazybreaker-scale" 1000000 count_window
section "The quiet pair on a random breaker out of N" \
  "$shown/bench/lazybreaker-growth 1000000" "$bin/lazybreaker-growth" 1000000

binding_section "Lua and LuaJIT (bench/lua)" bench-lua LB_LUA Lua "cmake/lua.cmake"
binding_section "Python (bench/python)" bench-python LB_PYTHON Python "cmake/python.cmake"
binding_section "PHP (bench/php)" bench-php LB_PHP PHP "cmake/php.cmake"
binding_section "Java (bench/java)" bench-java LB_JAVA Java "cmake/java.cmake"
binding_section "C# (bench/csharp)" bench-csharp LB_CSHARP CSharp "cmake/csharp.cmake"
binding_section "Go (bench/go)" bench-go LB_GO Go "cmake/go.cmake"
binding_section "Node.js against opossum and cockatiel (bench/node)" bench-node LB_NODE Node \
  "cmake/node.cmake, bench/node/CMakeLists.txt"
binding_section "Fleet: the agent against Redis (bench/fleet)" bench-fleet LB_CBCTL "cbctl (tool)" \
  "it needs lazybreaker-agent, redis-server and python3: bench/CMakeLists.txt, tests/fleet/CMakeLists.txt"

load_after=$(load)
{
  printf '# Benchmark results\n\n'
  printf 'Written by `bench/write-results.sh` (`make bench`) from the tables the\n'
  printf 'benchmarks print; rerun it rather than edit this file. Each section gives\n'
  printf 'the command that reproduces it.\n\n'
  printf -- '- Date: %s\n' "$date_run"
  machine
  printf -- '- Build folder: %s\n' "$shown"
  printf -- '- Load average (1, 5, 15 min): %s before, %s after\n\n' "$load_before" "$load_after"
  cat "$body"
} >"$out.tmp"
# No trailing blank line at the end of the file.
sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$out.tmp" >"$out"
rm -f "$out.tmp"
echo "write-results: wrote $out" >&2
if [ "$failed" -gt 0 ]; then
  echo "write-results: $failed benchmark(s) failed: their sections say how" >&2
  exit 1
fi
