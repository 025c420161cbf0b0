"""The part of a run a rubric grades: everything, or the conversation as it stood after turn N, with the
judge's view of the tool calls narrowed by a filter.

`up_to_turn = N` cuts the trajectory just after the Nth `agent_turn` event (prompt_agent records one per turn)
and takes the agent's reply of turn N as the response, so a rubric can grade an early turn of a long
conversation. The `trajectory_filter` chooses which tool calls the judge reads (tools, roles, failed calls);
deterministic `tool_called` checks see every call up to the cut-off, because they already name what they want.
"""

from __future__ import annotations

from typing import Any

from agentenv.contracts import StepFailed
from pydantic import BaseModel, ConfigDict, Field


class TrajectoryFilter(BaseModel):
    """Which tool calls the judge is shown."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] | None = Field(None, description="Only calls of these tools (default: every tool).")
    exclude_tools: list[str] = Field(default_factory=list, description="Never calls of these tools.")
    roles: list[str] | None = Field(None, description="Only calls by these roles (default: every role).")
    errors: bool = Field(True, description="Include calls that failed (false: successful calls only).")

    def keeps(self, event: dict[str, Any]) -> bool:
        tool, role = event.get("tool"), event.get("role")
        if self.tools is not None and tool not in self.tools:
            return False
        if tool in self.exclude_tools or (self.roles is not None and role not in self.roles):
            return False
        return self.errors or not event.get("error")


def events_up_to_turn(events: list[dict[str, Any]], turn: int | None) -> list[dict[str, Any]]:
    """The events up to and including the `turn`th agent turn (all of them when `turn` is None)."""
    if turn is None:
        return list(events)
    seen = 0
    for index, event in enumerate(events):
        if event.get("kind") == "agent_turn":
            seen += 1
            if seen == turn:
                return list(events[: index + 1])
    raise StepFailed(
        f"field `up_to_turn`: the conversation has {seen} agent turn(s), so turn {turn} cannot be graded; "
        f"use a number from 1 to {seen}"
        if seen
        else "field `up_to_turn`: the world's trajectory has no agent turns (grade a prompt_agent conversation)"
    )


def response_at_turn(output: dict[str, Any], turn: int | None, response: str | None) -> str | None:
    """The agent's reply of turn `turn` of a prompt step's output (its final response when `turn` is None)."""
    if turn is None:
        return response
    turns = output.get("turns")
    if not isinstance(turns, list) or len(turns) < turn:
        had = len(turns) if isinstance(turns, list) else 0
        raise StepFailed(
            f"field `up_to_turn`: the prompt step's conversation has {had} turn(s), so turn {turn} cannot be "
            f"graded; use a number from 1 to {had}"
            if had
            else "field `up_to_turn`: the prompt step recorded no turns"
        )
    reply = turns[turn - 1].get("agent") if isinstance(turns[turn - 1], dict) else None
    return str(reply) if reply is not None else None
