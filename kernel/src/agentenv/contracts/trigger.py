"""Trigger kinds decide *when* a world rule fires; the world runs the rule's actions.

The runtime's kinds (`time`, `tool_call`, `state`, `persona`) register through the same hook as a plugin's
would. What a kind may ask of the world is `WorldView`, so this contract does not depend on the runtime.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from agentenv.contracts.base import Configured
from agentenv.contracts.base import SettingsT as S


class WorldView(Protocol):
    """What a trigger kind may read of the world it watches."""

    def now(self) -> datetime:
        """The world's virtual time (UTC)."""
        ...

    def query(self, env: str, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a read-only SQL query on one env's state."""
        ...


@dataclass(frozen=True)
class Message:
    """A message someone sent inside the world (an email, a Slack post), as the env that carried it says."""

    env: str
    sender: str
    recipients: tuple[str, ...]
    text: str
    ref: dict[str, Any] = field(default_factory=dict)
    """Whatever the env needs to reply in the same thread (message id, channel, …)."""


@dataclass(frozen=True)
class ToolCallEvent:
    """A tool call the world just finished, successful (`error` None) or refused."""

    role: str
    tool: str
    args: dict[str, Any]
    result: Any
    error: dict[str, Any] | None
    message: Message | None = None
    by_trigger: str | None = None


class TriggerKind(Configured[S], ABC):
    """One armed trigger condition. `Settings` validates the `when` table of a trigger definition.

    Override `next_due` for time-driven kinds and `on_event` for kinds that react to what happens.
    Both must be deterministic functions of their inputs so firing replays exactly.
    """

    def next_due(self, after: datetime) -> datetime | None:
        """The first virtual time strictly after `after` at which this fires, or None."""
        return None

    def on_event(self, event: ToolCallEvent, world: WorldView) -> bool:
        """Whether this event (and the world state after it) fires the trigger."""
        return False

    def repeats(self) -> bool:
        """Whether it keeps firing by its own settings (a trigger's `repeat: true` also makes it repeat)."""
        return False
