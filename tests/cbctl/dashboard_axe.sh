#!/usr/bin/env bash
# axe-core's checks on cbctl serve's page (the tiles, then a detail view)
# in headless Chromium: no violation of impact serious or critical.
# axe-core comes from npm into the build folder ($AXE_DIR), never into the
# repository.
source "$(dirname "$0")/lib.sh"
shots=${DASHBOARD_OUT:-$work/shots}
mkdir -p "$shots"
axe_dir=${AXE_DIR:-$work/axe}
axe=$axe_dir/node_modules/axe-core/axe.min.js
# axe-core at the version tests/cbctl/axe-dependencies.json pins; without
# npm or its registry: skipped (77), or a failure under CI=true.
sh "$(dirname "$0")/../../cmake/npm-install.sh" "$(dirname "$0")/axe-dependencies.json" "$axe_dir" || exit
start_helper
expect_helper "admitted=1 rejected=0" call payments failure 1
start_serve "$work/serve.log" "$reg" --allow-control
/usr/bin/python3 "$(dirname "$0")/dashboard.py" axe --url "http://127.0.0.1:$serve_port" --axe "$axe" \
  --out "$shots" --detail payments
stop_helper
echo passed
