"""Rollout runners: where `agentenv run -k N --runner NAME` runs a task's rollouts when not in this process.

Plugins register runner classes with `agentenv_register_runners` (`agentenv-ray` brings `ray`). A runner gets
the task file and the seeds and returns one summary per seed, in seed order (`summary_of` of each run record);
every rollout is a normal `TaskRunner.run`, so its record and trajectory are written to the configured stores
exactly as a local run writes them.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv.contracts import Contribution
from pydantic import BaseModel, ConfigDict, Field

from agentenv_runtime.engine.task import TaskFile


class RunnerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: str | None = Field(None, description="Where the runner's cluster is (`--address`); None: start one.")
    workers: int = Field(1, ge=1, description="How many workers to spread the rollouts over (`--workers`).")


class RolloutRunner(Contribution):
    Settings = RunnerSettings

    def __init__(self, settings: RunnerSettings) -> None:
        self.settings = settings

    @abstractmethod
    def run(
        self,
        task: TaskFile,
        seeds: list[int],
        *,
        bundle: str | None,
        bundle_dir: Path | None,
        overrides: dict[str, Any],
        on_done: Callable[[dict[str, Any]], None],
    ) -> list[dict[str, Any]]:
        """Every seed's rollout; summaries in seed order, `on_done` told of each as it finishes."""
