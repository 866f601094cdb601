#!/usr/bin/env bash
# tidy.sh CLANG_TIDY SOURCE_DIR BUILD_DIR [UNBUILT_DIR...]
#         [--cross FILE... --flags FLAG...]: the size gate
# (cmake/tidy.cmake). clang-tidy with SOURCE_DIR/.clang-tidy over every .cpp
# in src/ and tools/ (but the UNBUILT_DIRs, relative to SOURCE_DIR), two
# files at a time, and the bindings' hand-written C (bindings/*/*.c and *.h
# through their SWIG wrappers, bindings/*/src/*.c by their own compile
# commands), with BUILD_DIR's compile_commands.json; the headers of
# src/ and tools/ they include are checked too. The --cross FILEs (relative
# to SOURCE_DIR, among the UNBUILT ones: another platform's) are checked
# with the compiler FLAGs given instead of a compile command. Fails on any
# diagnostic, on a file the build does not compile (no compile command: not
# checkable), and on a clang-tidy that does not know both checks (it would
# pass everything).
set -euo pipefail
tidy=$1 src=$2 build=$3
shift 3
unbuilt=() cross=() cross_flags=()
into=unbuilt
for arg in "$@"; do
  case $into/$arg in
    */--cross) into=cross ;;
    cross/--flags) into=flags ;;
    unbuilt/*) unbuilt+=("$arg") ;;
    cross/*) cross+=("$arg") ;;
    flags/*) cross_flags+=("$arg") ;;
  esac
done
set -- "${unbuilt[@]}"
config=$src/.clang-tidy
db=$build/compile_commands.json
[ -f "$config" ] || { echo "FAIL: no $config" >&2; exit 1; }
[ -f "$db" ] || { echo "FAIL: no $db (CMAKE_EXPORT_COMPILE_COMMANDS)" >&2; exit 1; }

checks=$("$tidy" --config-file="$config" --list-checks)
for check in readability-function-size readability-function-cognitive-complexity; do
  grep -qw -- "$check" <<<"$checks" || {
    echo "FAIL: $("$tidy" --version | grep -i version | head -n1) does not run $check" >&2
    exit 1
  }
done

cd "$src"
prune=()
for dir in "$@"; do prune+=(-path "$dir" -prune -o); done
mapfile -t files < <(find src tools "${prune[@]}" -name '*.cpp' -print | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no .cpp under src/ and tools/" >&2; exit 1; }
# A binding's C compiled on its own (Node's addon) is checked as src/ is,
# when this build compiles it.
while IFS= read -r f; do
  grep -qF "\"file\": \"$src/$f\"" "$db" && files+=("$f")
done < <(find bindings -path bindings/go/internal -prune -o -mindepth 2 -path 'bindings/*/src/*.c' -print | LC_ALL=C sort)
for f in "${files[@]}"; do
  grep -qF "\"file\": \"$src/$f\"" "$db" || {
    echo "FAIL: $f has no compile command in $db: the build does not compile it, so it cannot be checked" >&2
    exit 1
  }
done

# Only the repository's own headers, whatever the path of the checkout.
header_filter="^$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$src")/(src|tools)/"
logs=$(mktemp -d "${TMPDIR:-/tmp}/tidy.XXXXXX")
trap 'rm -rf "$logs"' EXIT
: >"$logs/failed"
start=$SECONDS
# One log per file, so that two files' diagnostics never interleave.
printf '%s\n' "${files[@]}" | xargs -P2 -I{} sh -c '
  log="$1/$(printf %s "$5" | tr / _).log"
  "$2" --quiet --config-file="$3" -p "$4" --header-filter="$6" "$7/$5" >"$log" 2>&1 || echo "$5" >>"$1/failed"
' sh "$logs" "$tidy" "$config" "$build" {} "$header_filter" "$src" || true
for f in "${cross[@]}"; do
  "$tidy" --quiet --config-file="$config" --header-filter="$header_filter" "$src/$f" -- \
    "${cross_flags[@]}" >"$logs/$(printf %s "$f" | tr / _).log" 2>&1 || echo "$f" >>"$logs/failed"
  files+=("$f")
done
# The bindings' hand-written C (Lua's objects, Python's fastpath.c) is
# compiled inside their SWIG wrappers, not on its own: it is checked through
# the wrapper's compile command, with diagnostics kept to its own files
# (--line-filter), since SWIG's generated functions are not ours to size.
for dir in bindings/*/; do
  dir=${dir%/}
  mapfile -t own < <(find "$dir" -maxdepth 1 \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
  [ ${#own[@]} -gt 0 ] || continue
  wrapper=$(grep -oE "\"file\": \"[^\"]*/$dir/[^\"]*_wrap\.c\"" "$db" | head -n1 | sed -E 's/^"file": "(.*)"$/\1/' || true)
  if [ -z "$wrapper" ]; then
    echo "tidy: $dir not checked: its binding is not built here"
    continue
  fi
  filter=$(printf '{"name":"%s"},' "${own[@]/#/$src/}")
  log="$logs/$(printf %s "$dir" | tr / _).log"
  "$tidy" --quiet --config-file="$config" -p "$build" --header-filter="^$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$src")/$dir/" \
    --line-filter="[${filter%,}]" "$wrapper" >"$log" 2>&1 || echo "$dir" >>"$logs/failed"
  files+=("$dir")
done
# Without clang-tidy's count of the compiler warnings it filtered out.
for f in "${files[@]}"; do
  grep -Ev '^[0-9]+ warnings? (generated|treated as errors?)\.$' "$logs/$(printf %s "$f" | tr / _).log" || true
done

# A header's diagnostic comes once per file that includes it: counted once.
cat "$logs"/*.log | grep -E '^[^ ].*: (warning|error): ' | sort -u >"$logs/found" || true
found=$(wc -l <"$logs/found")
failed=$(wc -l <"$logs/failed")
if [ "$found" -gt 0 ]; then
  echo
  echo "tidy: over the limits of $config:"
  sed 's/^/  /' "$logs/found"
fi
echo "tidy: ${#files[@]} files in $((SECONDS - start)) s: $found diagnostics, clang-tidy failed on $failed files"
[ "$found" -eq 0 ] && [ "$failed" -eq 0 ]
