#!/usr/bin/env bash
# The web console's browser test (tests/console.e2e.test.ts) drives Debian's Chromium. This installs
# it with apt-get when it is missing: run by `.ci/run` and, with --optional, by `npm test` (pretest),
# so that jest itself never installs anything.
# --optional: a machine where it cannot be installed still runs every other test; only the browser
# test fails, naming this script.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
optional=false
[ "${1:-}" = "--optional" ] && optional=true

[ -x "$CHROMIUM" ] && exit 0

give_up() {
  echo "ensure-chromium: $1" >&2
  if $optional; then
    echo "ensure-chromium: the browser test will fail until $CHROMIUM exists (run scripts/ensure-chromium.sh)" >&2
    exit 0
  fi
  exit 1
}

command -v apt-get >/dev/null 2>&1 || give_up "no apt-get here: install Chromium at $CHROMIUM yourself"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || give_up "installing Chromium needs root (or sudo)"
  sudo=(sudo)
fi

echo "ensure-chromium: installing chromium with apt-get (once per machine)" >&2
export DEBIAN_FRONTEND=noninteractive
# fonts-dejavu-core: a page with no font at all renders empty boxes in screenshots.
"${sudo[@]}" apt-get update -qq >/dev/null || give_up "apt-get update failed"
"${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null || give_up "apt-get install chromium failed"
[ -x "$CHROMIUM" ] || give_up "apt-get installed chromium but $CHROMIUM is missing"
