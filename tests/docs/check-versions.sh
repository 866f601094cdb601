#!/usr/bin/env bash
# The version is written once, in include/lazybreaker/lazybreaker.h
# (CB_VERSION_MAJOR, _MINOR, _PATCH; CMake reads it there too). A document
# that names a built artifact at another version (lazybreaker-1.1.0.jar,
# liblazybreaker.so.1.2.0, a .deb or .rpm, the NuGet package, the Go
# module's tag, Maven coordinates, the rockspec) is a command that fails
# when copied, so it fails here instead:
#
#   check-versions.sh SOURCE_DIR     every document of the tree and the rockspec
#   check-versions.sh --self-test    the checker against tests/docs/fixtures
#
# Documents: every tracked *.md and manual page (git ls-files; without git,
# every one outside build folders). A manual page's .TH line names the
# release as "lazybreaker MAJOR.MINOR", which must be the header's too. Versions that are not the library's
# (xunit 2.9.3, "since 1.1", LAZYBREAKER_1.1) are not artifacts and pass;
# a document that needs no particular version says <version> or a glob, or
# 0.0.0 where a tool wants some version and ignores it (Go's require of a
# module that a replace directive points at a checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# name: a regex (ERE, case-insensitive) whose match contains the artifact's
# version as its only MAJOR.MINOR.PATCH.
V='[0-9]+\.[0-9]+\.[0-9]+'
patterns=(
  # files: lazybreaker-V.jar, liblazybreaker1_V-1_amd64.deb,
  # lazybreaker-devel-V-1.x86_64.rpm, LazyBreaker.V.nupkg,
  # lazybreaker-V-1.rockspec, NuGet's lazybreaker/V/, io.lazybreaker:lazybreaker:V
  "lazybreaker[a-z0-9-]*[-_./:]v?$V"
  # NuGet: dotnet add package LazyBreaker --version V; <PackageReference Include="LazyBreaker" Version="V"
  "lazybreaker\"?[[:space:]]+--version[[:space:]=]+\[?$V"
  "include=\"lazybreaker\"[[:space:]]+version=\"\[?$V"
  # Go: bindings/go@vV, the tag bindings/go/vV, require .../bindings/go vV
  "bindings/go[@/[:space:]]v$V"
)
# The shared library by its file names: liblazybreaker.so.MAJOR (the SONAME)
# or liblazybreaker.so.MAJOR.MINOR.PATCH (the real file).
so_pattern='liblazybreaker(_[a-z]+)?\.so\.[0-9]+(\.[0-9]+)*'

header_version() { # SOURCE_DIR
  sed -n 's/^#define CB_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
    "$1/include/lazybreaker/lazybreaker.h" | paste -sd.
}

documents() { # SOURCE_DIR: paths relative to it, one a line
  if git -C "$1" rev-parse --show-toplevel >/dev/null 2>&1 &&
     [ "$(cd "$(git -C "$1" rev-parse --show-toplevel)" && pwd)" = "$(cd "$1" && pwd)" ]; then
    git -C "$1" ls-files '*.md' '*.[1-8]'
  else
    (cd "$1" && find . -path './build*' -prune -o -type f \( -name '*.md' -o -name '*.[1-8]' \) -print |
      sed 's#^\./##')
  fi
}

check() { # SOURCE_DIR: prints FILE:LINE: findings, returns 1 if any
  local src=$1 want major found=0 f
  want=$(header_version "$src")
  [ -n "$want" ] || { echo "cannot read CB_VERSION_* from $src/include/lazybreaker/lazybreaker.h" >&2; return 2; }
  major=${want%%.*}
  while IFS= read -r f; do
    [ -f "$src/$f" ] || continue
    local p hit line text got
    for p in "${patterns[@]}"; do
      while IFS= read -r hit; do
        line=${hit%%:*} text=${hit#*:}
        got=$(grep -oE "$V" <<<"$text" | head -n1)
        if [ "$got" != "$want" ] && [ "$got" != 0.0.0 ]; then
          echo "$f:$line: '$text' names version $got; the header (CB_VERSION_*) says $want: write $want, <version> or a glob"
          found=1
        fi
      done < <(grep -noiE "$p" "$src/$f" || true)
    done
    while IFS= read -r hit; do
      line=${hit%%:*} text=${hit#*:}
      got=${text##*.so.}
      if [ "$got" != "$major" ] && [ "$got" != "$want" ]; then
        echo "$f:$line: '$text' is not a file of this library (liblazybreaker.so.$major, liblazybreaker.so.$want)"
        found=1
      fi
    done < <(grep -noE "$so_pattern" "$src/$f" || true)
    case $f in
      *.[1-8])
        got=$(sed -n '1,/^\.TH/s/^\.TH .*"lazybreaker \([0-9.]*\)".*/\1/p' "$src/$f")
        if [ -n "$got" ] && [ "$got" != "${want%.*}" ] && [ "$got" != "$want" ]; then
          echo "$f: its .TH line names lazybreaker '$got'; the header says ${want%.*} (\"lazybreaker ${want%.*}\")"
          found=1
        fi
        ;;
    esac
  done < <(documents "$src")

  # The rock: LuaRocks wants the version in the file's name and inside it.
  local rocks=("$src"/packaging/lua/lazybreaker-*.rockspec) r base ver tag
  if [ ! -f "${rocks[0]}" ] || [ ${#rocks[@]} -ne 1 ]; then
    echo "packaging/lua: want exactly one lazybreaker-*.rockspec, found ${#rocks[@]}"
    found=1
  else
    r=${rocks[0]} base=$(basename "$r")
    ver=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$r")
    tag=$(sed -n 's/^ *tag = "\(.*\)",$/\1/p' "$r")
    case $base in
      "lazybreaker-$want-"*.rockspec) ;;
      *) echo "packaging/lua/$base: the header says $want (git mv it to lazybreaker-$want-1.rockspec)"; found=1 ;;
    esac
    [ "$base" = "lazybreaker-$ver.rockspec" ] ||
      { echo "packaging/lua/$base: its version is \"$ver\"; LuaRocks wants the file's name"; found=1; }
    [ "$tag" = "v$want" ] ||
      { echo "packaging/lua/$base: its source tag is \"$tag\"; the header says v$want"; found=1; }
  fi
  return $found
}

# The checker finds every artifact of fixtures/artifacts.md at a wrong
# version, none at the right one, and nothing in fixtures/not-artifacts.md
# (versions of other things) at any version.
self_test() {
  local t good bad out status=0 n want_n rocks
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  good=7.8.9 bad=7.8.8
  mkdir -p "$t/include/lazybreaker" "$t/docs" "$t/packaging/lua" "$t/build/docs"
  printf '#define CB_VERSION_MAJOR 7\n#define CB_VERSION_MINOR 8\n#define CB_VERSION_PATCH 9\n' \
    >"$t/include/lazybreaker/lazybreaker.h"
  rockspec() { # VERSION TAG
    printf 'package = "lazybreaker"\nversion = "%s-1"\nsource = {\n  tag = "%s",\n}\n' "$1" "$2" \
      >"$t/packaging/lua/lazybreaker-$1-1.rockspec"
  }
  rockspec $good v$good
  man() { # FILE RELEASE
    printf '.TH TOOL 1 "2026-12-02" "lazybreaker %s" "User Commands"\n.SH NAME\ntool\n' "$2" >"$t/$1"
  }
  man docs/tool.1 7.8
  sed "s/@V@/$good/g; s/@MAJOR@/7/g" "$here/fixtures/artifacts.md" >"$t/README.md"
  sed "s/@V@/$bad/g; s/@MAJOR@/7/g" "$here/fixtures/not-artifacts.md" >"$t/docs/other.md"
  # A build folder's copies (an older package unpacked by a test) are not documents.
  sed "s/@V@/$bad/g; s/@MAJOR@/7/g" "$here/fixtures/artifacts.md" >"$t/build/docs/old.md"
  if out=$(check "$t"); then
    say "ok   the right version and other things' versions pass"
  else
    echo "self-test: FAIL: findings in a tree that has none:" >&2; echo "$out" >&2; status=1
  fi

  sed "s/@V@/$bad/g; s/@MAJOR@/6/g" "$here/fixtures/artifacts.md" >"$t/docs/drift.md"
  out=$(check "$t" || true)
  want_n=$(grep -c . "$t/docs/drift.md")
  n=$(grep -c '^docs/drift.md:' <<<"$out" || true)
  # every line of drift.md reported, and nothing else
  if [ "$n" -eq "$want_n" ] && [ "$(grep -vc '^docs/drift.md:' <<<"$out" || true)" -eq 0 ] &&
     [ "$(grep -o '^docs/drift.md:[0-9]*' <<<"$out" | sort -u | wc -l)" -eq "$want_n" ]; then
    say "ok   each of the $want_n artifacts at $bad is reported"
  else
    echo "self-test: FAIL: want each of the $want_n lines of drift.md reported once:" >&2
    echo "$out" >&2; status=1
  fi
  rm "$t/docs/drift.md"

  man docs/tool.1 7.7
  out=$(check "$t" || true)
  grep -q "^docs/tool.1: its .TH line names lazybreaker '7.7'" <<<"$out" &&
    say "ok   a manual page of lazybreaker 7.7 is reported" ||
    { echo "self-test: FAIL: a manual page of 7.7 is not reported: $out" >&2; status=1; }
  man docs/tool.1 7.8

  rm "$t"/packaging/lua/*.rockspec && rockspec $bad v$bad
  out=$(check "$t" || true)
  grep -q "lazybreaker-$bad-1.rockspec: the header says $good" <<<"$out" &&
    grep -q "source tag is \"v$bad\"" <<<"$out" && say "ok   a rockspec of $bad is reported" ||
    { echo "self-test: FAIL: a rockspec of $bad is not reported: $out" >&2; status=1; }
  rm "$t"/packaging/lua/*.rockspec && rockspec $good v$bad
  out=$(check "$t" || true)
  grep -q "source tag is \"v$bad\"" <<<"$out" && say "ok   a rockspec tagged v$bad is reported" ||
    { echo "self-test: FAIL: a rockspec tagged v$bad is not reported: $out" >&2; status=1; }
  return $status
}

say() { echo "check-versions: $*"; }
case ${1:?usage: check-versions.sh SOURCE_DIR | --self-test} in
  --self-test) self_test ;;
  *)
    if out=$(check "$1"); then
      say "every document names the header's version, $(header_version "$1"), or none"
    else
      echo "$out" >&2
      exit 1
    fi
    ;;
esac
