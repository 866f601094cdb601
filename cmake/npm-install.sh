#!/bin/sh
# npm-install.sh PACKAGE_JSON WORK_DIR: installs the devDependencies that
# PACKAGE_JSON pins (exact versions) into WORK_DIR/node_modules, never into
# the source tree, and only when PACKAGE_JSON changed since the last
# install there. No install scripts run. Without npm or its registry: exit 77
# (CTest's skip, saying why), or 1 under CI=true.
set -eu
spec=${1:?usage: npm-install.sh PACKAGE_JSON WORK_DIR}
work=${2:?usage: npm-install.sh PACKAGE_JSON WORK_DIR}
mkdir -p "$work"
if [ -d "$work/node_modules" ] && cmp -s "$spec" "$work/installed-package.json"; then
  exit 0
fi
cp "$spec" "$work/package.json"
if ! command -v npm >/dev/null ||
  ! (cd "$work" && npm_config_update_notifier=false timeout 900 npm install --no-audit --no-fund \
    --no-package-lock --ignore-scripts >npm.log 2>&1); then
  tail -n 20 "$work/npm.log" >&2 2>/dev/null || true
  if [ "${CI:-}" = true ]; then
    echo "npm-install.sh: npm could not install $spec (CI=true: a failure)" >&2
    exit 1
  fi
  echo "npm-install.sh: SKIPPED: npm could not install $spec (npm missing or its registry unreachable)" >&2
  exit 77
fi
cp "$spec" "$work/installed-package.json"
echo "npm-install.sh: $spec installed into $work"
