#!/usr/bin/env bash
# The wheel: built offline (python3 -m build --no-isolation --wheel, Debian's
# python3-build and setuptools) from a copy of bindings/python, installed
# with pip --no-index into a fresh venv (no system site-packages), and used
# there without the C package: the extension carries the library (it needs
# no liblazybreaker.so) and a breaker in a registry file trips and recovers.
#
#   python-wheel.sh SRC WORK
set -euo pipefail
src=$(cd "${1:?usage: python-wheel.sh SRC WORK}" && pwd)
work=${2:?}
say() { echo "python-wheel: $*"; }
fail() { echo "python-wheel: FAIL: $*" >&2; exit 1; }
python=/usr/bin/python3

rm -rf "$work"
mkdir -p "$work/project"
work=$(cd "$work" && pwd)
cp -r "$src/bindings/python/lazybreaker" "$src/bindings/python/setup.py" "$src/bindings/python/pyproject.toml" \
  "$src/bindings/python/README.md" "$work/project/"
(cd "$work/project" && LB_SOURCE_DIR=$src "$python" -m build --no-isolation --wheel --outdir "$work/dist" . \
  >"$work/build.log" 2>&1) || { tail -n 40 "$work/build.log"; fail "the wheel did not build"; }
shopt -s nullglob
wheels=("$work"/dist/lazybreaker-*-cp3*-linux_*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "no single platform wheel in $work/dist: $(ls "$work/dist")"
say "built $(basename "${wheels[0]}")"
entries=$("$python" -m zipfile -l "${wheels[0]}")
for f in lazybreaker/__init__.py lazybreaker/_core.py lazybreaker/_core.pyi lazybreaker/py.typed; do
  grep -q " *$f " <<<"$entries" || grep -q "^$f" <<<"$entries" || fail "the wheel lacks $f"
done

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-deps "${wheels[0]}" ||
  fail "pip could not install the wheel"
so=$(find "$work/venv" -name '_core.cpython-*.so' -path '*lazybreaker*')
[ -f "$so" ] || fail "no extension in the venv"
! readelf -d "$so" | grep -E 'NEEDED.*liblazybreaker' >/dev/null || fail "$so needs liblazybreaker.so"
! readelf -d "$so" | grep -E 'NEEDED.*libpython' >/dev/null || fail "$so links libpython"
! nm -D --defined-only "$so" | grep -E ' cb_' >/dev/null || fail "$so exports the library's cb_* symbols"

out=$(cd "$work" && env -u PYTHONPATH -u LD_LIBRARY_PATH "$work/venv/bin/python" -c '
import sys
import lazybreaker as lb
assert lb.__file__.startswith(sys.prefix), (lb.__file__, sys.prefix)
with lb.Registry.open(sys.argv[1]) as reg:
    b = reg.get_or_create("wheel", lb.Config(failure_threshold=1, open_duration=0.2))
    try:
        b.call(lambda: 1 / 0)
    except ZeroDivisionError:
        pass
    assert b.state == "open"
    again = lb.Registry.open(sys.argv[1], create=False).lookup("wheel")
    assert again is not None and again.state == "open"
    import time
    time.sleep(0.25)
    assert b.call(lambda: "up") == "up" and b.state == "closed"
print("ok", lb.__version__, lb.__file__)
' "$work/wheel.lbr" 2>&1) || fail "$out"
say "$out"
say "passed"
