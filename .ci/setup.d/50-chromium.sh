#!/usr/bin/env bash
# Debian's Chromium for the tests that drive a real browser with playwright (never `playwright install`):
# - chromium: agentenv-explorer's UI tests (/usr/lib/chromium/chromium);
# - chromium-headless-shell: what agentenv-browser's env picks first (half the memory per page, a faster launch;
#   with it an episode reset meets its goal in bench/browser_bench.py), used by the browser env's, web-desk's and
#   MiniWoB's tests.
# The same apt line as every other chromium user, serialised by the lock; no recommends (they upgrade base packages).
set -euo pipefail
if [ -x /usr/lib/chromium/chromium ] && [ -x /usr/lib/chromium/chromium-headless-shell ]; then exit 0; fi
flock /tmp/apt.lock apt-get update -qq
flock /tmp/apt.lock env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  chromium chromium-headless-shell fonts-liberation
