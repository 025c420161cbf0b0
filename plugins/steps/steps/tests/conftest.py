"""Fixtures for the step tests: run a task for real and read what it stored."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv.testing.tasks import run_task

sys.path.insert(0, str(Path(__file__).parent))  # the tests import steps_taskkit (pytest runs in importlib mode)


class Runs:
    """Runs tasks against one temporary set of stores (so a later task sees an earlier one's objects)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, task: dict[str, Any] | Path, **kwargs: Any) -> dict[str, Any]:
        return run_task(task, self.root, **kwargs)

    def object(self, key: str) -> bytes:
        return (self.root / "objects" / key).read_bytes()

    def trajectory(self, record: dict[str, Any], world: str = "world") -> list[dict[str, Any]]:
        raw = self.object(record["trajectories"][world])
        return [json.loads(line) for line in raw.splitlines() if line.strip()]


@pytest.fixture
def runs(tmp_path: Path) -> Runs:
    return Runs(tmp_path)


@pytest.fixture
def step() -> Callable[[dict[str, Any], str], dict[str, Any]]:
    """The record of one step of a run, by id."""

    def find(record: dict[str, Any], step_id: str) -> dict[str, Any]:
        return next(s for s in record["steps"] if s["id"] == step_id)

    return find
