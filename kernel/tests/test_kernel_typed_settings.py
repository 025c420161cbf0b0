"""Every contract made from settings validates them the same way, into its own model, and exposes them typed:
envs, agent kinds, trigger kinds, sandbox providers and store backends alike (`Configured[Settings]`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from agentenv.contracts import (
    AgentKind,
    AgentResponse,
    Configured,
    Environment,
    ObjectStore,
    SandboxProvider,
    ToolAccess,
    TriggerKind,
)
from pydantic import BaseModel, ConfigDict, ValidationError


class Speed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rate: float = 1.0


class Fast(AgentKind[Speed]):
    name = "fast"
    Settings = Speed

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        return AgentResponse(text=f"{self.settings.rate}")


class Tick(TriggerKind[Speed]):
    name = "tick"
    Settings = Speed

    def next_due(self, after: datetime) -> datetime | None:
        return None


class OldStyleProvider(SandboxProvider):  # no type parameter, as plugins written before it was generic
    name = "old"
    Settings = Speed

    def create(self, spec: Any) -> Any:
        raise NotImplementedError

    def list(self, labels: dict[str, str]) -> list[Any]:
        return []


class Blobs(ObjectStore[Speed]):
    name = "blobs"
    Settings = Speed

    def put(self, key: str, data: bytes) -> None:
        return None

    def get(self, key: str) -> bytes:
        return b""

    def list(self, prefix: str = "") -> list[str]:
        return []

    def delete(self, key: str) -> bool:
        return False


@pytest.mark.parametrize("kind", [Fast, Tick, OldStyleProvider, Blobs])
def test_raw_settings_are_validated_into_the_kinds_model(kind: type[Configured[Any]]) -> None:
    made = kind({"rate": 2.5})
    assert isinstance(made.settings, Speed) and made.settings.rate == 2.5
    assert kind().settings == Speed()
    with pytest.raises(ValidationError, match="rate"):
        kind({"rate": "fast"})
    with pytest.raises(ValidationError, match="unknown"):
        kind({"unknown": 1})


def test_the_same_model_is_kept_and_another_one_is_validated_from_its_fields() -> None:
    given = Speed(rate=3)
    assert Fast(given).settings is given

    class Other(BaseModel):
        rate: float = 4.0

    assert Fast(Other()).settings == Speed(rate=4.0)


def test_every_contract_with_settings_is_configured_alike() -> None:
    for contract in (Environment, AgentKind, TriggerKind, SandboxProvider, ObjectStore):
        assert issubclass(contract, Configured), contract
