"""Trigger definitions, their actions, and the kernel's four trigger kinds.

A trigger is `{id, kind, when: {...}, actions: [...], repeat}`. The kind (looked up among registered
trigger kinds) validates `when` and decides when it fires; the world then runs the actions in order.
"""

from __future__ import annotations

import importlib
import re
from datetime import datetime, time, timedelta
from typing import Any, ClassVar, Literal

from agentenv.contracts import ToolCallEvent, TriggerKind, WorldView
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_runtime.world.clock import parse_time


class _Strict(BaseModel):
    # Validators are built when a world first registers a trigger: most runs register none.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class CallToolAction(_Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    role: str = "system"


class ToolAccessAction(_Strict):
    role: str
    enable: list[str] = Field(default_factory=list)
    disable: list[str] = Field(default_factory=list)


class ReplyAction(_Strict):
    """A simulated person answers the message that fired the trigger (same app, same thread)."""

    text: str
    sender: str | None = None
    """Who answers; defaults to the persona of a persona trigger or the message's first recipient."""
    llm: bool = False
    """Let the configured model write the reply in the persona's voice (`text` is then the instruction)."""


class Action(_Strict):
    call_tool: CallToolAction | None = None
    set_tool_access: ToolAccessAction | None = None
    reply: ReplyAction | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Action:
        if sum(x is not None for x in (self.call_tool, self.set_tool_access, self.reply)) != 1:
            raise ValueError("an action has exactly one of call_tool, set_tool_access, reply")
        return self


class TriggerDef(_Strict):
    id: str
    kind: str
    when: dict[str, Any] = Field(default_factory=dict)
    actions: list[Action]
    repeat: bool = False
    """Event kinds fire once unless `repeat`; time kinds repeat when their `when` says `every`."""


# ---- predicates -----------------------------------------------------------------------------------
def lookup(data: Any, path: str) -> Any:
    """`a.b.0.c` into nested dicts and lists; missing parts give None."""
    for part in path.split("."):
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def matches(value: Any, predicate: Any) -> bool:
    """A literal means equals; or {"equals"|"contains"|"regex"|"in"|"gt"|"lt": …} (all must hold)."""
    if not (isinstance(predicate, dict) and predicate and set(predicate) <= PREDICATE_OPS):
        return bool(value == predicate)
    return all(PREDICATE_OPS_IMPL[op](value, expected) for op, expected in predicate.items())


def _contains(value: Any, needle: Any) -> bool:
    if isinstance(value, list):
        return any(_contains(item, needle) for item in value)
    return str(needle).lower() in str(value).lower() if value is not None else False


PREDICATE_OPS_IMPL: dict[str, Any] = {
    "equals": lambda v, e: v == e,
    "contains": _contains,
    "regex": lambda v, e: v is not None and re.search(e, str(v), re.IGNORECASE) is not None,
    "in": lambda v, e: v in e,
    "gt": lambda v, e: v is not None and v > e,
    "lt": lambda v, e: v is not None and v < e,
}
PREDICATE_OPS = frozenset(PREDICATE_OPS_IMPL)


# ---- the built-in kinds -------------------------------------------------------------------------------
class TimeWhen(_Strict):
    at: str = Field(
        description="An ISO 8601 time, or `HH:MM[:SS]` for the next such time of day (UTC unless the clock's zone)."
    )
    every: float | None = Field(None, gt=0, description="Repeat every N virtual seconds.")
    times: int | None = Field(None, gt=0, description="Stop after this many firings.")

    @model_validator(mode="after")
    def _parse(self) -> TimeWhen:
        if not re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", self.at):
            parse_time(self.at, field="at")
        return self


class TimeTrigger(TriggerKind[TimeWhen]):
    name = "time"
    description = "At a virtual time, once or repeating."
    Settings = TimeWhen

    def repeats(self) -> bool:
        return self.settings.every is not None

    def next_due(self, after: datetime) -> datetime | None:
        when = self.settings
        if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", when.at):
            first = datetime.combine(after.date(), time.fromisoformat(when.at.zfill(5)), after.tzinfo)
            if first <= after and when.every is None:
                first += timedelta(days=1)
        else:
            first = parse_time(when.at, field="at")
        if first > after:
            return first
        if when.every is None:
            return None
        steps = int((after - first).total_seconds() // when.every) + 1
        return first + timedelta(seconds=steps * when.every)


class ToolCallWhen(_Strict):
    tool: str | list[str] = Field(description="The tool (or any of several) whose calls are watched.")
    role: str | None = Field(None, description="Only calls by this role (default: any role but system).")
    args: dict[str, Any] = Field(default_factory=dict, description="Dotted path → predicate on the arguments.")
    result: dict[str, Any] = Field(default_factory=dict, description="Dotted path → predicate on the result.")
    on: Literal["success", "error", "any"] = Field("success", description="Fire on successful, refused or any calls.")


class ToolCallTrigger(TriggerKind[ToolCallWhen]):
    name = "tool_call"
    description = "A matching tool call by a watched role, with argument and result predicates."
    Settings = ToolCallWhen

    def on_event(self, event: ToolCallEvent, world: WorldView) -> bool:
        when = self.settings
        tools = [when.tool] if isinstance(when.tool, str) else when.tool
        if event.tool not in tools or event.role == "system":
            return False
        if when.role is not None and event.role != when.role:
            return False
        if (when.on == "success" and event.error) or (when.on == "error" and not event.error):
            return False
        return all(matches(lookup(event.args, p), v) for p, v in when.args.items()) and all(
            matches(lookup(event.result, p), v) for p, v in when.result.items()
        )


class StateWhen(_Strict):
    env: str | None = Field(None, description="Env whose database `sql` runs on.")
    sql: str | None = Field(None, description="A query whose first value decides (truthy, or == equals).")
    equals: Any = Field(None, description="The value the query's first column must equal (default: truthy).")
    python: str | None = Field(None, description="`module:function(world) -> bool`, instead of sql.")

    @model_validator(mode="after")
    def _one_check(self) -> StateWhen:
        if (self.sql is None) == (self.python is None):
            raise ValueError("give exactly one of `sql` (with `env`) or `python`")
        if self.sql is not None and self.env is None:
            raise ValueError("`sql` needs `env`: the env whose state it reads")
        return self


class StateTrigger(TriggerKind[StateWhen]):
    name = "state"
    description = "A check on the world becomes true, however it got there."
    Settings = StateWhen
    edge: ClassVar[bool] = True

    def on_event(self, event: ToolCallEvent, world: WorldView) -> bool:
        return self.holds(world)

    def holds(self, world: WorldView) -> bool:
        when = self.settings
        if when.python:
            module, _, attr = when.python.partition(":")
            return bool(getattr(importlib.import_module(module), attr)(world))
        rows = world.query(when.env or "", when.sql or "")
        value = next(iter(rows[0].values()), None) if rows else None
        return bool(value) if when.equals is None else bool(value == when.equals)


class PersonaWhen(_Strict):
    persona: str = Field(description="The simulated person (email address or user id) who reacts.")
    match: str = Field(".*", description="Regex (case-insensitive) on what the agent told them.")
    env: str | None = Field(None, description="Only messages carried by this app.")


class PersonaTrigger(TriggerKind[PersonaWhen]):
    name = "persona"
    description = "A simulated person reacts when what the agent tells them matches."
    Settings = PersonaWhen

    def on_event(self, event: ToolCallEvent, world: WorldView) -> bool:
        when = self.settings
        message = event.message
        if message is None or event.role == "system":
            return False
        if when.env is not None and message.env != when.env:
            return False
        persona = when.persona.lower()
        if persona not in (r.lower() for r in message.recipients):
            return False
        return re.search(when.match, message.text, re.IGNORECASE | re.DOTALL) is not None


BUILTIN_TRIGGER_KINDS: tuple[type[TriggerKind[Any]], ...] = (
    TimeTrigger,
    ToolCallTrigger,
    StateTrigger,
    PersonaTrigger,
)
