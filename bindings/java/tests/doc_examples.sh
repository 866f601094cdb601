#!/bin/sh
# doc_examples.sh JAVA DOC CLASSPATH WORK_DIR: runs every ```java block of DOC
# that is a whole program (it has "static void main") as written, with
# Java's single-file launcher on CLASSPATH, and compares what it prints
# with the lines its comments promise ("// prints: a | b", in order).
set -eu
java=$1
doc=$2
classpath=$3
work=$4
rm -rf "$work"
mkdir -p "$work"
awk -v dir="$work" '
  /^```java$/ { inside = 1; n++; file = dir "/block" n ".java"; next }
  inside && /^```$/ { inside = 0; next }
  inside { print > file }' "$doc"
ran=0
for block in "$work"/block*.java; do
  [ -e "$block" ] || continue
  grep -q 'static void main' "$block" || continue
  class=$(sed -n 's/^public class \([A-Za-z0-9_]*\).*/\1/p' "$block" | head -n 1)
  [ -n "$class" ] || { echo "doc_examples.sh: $block has main but no public class" >&2; exit 1; }
  mkdir -p "$work/$class"
  cp "$block" "$work/$class/$class.java"
  sed -n 's#.*// prints: ##p' "$block" | tr '|' '\n' | sed 's/^ *//; s/ *$//' >"$work/$class/expected.txt"
  [ -s "$work/$class/expected.txt" ] || { echo "doc_examples.sh: $class promises no output (// prints: ...)" >&2; exit 1; }
  (cd "$work/$class" && "$java" -Dlazybreaker.native=jar -cp "$classpath" "$class.java" >actual.txt)
  if ! diff -u "$work/$class/expected.txt" "$work/$class/actual.txt"; then
    echo "doc_examples.sh: $class in $doc does not print what it says" >&2
    exit 1
  fi
  echo "doc_examples.sh: $class runs as written"
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "doc_examples.sh: no whole-program example in $doc" >&2; exit 1; }
echo "doc_examples.sh: $ran examples of $doc run as written"
