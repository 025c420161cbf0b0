#!/usr/bin/env bash
# τ²-bench's own code, for agentenv-tau2's agreement test and bench/tau2_bench.py: its source (a fetched copy of
# sierra-research/tau2-bench, named by TAU2_BENCH_GIT or at the default mirror path) installed into a separate
# Python 3.12 venv, never into the workspace. No copy here: nothing is installed and the test skips saying why.
# The retail data comes from shared/tau2-bench (the same τ² commit); the test points TAU2_DATA_DIR at it.
# Idempotent: a venv installed from the same source commit is kept.
set -euo pipefail
git_dir="${TAU2_BENCH_GIT:-/work/.mirror/sierra-research+tau2-bench/repo}"
home="${AGENTENV_TAU2_HOME:-$HOME/.cache/agentenv/tau2-bench}"
venv="$home/venv"
uv="$(command -v uv || echo "$HOME/.local/bin/uv")"
python="$(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python 2>/dev/null | head -1 || true)"
if [ ! -d "$git_dir" ]; then
  echo "tau2-bench: no source at $git_dir (set TAU2_BENCH_GIT); the agreement test will skip"
  exit 0
fi
stamp="$venv/.agentenv-tau2-$(git --git-dir="$git_dir" rev-parse HEAD)"
if [ -x "$venv/bin/python" ] && [ -e "$stamp" ]; then
  echo "tau2-bench: $venv ready"   # importing τ² to check takes ~20 s (litellm): a stamp per source commit
  exit 0
fi
if [ -z "$python" ]; then
  echo "tau2-bench: needs Python 3.12 (~/.pyenv/versions/3.12*); the agreement test will skip"
  exit 0
fi
rm -rf "$home/src" && mkdir -p "$home/src"
git --git-dir="$git_dir" archive HEAD pyproject.toml README.md LICENSE src | tar -x -C "$home/src"
UV_PYTHON_DOWNLOADS=never "$uv" venv --quiet --python "$python" "$venv"
UV_PYTHON_DOWNLOADS=never "$uv" pip install --quiet --python "$venv/bin/python" "$home/src"
"$venv/bin/python" -c "import tau2.domains.retail.environment" && touch "$stamp"
echo "tau2-bench: installed into $venv"
