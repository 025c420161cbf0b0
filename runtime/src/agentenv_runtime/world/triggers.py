"""Trigger definitions, their actions, and the kernel's four trigger kinds.

A trigger is `{id, kind, when: {...}, actions: [...], repeat}`. The kind (looked up among registered
trigger kinds) validates `when` and decides when it fires; the world then runs the actions in order.
"""

from __future__ import annotations

import functools
import importlib
import re
from datetime import datetime, time, timedelta
from typing import Any, ClassVar, Literal

from agentenv.contracts import ToolCallEvent, TriggerKind, WorldView
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_runtime.world.clock import parse_time
from agentenv_runtime.world.schedule import Distribution, WorkingHours, duration_seconds, seeded_rng


class _Strict(BaseModel):
    # Validators are built when a world first registers a trigger: most runs register none.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class CallToolAction(_Strict):
    model_config = ConfigDict(extra="forbid", defer_build=True, populate_by_name=True)
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    role: str = Field("system", alias="as", description="The role the call is made as (its tool set applies).")
    verify: dict[str, Any] = Field(
        default_factory=dict, description="Dotted path → predicate the result must meet, or the firing fails."
    )


class NlAction(_Strict):
    """An instruction in natural language for an executor agent, who acts through the world's tools."""

    text: str = Field(min_length=1, description="What the executor is asked to do ({{args.PATH}} filled in).")
    executor: str = Field("executor", description="The executor (registered with the triggers) who does it.")


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
    nl: NlAction | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Action:
        if sum(x is not None for x in (self.call_tool, self.set_tool_access, self.reply, self.nl)) != 1:
            raise ValueError("an action has exactly one of call_tool, set_tool_access, reply, nl")
        return self


class TriggerDef(_Strict):
    id: str
    kind: str
    when: dict[str, Any] = Field(default_factory=dict)
    actions: list[Action]
    repeat: bool = False
    """Event kinds fire once unless `repeat`; time kinds repeat when their `when` says `every`."""
    delay: float | str | None = None
    """Run the actions this long (a duration) after the trigger fires; meanwhile it is `queued`."""
    working_hours: WorkingHours | None = None
    """Whoever acts works these hours: a firing outside them is `deferred` to the next opening."""
    barrier: bool = False
    """Hold the tool call that fired it until the actions are done (virtual time moves to when they run)."""

    @model_validator(mode="after")
    def _delay(self) -> TriggerDef:
        if self.delay is not None and duration_seconds(self.delay, "delay") < 0:
            raise ValueError("delay: a delay cannot be negative")
        return self

    @property
    def delay_seconds(self) -> float:
        return duration_seconds(self.delay, "delay") if self.delay is not None else 0.0


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
    model_config = ConfigDict(extra="forbid", defer_build=True, populate_by_name=True)
    at: str = Field(
        description="An ISO 8601 time, or `HH:MM[:SS]` for the next such time of day (UTC unless the clock's zone)."
    )
    every: float | str | Distribution | None = Field(
        None,
        description="Repeat: a fixed gap (seconds, `2h`, `PT2H`) or a seeded distribution "
        '(`{dist = "exponential", mean = "2h"}`, `uniform` with `min`/`max`, `normal` with `mean`/`sd`).',
    )
    times: int | None = Field(None, gt=0, alias="count", description="Stop after this many firings.")
    until: str | None = Field(None, description="No firing after this ISO 8601 time.")
    offset: float | str | None = Field(None, description="Shift every firing by this duration (the first too).")

    @model_validator(mode="after")
    def _parse(self) -> TimeWhen:
        if not re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", self.at):
            parse_time(self.at, field="at")
        if self.until is not None:
            parse_time(self.until, field="until")
        if isinstance(self.every, int | float | str) and duration_seconds(self.every, "every") <= 0:
            raise ValueError("every: the gap must be more than zero")
        if self.offset is not None:
            duration_seconds(self.offset, "offset")
        return self


class TimeTrigger(TriggerKind[TimeWhen]):
    name = "time"
    description = "At a virtual time, once or repeating (a fixed gap or a seeded random one), with count/until/offset."
    Settings = TimeWhen

    seed: int = 0
    key: str = ""
    anchor: datetime | None = None
    """Set by the world when it arms the trigger: the seed and id its draws use, and when it was armed (which
    `HH:MM` a random schedule starts from, so the schedule does not move as time goes by)."""

    def bind(self, seed: int, key: str, anchor: datetime) -> None:
        self.seed, self.key, self.anchor = seed, key, anchor
        self._random: list[datetime] = []

    def repeats(self) -> bool:
        return self.settings.every is not None

    @functools.cached_property
    def _parsed(self) -> tuple[time | datetime, float | None, datetime | None, timedelta]:
        """(`at` as a time of day or an instant, `every` in seconds when fixed, `until`, `offset`), parsed once:
        a week of firings asks for the next due time thousands of times."""
        when = self.settings
        daily = re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", when.at)
        at: time | datetime = time.fromisoformat(when.at.zfill(5)) if daily else parse_time(when.at, field="at")
        every = duration_seconds(when.every, "every") if isinstance(when.every, int | float | str) else None
        until = parse_time(when.until, field="until") if when.until is not None else None
        offset = timedelta(seconds=duration_seconds(when.offset, "offset")) if when.offset else timedelta(0)
        return at, every, until, offset

    def _first(self, after: datetime) -> datetime:
        when = self.settings
        at, _, _, offset = self._parsed
        if isinstance(at, time):
            base = self.anchor if isinstance(when.every, Distribution) and self.anchor is not None else after
            first = datetime.combine(base.date(), at, base.tzinfo)
            if first <= base and when.every is None:
                first += timedelta(days=1)
        else:
            first = at
        return first + offset

    def next_due(self, after: datetime) -> datetime | None:
        due = self._random_due(after) if isinstance(self.settings.every, Distribution) else self._fixed_due(after)
        until = self._parsed[2]
        if due is not None and until is not None and due > until:
            return None
        return due

    def _fixed_due(self, after: datetime) -> datetime | None:
        first = self._first(after)
        if first > after:
            return first
        every = self._parsed[1]
        if every is None:
            return None
        steps = int((after - first).total_seconds() // every) + 1
        return first + timedelta(seconds=steps * every)

    def _random_due(self, after: datetime) -> datetime | None:
        """Firing n is at first + the sum of n seeded draws; the times are made once and kept."""
        dist = self.settings.every
        assert isinstance(dist, Distribution)
        limit = self._parsed[2]
        times: list[datetime] = self.__dict__.setdefault("_random", [])
        if not times:
            times.append(self._first(self.anchor or after))
        while times[-1] <= after:
            if self.settings.times is not None and len(times) >= self.settings.times:
                return None
            if limit is not None and times[-1] > limit:
                return None
            gap = dist.draw(seeded_rng(self.seed, self.key, len(times)))
            times.append(times[-1] + timedelta(seconds=gap))
        low, high = 0, len(times) - 1
        while low < high:  # the first kept time after `after`
            mid = (low + high) // 2
            low, high = (mid + 1, high) if times[mid] <= after else (low, mid)
        return times[low]


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

    def watched_tools(self) -> list[str]:
        """The tools whose calls may fire it: the world asks it about those calls only."""
        return [self.settings.tool] if isinstance(self.settings.tool, str) else list(self.settings.tool)

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
