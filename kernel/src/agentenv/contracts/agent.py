"""Agent kinds: anything that acts in a world through its tools."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, Field

from agentenv.contracts.base import Contribution

S = TypeVar("S", bound=BaseModel)


class ToolAccess(Protocol):
    """How an agent sees a world, wherever it runs: the role's tools and a way to call them."""

    def list_tools(self) -> list[dict[str, Any]]: ...

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class AgentResponse(BaseModel):
    text: str = ""
    structured: dict[str, Any] | None = None
    files: dict[str, str] = Field(default_factory=dict)


class AgentKind(Contribution, ABC, Generic[S]):
    """An agent instance is made from its `Settings`; `respond` runs one prompt to completion."""

    def __init__(self, settings: S) -> None:
        self.settings = settings

    @abstractmethod
    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse: ...
