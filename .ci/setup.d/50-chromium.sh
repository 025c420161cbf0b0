#!/usr/bin/env bash
# agentenv-explorer: its UI tests drive Debian's chromium with playwright (playwright comes with the workspace's
# dev group; never `playwright install`). The same apt line as every other chromium user, serialised by the lock.
set -euo pipefail
if [ -x /usr/lib/chromium/chromium ]; then exit 0; fi
flock /tmp/apt.lock apt-get update -qq
flock /tmp/apt.lock env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation
