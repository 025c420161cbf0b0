#!/usr/bin/env bash
# agentenv-mcp's tests run real MCP servers from PyPI (mcp-server-git, mcp-server-time, mcp-server-sqlite), each
# in a venv the tests make. Their wheels go to $AGENTENV_WHEELHOUSE/mcp-servers, so those venvs install offline.
# mcp-server-sqlite 2025.4.25 needs mcp<2 (its own venv); the other two need mcp>=2.3. Idempotent: pip download
# skips what the folder already holds. The tests need git on PATH (the machine has it).
set -euo pipefail
cd "$(dirname "$0")/../.."
dest="${AGENTENV_WHEELHOUSE:-$PWD/.ci/wheelhouse}/mcp-servers"
mkdir -p "$dest"
python3 -m pip download --quiet --dest "$dest" --only-binary=:all: \
  "mcp-server-git==2026.10.19" "mcp-server-time==2026.10.19"
python3 -m pip download --quiet --dest "$dest" --only-binary=:all: \
  "mcp-server-sqlite==2025.4.25" "mcp>=1.25,<2"
command -v git >/dev/null || { echo "40-mcp-servers: git is needed on PATH" >&2; exit 1; }
echo "40-mcp-servers: $(ls "$dest" | wc -l) wheels in $dest"
