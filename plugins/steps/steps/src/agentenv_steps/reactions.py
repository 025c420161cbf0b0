"""Deterministic reactions of the simulated person talking to an agent (`register_agent_triggers`).

`prompt_agent` asks an agent's reactions, after each answer, whether the simulated user says something
scripted next: on the Nth answer, when the answer matches a regex, or when a world trigger has fired
since the previous answer. This module imports nothing from the other step modules, so `agents.py`
can use it without an import cycle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reaction:
    id: str
    reply: str
    turn: int | None = None
    match: str | None = None
    trigger: str | None = None
    repeat: bool = False
    fired: int = 0


@dataclass
class AgentReactions:
    """The reactions registered on one deployed agent, with what has fired so far."""

    reactions: list[Reaction] = field(default_factory=list)
    seen: int = 0
    """How many trajectory events were already looked at for `trigger` reactions."""

    def add(self, reaction: Reaction) -> None:
        if any(r.id == reaction.id for r in self.reactions):
            raise ValueError(f"an agent trigger with id {reaction.id!r} is already registered on this agent")
        self.reactions.append(reaction)

    def react(self, turn: int, reply: str, world: Any) -> Reaction | None:
        """The first reaction that holds after answer number `turn` (1-based) with text `reply`, if any."""
        events = world.trajectory.events
        if self.seen > len(events):  # the world was reset: its trajectory started over
            self.seen = 0
        fired_now = {e.get("trigger") for e in events[self.seen :] if e.get("kind") == "trigger"}
        self.seen = len(events)
        for reaction in self.reactions:
            if reaction.fired and not reaction.repeat:
                continue
            if reaction.turn is not None and reaction.turn != turn:
                continue
            if reaction.match is not None and not re.search(reaction.match, reply, re.IGNORECASE | re.DOTALL):
                continue
            if reaction.trigger is not None and reaction.trigger not in fired_now:
                continue
            reaction.fired += 1
            return reaction
        return None
