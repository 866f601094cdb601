#!/usr/bin/env bash
# Every relative link in README.md and docs/*.md points to a file or folder
# that exists in the repository: a page renamed or removed leaves links to
# it that a reader finds dead, and nothing else notices.
#
#   check-links.sh SOURCE_DIR   README.md and docs/*.md there
#   check-links.sh --self-test  the checker on planted pages
#
# Checked: the target of every [text](target) and ![alt](target), without
# its #fragment or ?query, taken relative to the page's folder, and it must
# stay inside SOURCE_DIR. Not checked: absolute addresses (http:, https:,
# mailto:, any scheme), links to an anchor of the same page (#...), and
# anything inside a fenced code block or an inline `code span`.
set -euo pipefail

# The link targets of a Markdown page, as "LINE<TAB>TARGET", one a line.
link_targets() { # FILE
  awk '
    /^[[:space:]]*(```|~~~)/ { fenced = !fenced; next }
    fenced { next }
    {
      line = $0
      gsub(/`[^`]*`/, "", line)
      while (match(line, /\]\([^) \t]+/)) {
        printf "%d\t%s\n", NR, substr(line, RSTART + 2, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$1"
}

check() { # SOURCE_DIR: prints FILE:LINE: TARGET ... per broken link; fails if any
  local src page dir line target path resolved found=0
  src=$(cd "$1" && pwd -P)
  for page in "$src/README.md" "$src"/docs/*.md; do
    [ -f "$page" ] || continue
    dir=$(dirname "$page")
    while IFS=$'\t' read -r line target; do
      target=${target#<} target=${target%>}
      case $target in
        '#'* | [a-zA-Z]*:*) continue ;;
      esac
      path=${target%%#*} path=${path%%\?*}
      [ -n "$path" ] || continue
      case $path in
        /*) resolved=$path ;;
        *) resolved=$dir/$path ;;
      esac
      if [ ! -e "$resolved" ]; then
        echo "${page#"$src"/}:$line: $target: no such file in the repository"
        found=1
      elif [[ $path == /* || /$path/ == */../* ]]; then
        # Only a path with ".." (or an absolute one) can leave the tree.
        resolved=$(realpath -e -- "$resolved")
        case $resolved/ in
          "$src"/*) ;;
          *) echo "${page#"$src"/}:$line: $target: outside the repository"; found=1 ;;
        esac
      fi
    done < <(link_targets "$page")
  done
  return $found
}

# A tree whose links all resolve passes; each planted broken link is
# reported once, by page and line, and nothing else is.
self_test() {
  local t out status=0 want
  t=$(mktemp -d)
  trap 'rm -rf "$t"' RETURN
  mkdir -p "$t/repo/docs" "$t/repo/examples"
  echo 'int main(void) { return 0; }' >"$t/repo/examples/demo.c"
  : >"$t/repo/docs/shot.png"
  echo secret >"$t/outside.md"
  cat >"$t/repo/README.md" <<'PAGE'
# Planted
See [the guide](docs/guide.md), [its section](docs/guide.md#install), [a folder](examples/),
![a picture](docs/shot.png) and [the demo](examples/demo.c "the demo").
[Elsewhere](https://example.com/missing.md), [mail](mailto:a@b.c), [here](#planted).
Not links: `[code](missing-in-code.md)`, and
```md
[fenced](missing-in-fence.md)
```
PAGE
  cat >"$t/repo/docs/guide.md" <<'PAGE'
Back to [the front page](../README.md) and [the demo](../examples/demo.c?plain=1).
PAGE
  if out=$(check "$t/repo"); then say "ok   a tree whose links resolve passes (code, addresses and anchors are not read)"; else
    echo "self-test: FAIL: findings in a tree that has none:" >&2; echo "$out" >&2; status=1
  fi
  echo 'A [dead link](moved.md#usage) and [one out](../../outside.md).' >>"$t/repo/docs/guide.md"
  echo '![gone](docs/gone.png)' >>"$t/repo/README.md"
  if out=$(check "$t/repo"); then
    echo "self-test: FAIL: a tree with broken links passes" >&2; status=1
  fi
  want=$'README.md:9: docs/gone.png: no such file in the repository\ndocs/guide.md:2: moved.md#usage: no such file in the repository\ndocs/guide.md:2: ../../outside.md: outside the repository'
  if [ "$out" = "$want" ]; then
    say "ok   each planted broken link is reported by page and line, and nothing else"
  else
    echo "self-test: FAIL: want exactly:" >&2; echo "$want" >&2; echo "got:" >&2; echo "$out" >&2; status=1
  fi
  return $status
}

say() { echo "check-links: $*"; }
case ${1:?usage: check-links.sh SOURCE_DIR | --self-test} in
  --self-test) self_test ;;
  *)
    if out=$(check "$1"); then
      say "every relative link in README.md and docs/*.md points to a file in the repository"
    else
      echo "$out" >&2
      echo "check-links: broken links: point them at the file that exists now, or drop them" >&2
      exit 1
    fi
    ;;
esac
