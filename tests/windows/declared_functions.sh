#!/bin/sh
# Prints the name of every function the public headers in INCLUDE_DIR
# declare (CB_API ... cb_name(...)), one a line, sorted: what lazybreaker.dll
# must export (check_exports.sh) and what the LoadLibraryW consumer resolves.
set -eu
# Declarations may span lines: the headers joined, split at each ';'.
cat "$1"/lazybreaker/*.h | tr '\n' ' ' | tr ';' '\n' |
  grep -oE 'CB_API[^(]*[^a-zA-Z0-9_]cb_[a-z0-9_]+ *\(' | grep -oE 'cb_[a-z0-9_]+ *\($' |
  tr -d ' (' | sort -u
