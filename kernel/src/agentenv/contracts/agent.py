"""Agent kinds: anything that acts in a world through its tools."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

from pydantic import BaseModel, Field

from agentenv.contracts.base import Configured
from agentenv.contracts.base import SettingsT as S


class ToolAccess(Protocol):
    """How an agent sees a world, wherever it runs: the role's tools and a way to call them."""

    def list_tools(self) -> list[dict[str, Any]]: ...

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class AgentResponse(BaseModel):
    text: str = ""
    structured: dict[str, Any] | None = None
    files: dict[str, str] = Field(default_factory=dict)


class AgentKind(Configured[S], ABC):
    """An agent instance is made from its `Settings` (validated, typed `self.settings`); `respond` runs one prompt
    to completion."""

    @abstractmethod
    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse: ...
