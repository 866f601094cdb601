#!/usr/bin/env bash
# axe-core's checks on cbctl serve's page (the tiles, then a detail view)
# in headless Chromium: no violation of impact serious or critical.
# axe-core comes from npm into the build folder ($AXE_DIR), never into the
# repository; without npm (or the registry) the test is skipped loudly
# (status 77), and fails under CI=true.
source "$(dirname "$0")/lib.sh"
shots=${DASHBOARD_OUT:-$work/shots}
mkdir -p "$shots"
axe_dir=${AXE_DIR:-$work/axe}
axe=$axe_dir/node_modules/axe-core/axe.min.js
if [ ! -f "$axe" ]; then
  if ! command -v npm >/dev/null ||
    ! timeout 120 npm install --no-save --no-audit --no-fund --prefix "$axe_dir" axe-core@4 >"$work/npm.log" 2>&1; then
    [ "${CI:-}" != true ] || fail "npm could not install axe-core: $(tail -n 5 "$work/npm.log" 2>/dev/null)"
    echo "SKIPPED: axe-core unavailable (npm missing or the registry unreachable)" >&2
    exit 77
  fi
fi
start_helper
expect_helper "admitted=1 rejected=0" call payments failure 1
start_serve "$work/serve.log" "$reg" --allow-control
/usr/bin/python3 "$(dirname "$0")/dashboard.py" axe --url "http://127.0.0.1:$serve_port" --axe "$axe" \
  --out "$shots" --detail payments
stop_helper
echo passed
