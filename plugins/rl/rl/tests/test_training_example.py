"""examples/training/train_loop.py runs and prints the same rewards through the episode API and OpenEnv."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from agentenv_testing.installs import AGENTENV_VARS

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "training" / "train_loop.py"


def test_the_training_loop_prints_equal_rewards_both_ways(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--episodes", "4", "--skip", "ray"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rewards = dict(re.findall(r"^\s*(episode API|openenv): rewards (\[.*?\])", proc.stdout, re.MULTILINE))
    assert set(rewards) == {"episode API", "openenv"} and rewards["episode API"] == rewards["openenv"]


def test_agentenv_help_imports_none_of_the_training_stack(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentenv", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "openenv" in proc.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    heavy = {"ray", "gymnasium", "pyarrow", "starlette", "uvicorn", "websockets", "agentenv_rl", "agentenv_ray"}
    assert not imported & heavy
