"""Run a task for real inside a test: temporary stores, the installed plugins, one call.

Step plugins use this to prove a step works inside a task (not just in isolation):

    from agentenv_testing.tasks import run_task
    record = run_task({"name": "t", "steps": [...]}, tmp_path)
    assert record["status"] == "succeeded"

or, with the pytest plugin, the `agentenv_runs` fixture (a `TaskRuns` on the test's temporary folder).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentenv import PluginHost, get_host
from agentenv.config import Config, load_config
from agentenv_runtime import TaskFile, TaskRunner, read_task


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


class TaskRuns:
    """Runs tasks against one temporary set of stores (a later task sees an earlier one's objects) and reads
    back what they stored: the `agentenv_runs` fixture."""

    def __init__(self, root: Path, host: PluginHost | None = None) -> None:
        self.root, self.host = root, host

    def __call__(self, task: dict[str, Any] | Path, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("host", self.host)
        return run_task(task, self.root, **kwargs)

    def object(self, key: str) -> bytes:
        return (self.root / "objects" / key).read_bytes()

    def trajectory(self, record: dict[str, Any], world: str = "world") -> list[dict[str, Any]]:
        """The stored trajectory events of the world that step `world` deployed."""
        raw = self.object(record["trajectories"][world])
        return [json.loads(line) for line in raw.splitlines() if line.strip()]
