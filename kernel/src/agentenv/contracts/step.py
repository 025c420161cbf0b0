"""Step types: the primitive operations a task DAG is made of."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel

from agentenv.contracts.base import Contribution

if TYPE_CHECKING:
    from agentenv.config import Config
    from agentenv.contracts.store import ObjectStore
    from agentenv.plugins.host import PluginHost


class StepContext(Protocol):
    """What the engine hands a running step: run identity, earlier outputs, shared resources."""

    run_id: str
    seed: int
    task_name: str
    task_file: Path
    bundle_dir: Path | None
    outputs: dict[str, dict[str, Any]]
    config: Config
    host: PluginHost
    objects: ObjectStore

    @property
    def step_id(self) -> str:
        """The id of the running step."""
        ...

    def setting(self, dotted: str, default: Any = None) -> Any:
        """A config value (`model.api_key`, …) with `env:` and `secret:` references resolved."""
        ...

    def resource(self, step_id: str) -> Any:
        """The object an earlier step created (a World, an agent, a sandbox), or a clear error."""
        ...

    def add_resource(self, step_id: str, obj: Any, teardown: Callable[[], Any] | None = None) -> None:
        """Keep `obj` for later steps; `teardown` runs when the run ends, fails or is cancelled."""
        ...

    def resolve_path(self, relative: str) -> Path:
        """A path from a task file, relative to the bundle (or the task file's folder)."""
        ...

    def log(self, message: str) -> None:
        """A progress line for the person watching the run."""
        ...


class StepFailed(Exception):
    """A step could not do its job; the message says why and what to change."""


class Step(Contribution, ABC):
    """A step type. `Settings` is the model of its fields in a task file (beyond the common ones)."""

    verifier: ClassVar[bool] = False
    """Verifier steps return `score` (0..1) and `rows`; the task's score comes from them."""
    creates_resources: ClassVar[bool] = False
    """Steps that deploy something are re-run when a stored run is resumed."""

    def preflight(self, settings: BaseModel, step_ids: list[str]) -> list[tuple[str, str]]:
        """Problems found before the task starts, as (field, message); `step_ids` are the task's steps."""
        return []

    def needs_model(self, settings: BaseModel) -> tuple[str, str] | None:
        """(field, what needs it) when these settings need a language model (an LLM judge, an llm agent);
        preflight refuses the task when none is configured. None when no model is needed."""
        return None

    @abstractmethod
    async def execute(self, settings: BaseModel, ctx: StepContext) -> dict[str, Any]:
        """Do the step; the returned dict is its recorded output, visible to later steps."""
