#!/usr/bin/env bash
# BrowserGym's own MiniWoB environment, for agentenv-miniwob's agreement test (tests/test_browsergym_agreement.py):
# `browsergym-core` and `browsergym-miniwob` 0.14.3 from PyPI, with the `miniwob` wheel that carries the task
# pages, in a venv of its own under ~/.cache, never in the workspace: browsergym-core pins playwright==1.44, the
# workspace has a newer one. The browser is Debian's chromium (50-chromium.sh); playwright 1.44's own browser
# download is never used. `miniwob` comes without its dependencies (selenium, which BrowserGym does not use).
# Idempotent: a venv that already imports BrowserGym's MiniWoB tasks is kept.
set -euo pipefail
home="${AGENTENV_BROWSERGYM_HOME:-$HOME/.cache/agentenv/browsergym}"
venv="$home/venv"
uv="$(command -v uv || echo "$HOME/.local/bin/uv")"
probe="import browsergym.miniwob, miniwob, playwright"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$probe" 2>/dev/null; then
  echo "browsergym: $venv ready"
  exit 0
fi
rm -rf "$venv"
mkdir -p "$home"
UV_PYTHON_DOWNLOADS=never "$uv" venv --quiet --python python3 "$venv"
UV_PYTHON_DOWNLOADS=never "$uv" pip install --quiet --python "$venv/bin/python" "browsergym-core==0.14.3"
UV_PYTHON_DOWNLOADS=never "$uv" pip install --quiet --python "$venv/bin/python" --no-deps \
  "browsergym-miniwob==0.14.3" "miniwob==1.1.0"
"$venv/bin/python" -c "$probe; print('browsergym: browsergym-miniwob 0.14.3 installed into $venv')"
