#!/usr/bin/env bash
# The user documents (README.md, CHANGELOG.md, docs/*.md) are a reference
# for people who use the library: they say what it does, not how its work
# was planned. A reader has no access to the project's issue tracker, so
# "issue 24's row", "the targets of the issue" or "missed" name things the
# reader cannot look up and that go stale the day the work lands. Such a
# line fails here instead:
#
#   check-no-issue-refs.sh SOURCE_DIR   the user documents git tracks there
#                                       (skipped, exit 77, outside a git
#                                       checkout: a release tarball)
#   check-no-issue-refs.sh --self-test  the checker on tests/docs/fixtures
#
# Flagged (case-insensitive): "issue 12", "issues 21 and 22", "issue #12",
# "PR #7", "this issue", "missed", and a planning target ("the target of",
# "target was", "target met"). Not flagged: another project's tracker named
# by its project ("Polly #747", "a GitHub issue of CPython"), a bare "#12",
# and the build's words ("CMake target", "build target", "--target bench",
# "target_link_libraries", "targets net8.0"). Documents that are not the
# user's (tests/**/README.md, bench/**, the bindings' package READMEs) are
# not checked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

patterns=(
  '\bissues? #?[0-9]+'
  '\b(issue|PR)s? #[0-9]+'
  '\bthis issue\b'
  '\bmissed\b'
  '\btarget(s|ed)? (of|was|were|met|is met|are met)\b'
)

# Tracked documents, and new ones not yet added (but not ignored ones), so
# that a page is checked before its first commit.
user_documents() { # SOURCE_DIR: the user documents, one a line
  git -C "$1" ls-files --cached --others --exclude-standard '*.md' | grep -E '^(README\.md|CHANGELOG\.md|docs/[^/]+\.md)$' || true
}

check() { # SOURCE_DIR: prints FILE:LINE: TEXT per hit; fails if any
  local src=$1 f p found=0 args=()
  for p in "${patterns[@]}"; do args+=(-e "$p"); done
  while IFS= read -r f; do
    [ -f "$src/$f" ] || continue
    if grep -nEi "${args[@]}" "$src/$f" | sed "s#^#$f:#"; then found=1; fi
  done < <(user_documents "$src")
  return $found
}

# The checker reports each line of fixtures/issue-refs.md (references to
# issues and planning words) and none of fixtures/no-issue-refs.md (the
# same words where a user needs them), nor a planted line outside the user
# documents.
self_test() {
  local t out status=0 want_n n
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  git -C "$t" init -q
  mkdir -p "$t/docs" "$t/tests/x" "$t/bench"
  cp "$here/fixtures/no-issue-refs.md" "$t/README.md"
  cp "$here/fixtures/no-issue-refs.md" "$t/docs/clean.md"
  echo 'see issue 12' >"$t/tests/x/README.md"
  echo 'see issue 12' >"$t/bench/notes.md"
  git -C "$t" add -A
  if out=$(check "$t"); then say "ok   the words a user needs pass, notes outside the user docs are not read"; else
    echo "self-test: FAIL: findings in a tree that has none:" >&2; echo "$out" >&2; status=1
  fi
  cp "$here/fixtures/issue-refs.md" "$t/docs/history.md"
  echo 'see issue 12' >"$t/CHANGELOG.md"
  git -C "$t" add -A
  out=$(check "$t" || true)
  want_n=$(grep -c . "$t/docs/history.md")
  n=$(grep -o '^docs/history.md:[0-9]*' <<<"$out" | sort -u | wc -l)
  if [ "$n" -eq "$want_n" ] && grep -q '^CHANGELOG.md:1:see issue 12$' <<<"$out" &&
     [ "$(grep -vc -e '^docs/history.md:' -e '^CHANGELOG.md:' <<<"$out" || true)" -eq 0 ]; then
    say "ok   each of the $want_n planted lines and a planted \"see issue 12\" are reported"
  else
    echo "self-test: FAIL: want each of the $want_n lines of history.md and CHANGELOG.md:1 reported, nothing else:" >&2
    echo "$out" >&2; status=1
  fi
  return $status
}

say() { echo "check-no-issue-refs: $*"; }
case ${1:?usage: check-no-issue-refs.sh SOURCE_DIR | --self-test} in
  --self-test) self_test ;;
  *)
    top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null || true)
    if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$1" && pwd -P)" ]; then
      say "SKIPPED: $1 is not a git checkout (a release tarball?): no tracked documents to list"
      exit 77
    fi
    if out=$(check "$1"); then
      say "no user document names an issue or a planning target"
    else
      echo "$out" >&2
      echo "check-no-issue-refs: user documents name issues or planning words: say what the figure or the behaviour is instead" >&2
      exit 1
    fi
    ;;
esac
