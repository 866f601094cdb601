#!/usr/bin/env bash
# A consumer of the jar alone: copies lazybreaker-<version>.jar and App.java
# into a fresh temporary directory, compiles App against the jar only, and
# runs it there with an empty LD_LIBRARY_PATH and no java.library.path
# entry that holds the natives, so they must come out of the jar.
#
#   consumer.sh JAVAC JAVA JAR APP_SOURCE
set -euo pipefail
javac=$1 java=$2 jar=$3 app=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$jar" "$work/lazybreaker.jar"
cp "$app" "$work/App.java"
cd "$work"
"$javac" -cp lazybreaker.jar App.java
mkdir tmp
out=$(env LD_LIBRARY_PATH= "$java" -Djava.library.path="$work/none" -Djava.io.tmpdir="$work/tmp" \
  -cp lazybreaker.jar:. App)
echo "$out"
case $out in
  *"natives from jar:native/linux-x86_64/"*"the cycle completed"*) ;;
  *) echo "consumer: FAIL: the natives did not come from the jar" >&2; exit 1 ;;
esac
# The natives were extracted under java.io.tmpdir and removed once loaded.
if [ -n "$(ls -A tmp)" ]; then
  echo "consumer: FAIL: left behind in java.io.tmpdir: $(ls -A tmp)" >&2
  exit 1
fi
echo "consumer: passed"
