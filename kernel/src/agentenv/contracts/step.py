"""Step types: the primitive operations a task DAG is made of."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

from pydantic import BaseModel

from agentenv.contracts.base import Contribution


class StepContext(Protocol):
    """What the engine hands a running step: run identity, earlier outputs, shared resources."""

    run_id: str
    seed: int
    outputs: dict[str, dict[str, Any]]
    resources: dict[str, Any]


class Step(Contribution, ABC):
    """A step type. `Settings` is the model of its fields in a task file (beyond id/type/depends_on)."""

    def preflight(self, settings: BaseModel) -> list[str]:
        """Problems found before the task starts (field → message); empty when fine."""
        return []

    @abstractmethod
    async def execute(self, settings: BaseModel, ctx: StepContext) -> dict[str, Any]:
        """Do the step; the returned dict is its recorded output, visible to later steps."""
