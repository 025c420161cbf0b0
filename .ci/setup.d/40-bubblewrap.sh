#!/usr/bin/env bash
# agentenv-workspace: the process sandbox isolates commands with bubblewrap (bwrap); its tests need it.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then exit 0; fi
flock /tmp/apt.lock apt-get update -qq
flock /tmp/apt.lock apt-get install -y --no-install-recommends bubblewrap
