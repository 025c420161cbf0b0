"""Run a task for real inside a test: temporary stores, the installed plugins, one call.

Step plugins use this to prove a step works inside a task (not just in isolation):

    from agentenv.testing.tasks import run_task
    record = run_task({"name": "t", "steps": [...]}, tmp_path)
    assert record["status"] == "succeeded"
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentenv.config import Config, load_config
from agentenv.engine.runner import TaskRunner
from agentenv.engine.task import TaskFile, read_task
from agentenv.plugins.host import PluginHost, get_host


def temporary_config(tmp_path: Path) -> Config:
    """Defaults, with every local store under `tmp_path`."""
    config = load_config(cwd=tmp_path, environ={})
    config.values["plugins"] = {
        "agentenv-store-local": {
            "document": {"path": str(tmp_path / "records.sqlite3")},
            "object": {"root": str(tmp_path / "objects")},
        }
    }
    return config


def write_task(task: dict[str, Any], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task.get('name', 'task')}.json"
    path.write_text(json.dumps(task, indent=2))
    return path


def run_task(
    task: dict[str, Any] | Path,
    tmp_path: Path,
    *,
    seed: int = 0,
    bundle_dir: Path | None = None,
    overrides: dict[str, Any] | None = None,
    host: PluginHost | None = None,
    config: Config | None = None,
) -> dict[str, Any]:
    """Preflight and run one task; returns the stored run record."""
    path = task if isinstance(task, Path) else write_task(task, tmp_path / "tasks")
    parsed: TaskFile = read_task(path)
    runner = TaskRunner(host or get_host(), config or temporary_config(tmp_path))
    return asyncio.run(runner.run(parsed, seed=seed, bundle_dir=bundle_dir, overrides=overrides))
