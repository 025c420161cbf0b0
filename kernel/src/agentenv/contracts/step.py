"""Step types: the primitive operations a task DAG is made of.

A step type is generic over its settings model, `class DeployEnv(Step[DeployEnvSettings])`, so `execute`
receives that model and a typed `StepContext` (the runtime's run context implements it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel

from agentenv.config import Config
from agentenv.contracts.base import Contribution
from agentenv.contracts.registry import Registries
from agentenv.contracts.store import ObjectStore

S = TypeVar("S", bound=BaseModel)
R = TypeVar("R")


class StepContext(Protocol):
    """What the engine hands a running step: run identity, earlier outputs, shared resources."""

    run_id: str
    seed: int
    task_name: str
    task_file: Path
    bundle_dir: Path | None
    outputs: dict[str, dict[str, Any]]
    overrides: dict[str, Any]
    """Run-level choices from the command line (`agent`, `model`), read by the steps they concern."""
    config: Config
    objects: ObjectStore

    @property
    def host(self) -> Registries:
        """Lookups among installed contributions (envs, agent kinds, sandbox providers, …)."""
        ...

    @property
    def step_id(self) -> str:
        """The id of the running step."""
        ...

    def setting(self, dotted: str, default: Any = None) -> Any:
        """A config value (`model.api_key`, …) with `env:` and `secret:` references resolved."""
        ...

    def resource(self, step_id: str, expected: type[R]) -> R:
        """The `expected` object an earlier step created (a world, an agent, a sandbox), or a clear error."""
        ...

    def resources_of(self, expected: type[R]) -> Mapping[str, R]:
        """Every resource of that type so far, by the id of the step that created it."""
        ...

    def add_resource(self, step_id: str, obj: Any, teardown: Callable[[], Any] | None = None) -> None:
        """Keep `obj` for later steps; `teardown` runs when the run ends, fails or is cancelled."""
        ...

    def check_pin(self, env: str, name: str, sha256: str) -> None:
        """Refuse (StepFailed) an artifact whose hash differs from what the task pins for it."""
        ...

    def resolve_path(self, relative: str) -> Path:
        """A path from a task file, relative to the bundle (or the task file's folder)."""
        ...

    def log(self, message: str) -> None:
        """A progress line for the person watching the run."""
        ...


class StepFailed(Exception):
    """A step could not do its job; the message says why and what to change."""


class Step(Contribution, ABC, Generic[S]):
    """A step type. `Settings` is the model of its fields in a task file (beyond the common ones)."""

    verifier: ClassVar[bool] = False
    """Verifier steps return `score` (0..1) and `rows`; the task's score comes from them."""
    creates_resources: ClassVar[bool] = False
    """Steps that deploy something are re-run when a stored run is resumed."""

    def preflight(self, settings: S, step_ids: list[str]) -> list[tuple[str, str]]:
        """Problems found before the task starts, as (field, message); `step_ids` are the task's steps."""
        return []

    def needs_model(self, settings: S) -> tuple[str, str] | None:
        """(field, what needs it) when these settings need a language model (an LLM judge, an llm agent);
        preflight refuses the task when none is configured. None when no model is needed."""
        return None

    @abstractmethod
    async def execute(self, settings: S, ctx: StepContext) -> dict[str, Any]:
        """Do the step; the returned dict is its recorded output, visible to later steps."""
