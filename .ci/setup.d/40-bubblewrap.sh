#!/usr/bin/env bash
# agentenv-workspace (the process sandbox isolates commands with bubblewrap) and agentenv-sandbox-local (the
# `process` provider's network mode `loopback`) need bwrap; `none` uses util-linux's `unshare`, always there.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then exit 0; fi
flock /tmp/apt.lock apt-get update -qq
flock /tmp/apt.lock apt-get install -y --no-install-recommends bubblewrap
