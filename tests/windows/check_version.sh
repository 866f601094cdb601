#!/bin/sh
# lazybreaker.dll's version resource carries the library's version (the
# header's CB_VERSION_*), as Explorer and GetFileVersionInfoW read it.
set -eu
windres=$1 dll=$2 version=$3
rc=$("$windres" -i "$dll" -O rc)
major=${version%%.*} rest=${version#*.}
minor=${rest%%.*} patch=${rest#*.}
status=0
for want in "FILEVERSION $major, $minor, $patch, 0" "PRODUCTVERSION $major, $minor, $patch, 0" \
            "\"FileVersion\", \"$version\"" "\"ProductVersion\", \"$version\"" \
            "\"OriginalFilename\", \"lazybreaker.dll\""; do
  printf '%s\n' "$rc" | grep -qF "$want" || { echo "FAIL: the version resource lacks: $want" >&2; status=1; }
done
[ $status -eq 0 ] && echo "$(basename "$dll"): version resource $version"
exit $status
