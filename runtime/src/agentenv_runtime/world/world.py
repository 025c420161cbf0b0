"""A world: several envs behind one tool namespace, with a shared clock, triggers, RBAC and a trajectory.

Every tool call goes through `World.call`: access check, argument validation (by the env), the call in
a savepoint, the trajectory record, then the triggers the event fires. Hot-path work is kept to
dictionary lookups so the overhead over calling the tool function directly stays in microseconds.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agentenv.contracts import Message, ToolAccess, ToolCallEvent, TriggerKind
from pydantic import ValidationError

from agentenv_runtime.env.artifact import Artifact, ArtifactError
from agentenv_runtime.env.env import Env
from agentenv_runtime.env.tool import CALL_CONTEXT, ToolContext, ToolSpec, argument_errors
from agentenv_runtime.world.arguments import DEFAULT_LIMITS, ArgumentLimits, argument_problem, safe_text, safe_value
from agentenv_runtime.world.clock import END_OF_TIME, START_OF_TIME, ClockMode, VirtualClock, shifted
from agentenv_runtime.world.rbac import DEFAULT_ROLE, Rbac
from agentenv_runtime.world.renamed import renamer, with_names
from agentenv_runtime.world.schedule import WorkingHours, zone_named
from agentenv_runtime.world.trajectory import Trajectory
from agentenv_runtime.world.trigger_index import Armed as _Armed
from agentenv_runtime.world.trigger_index import Pending, TriggerIndex, event_from_state, event_state
from agentenv_runtime.world.triggers import BUILTIN_TRIGGER_KINDS, Action, TriggerDef, lookup, matches

MAX_TRIGGER_DEPTH = 8
SNAPSHOT_MAGIC = b"AEWORLD1"
GET_TIME = "get_time"
Responder = Callable[[str, Message, str], str]
"""(persona, message being answered, instruction) → reply text; set when a model is configured."""
Executor = Callable[[str], str]
"""An executor agent: given an `nl` action's instruction, it acts through the world's tools; returns its reply."""


class WorldError(ValueError):
    """A world definition that cannot work (ambiguous names, unknown env or trigger kind, bad trigger)."""


@dataclass(frozen=True)
class ToolOutcome:
    result: Any = None
    error: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": True, "result": self.result} if self.error is None else {"ok": False, "error": self.error}


@dataclass(frozen=True)
class WorldCheckpoint:
    """A world's state held in memory: each env's state bytes (shared, never copied, with the env when it
    is unchanged) and the rules. What RL resets and forks go through; `World.snapshot()` is its bytes form."""

    envs: Mapping[str, bytes]
    rules: Mapping[str, Any]


class World:
    def __init__(
        self,
        envs: Iterable[Env],
        *,
        name: str | None = None,
        roles: Mapping[str, Any] | None = None,
        trigger_kinds: Mapping[str, type[TriggerKind[Any]]] | None = None,
        seed: int = 0,
        clock: VirtualClock | None = None,
    ) -> None:
        self.envs: dict[str, Env] = {}
        for env in envs:
            if env.name in self.envs:
                raise WorldError(f"env {env.name!r} appears twice in the world; compose each app once")
            self.envs[env.name] = env
        self.name = name or "+".join(self.envs)
        self.seed = seed
        self.episode: str | None = None
        """Whose episode this world is (a run's or an RL episode's id), as its tools see it in `ToolContext`."""
        self.clock = clock or VirtualClock()
        for env in self.envs.values():
            env.clock = self.clock
        self.rbac = Rbac(dict(roles or {}))
        self.trigger_kinds = dict(trigger_kinds or {k.name: k for k in BUILTIN_TRIGGER_KINDS})
        self.triggers: dict[str, _Armed] = {}
        self.pending: list[Pending] = []
        """Firings whose actions wait for their time (a delay, working hours), in the order they will run."""
        self._index: TriggerIndex | None = None
        self.trajectory = Trajectory()
        self.responder: Responder | None = None
        self.executors: dict[str, tuple[Executor, WorkingHours | None]] = {}
        """Executor agents for `nl` actions, by name, with the hours they work (not state: wired by the task)."""
        self.on_tool_call: Callable[[dict[str, Any]], None] | None = None
        """Told of every recorded tool call (the `agentenv_tool_called` hook when a plugin implements it)."""
        self.rewind_points: dict[int, WorldCheckpoint] | None = None
        """When kept (`keep_rewind_points`): the world's checkpoint right after each call made through `call`, by
        the trajectory position of that call, for `rewind`."""
        self.argument_limits: ArgumentLimits = DEFAULT_LIMITS
        """Bounds every call's arguments are checked against before the tool runs (a gateway tightens them)."""
        self.tools: dict[str, tuple[Env, ToolSpec]] = self._namespace()
        self._renames: tuple[dict[str, tuple[Env, ToolSpec]], dict[str, Any]] | None = None
        for env in self.envs.values():
            env.joined(self)

    def _namespace(self) -> dict[str, tuple[Env, ToolSpec]]:
        """One flat tool namespace: a name two apps share is qualified as `<env>_<tool>` for both."""
        owners: dict[str, list[Env]] = {}
        for env in self.envs.values():
            for tool_name in env.tool_specs():
                owners.setdefault(tool_name, []).append(env)
        table: dict[str, tuple[Env, ToolSpec]] = {}
        for tool_name, envs in owners.items():
            for env in envs:
                public = tool_name if len(envs) == 1 else f"{env.name}_{tool_name}"
                if public in table or public == GET_TIME:
                    raise WorldError(f"tool name {public!r} is ambiguous in world {self.name!r}; rename one")
                table[public] = (env, env.tool_specs()[tool_name])
        return table

    def add_env(self, env: Env) -> None:
        """Add an app to a built world (an upstream server's tools, say): same clock, one namespace."""
        if env.name in self.envs:
            raise WorldError(f"world {self.name!r} already has an env named {env.name!r}; pick another name")
        env.clock = self.clock
        self.envs[env.name] = env
        self.tools = self._namespace()
        env.joined(self)

    def remove_env(self, name: str) -> Env:
        """Take an app out of the world (one that could not be started fully, say); its tools go with it."""
        env = self.env(name)
        del self.envs[name]
        self.tools = self._namespace()
        return env

    def role_problems(self) -> list[tuple[str, str]]:
        """(field, message) for each role list naming a tool the world lacks (`roles.NAME.tools` or
        `roles.NAME.deny`): a typo in `deny` would otherwise grant the tool."""
        known = [*self.tools, GET_TIME]
        problems = []
        for role, spec in self.rbac.state().items():
            for field in ("tools", "deny"):
                unknown = [t for t in spec[field] if t != "*" and t not in known]
                if unknown:
                    close = difflib.get_close_matches(unknown[0], known, n=1)
                    hint = f"; did you mean {close[0]!r}?" if close else f" (tools: {', '.join(sorted(known))})"
                    names = ", ".join(map(repr, unknown))
                    problems.append((f"roles.{role}.{field}", f"no tool {names} in world {self.name!r}{hint}"))
        return problems

    def check_roles(self) -> None:
        """Refuse a role naming a tool the world lacks (the first of `role_problems`)."""
        for field, message in self.role_problems()[:1]:
            raise WorldError(f"{field}: {message}")

    def env(self, name: str) -> Env:
        if name not in self.envs:
            raise WorldError(f"world {self.name!r} has no env {name!r} (envs: {', '.join(self.envs)})")
        return self.envs[name]

    # ---- tools -------------------------------------------------------------------------------------
    def tool_names(self, role: str = DEFAULT_ROLE) -> list[str]:
        """The names of the role's tools; cheaper than `list_tools`, which builds every input schema."""
        names = [public for public in self.tools if self.rbac.permits(role, public)]
        return [*names, GET_TIME] if self.clock.armed and self.rbac.permits(role, GET_TIME) else names

    def list_tools(self, role: str = DEFAULT_ROLE) -> list[dict[str, Any]]:
        """The role's tools with their input schemas (tools outside the role never appear)."""
        tools = [self.describe_tool(public) for public in self.tools if self.rbac.permits(role, public)]
        if self.clock.armed and self.rbac.permits(role, GET_TIME):
            tools.append(
                {
                    "name": GET_TIME,
                    "description": "The current time in the world, in its time zone or the one asked for.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "time_zone": {"type": "string", "description": "An IANA time zone, e.g. Europe/Berlin."}
                        },
                        "additionalProperties": False,
                    },
                }
            )
        return tools

    def describe_tool(self, public: str) -> dict[str, Any]:
        """Tool `public` as agents see it (MCP name, description, input schema); where composition renamed its
        env's tools, its descriptions name them as the world does (see `renamed`)."""
        env, spec = self.tools[public]
        described = spec.describe() | {"name": public}
        if self._renames is None or self._renames[0] is not self.tools:  # worked out once per namespace
            by_env: dict[str, dict[str, str]] = {}
            for name, (owner, owned) in self.tools.items():
                if name != owned.name:
                    by_env.setdefault(owner.name, {})[owned.name] = name
            self._renames = (self.tools, {env_name: (r, renamer(r)) for env_name, r in by_env.items()})
        renames, pattern = self._renames[1].get(env.name, ({}, None))
        return with_names(described, renames, pattern) if pattern is not None else described

    def tool_access(self, role: str = DEFAULT_ROLE) -> ToolAccess:
        """How an agent acting as `role` reaches this world (a served world answers with a network client)."""
        return WorldToolAccess(self, role)

    def now(self) -> datetime:
        """The world's virtual time (UTC)."""
        return self.clock.now()

    def query(self, env: str, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a SQL query on one env's state (what state triggers and verifiers read)."""
        return self.env(env).query(sql, tuple(params))

    def fire_due(self) -> int:
        """Fire the time triggers the clock has passed (also done before every tool call); how many fired."""
        return self._fire_due()

    def call(self, tool: str, arguments: dict[str, Any] | None = None, role: str = DEFAULT_ROLE) -> ToolOutcome:
        """Call a tool as `role` through every world rule."""
        self._fire_due()
        position = len(self.trajectory.events)  # the call's own event comes first: the tool records nothing
        outcome = self._call(tool, arguments or {}, role, None, 0)
        if self.rewind_points is not None:
            self.rewind_points[position] = self.checkpoint()
        return outcome

    def keep_rewind_points(self) -> None:
        """From now on keep a checkpoint after every call (what changed is serialized: opt in, it costs)."""
        if self.rewind_points is None:
            self.rewind_points = {}

    def rewind(self, position: int) -> int:
        """Put the world back as it was right after the tool call at trajectory position `position` and what it
        set off (triggers, their actions): state, clock, roles and triggers. The trajectory keeps everything
        that happened and records the rewind; rewind points after `position` are dropped (that branch is
        abandoned). Returns how many were dropped; a WorldError says why a position cannot be rewound to."""
        points = self.rewind_points
        if points is None:
            raise WorldError("this world keeps no rewind points (keep_rewind_points() before the calls to rewind to)")
        if position not in points:
            raise WorldError(self._not_a_point(position))
        self.restore_checkpoint(points[position])
        later = [p for p in points if p > position]
        for kept in later:
            del points[kept]
        self.trajectory.record("rewind", self.clock.now().isoformat(), to_event=position, dropped=len(later))
        return len(later)

    def _not_a_point(self, position: int) -> str:
        events = self.trajectory.events
        calls = sorted(self.rewind_points or {})[-10:]
        choose = f"rewind to a tool call's position (the latest: {', '.join(map(str, calls)) or 'none yet'})"
        if not 0 <= position < len(events):
            return f"the trajectory has no event {position} (it has {len(events)}); {choose}"
        event = events[position]
        if event.get("kind") != "tool_call":
            return f"event {position} is a {event.get('kind')!r} event, not a tool call; {choose}"
        if event.get("trigger"):
            before = max((p for p in self.rewind_points or {} if p < position), default=None)
            return (
                f"tool call {position} was made by trigger {event['trigger']!r} inside an earlier call; rewind to "
                f"that call ({before})" if before is not None else f"tool call {position} was made by a trigger"
            )
        return f"tool call {position} was made before rewind points were kept, or was rewound past; {choose}"

    def _call(self, tool: str, args: dict[str, Any], role: str, by: str | None, depth: int) -> ToolOutcome:
        now = self.clock.now().isoformat()
        entry = self.tools.get(tool)
        message = None
        result: Any
        error: dict[str, Any] | None
        problem = argument_problem(args, self.argument_limits)
        if problem is not None or tool != safe_text(tool):
            tool, args = safe_text(tool), safe_value(args)  # what is recorded and echoed must be valid text
        if not self.rbac.permits(role, tool):
            result, error = (
                None,
                {
                    "code": "forbidden",
                    "message": f"role {role!r} may not call {tool!r}; it is not in the role's tool set",
                },
            )
        elif tool == GET_TIME and self.clock.armed:
            result, error = self._get_time(args)
        elif entry is None:
            result, error = None, {"code": "unknown_tool", "message": unknown_tool_message(tool, self)}
        elif problem is not None:
            result, error = None, problem
        else:
            env, spec = entry
            try:
                token = CALL_CONTEXT.set(ToolContext(role, self.clock.now(), self.episode, by))
                try:
                    result, error = env.call(spec.name, args)
                finally:
                    CALL_CONTEXT.reset(token)
            except Exception as exc:  # an env that lets an exception out must not take the caller down
                result, error = None, {"code": "tool_failed", "message": f"{tool} failed: {type(exc).__name__}: {exc}"}
            if error is None and not spec.read_only and self._watch_messages:
                message = env.describe_message(spec.name, args, result)
        event = self.trajectory.record(
            "tool_call", now, role=role, tool=tool, args=args, result=result, error=error, trigger=by
        )
        if self.on_tool_call is not None:
            self.on_tool_call(event)
        outcome = ToolOutcome(result, error)
        if self.triggers and (candidates := self.index.candidates(tool)):  # most calls concern no trigger
            self._react(ToolCallEvent(role, tool, args, result, error, message, by), depth, candidates)
        return outcome

    def _get_time(self, args: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        extra = [k for k in args if k != "time_zone"]
        zone = args.get("time_zone")
        if extra or (zone is not None and not isinstance(zone, str)):
            fields = extra or ["time_zone"]
            return None, {
                "code": "invalid_arguments",
                "message": "get_time takes only `time_zone` (an IANA name such as Europe/Berlin)",
                "errors": [{"field": k, "message": "Extra inputs are not permitted"} for k in fields],
            }
        now = self.clock.now()
        if zone is None:
            return {
                "utc": now.isoformat(),
                "timezone": self.clock.timezone,
                "local": self.clock.local(now).isoformat(),
            }, None
        try:
            local = now.astimezone(zone_named(zone))
        except ValueError as exc:
            return None, {
                "code": "invalid_arguments",
                "message": str(exc),
                "errors": [{"field": "time_zone", "message": str(exc)}],
            }
        except OverflowError:
            local = now
        return {"utc": now.isoformat(), "timezone": zone, "local": local.isoformat()}, None

    @property
    def _watch_messages(self) -> bool:
        return self.index.watch_messages

    @property
    def index(self) -> TriggerIndex:
        """What the hot path reads: triggers by the tool they watch, and the earliest due time. Rebuilt after
        any change to the triggers or their schedule, so a tool call costs dictionary lookups however many
        triggers are armed."""
        if self._index is None:
            self._index = TriggerIndex(self.triggers, self.pending)
        return self._index

    def _changed(self) -> None:
        """Triggers were added, removed or restored: the index is rebuilt when next read."""
        self._index = None

    def _pending_changed(self) -> None:
        if self._index is not None:
            self._index.pending_changed()

    # ---- triggers ----------------------------------------------------------------------------------
    def add_trigger(self, definition: TriggerDef | dict[str, Any]) -> None:
        """Validate and arm a trigger; errors name the trigger id and field."""
        try:
            trigger = definition if isinstance(definition, TriggerDef) else TriggerDef.model_validate(definition)
        except ValidationError as exc:
            raise WorldError(f"trigger {dict(definition).get('id', '?')}: {argument_errors(exc)['message']}") from exc
        kind_cls = self.trigger_kinds.get(trigger.kind)
        if kind_cls is None:
            raise WorldError(
                f"trigger {trigger.id}: unknown kind {trigger.kind!r} "
                f"(installed: {', '.join(sorted(self.trigger_kinds))})"
            )
        if trigger.id in self.triggers:
            raise WorldError(f"trigger {trigger.id}: a trigger with this id is already registered")
        try:
            settings = kind_cls.Settings.model_validate(trigger.when)
        except ValidationError as exc:
            raise WorldError(f"trigger {trigger.id}: when.{argument_errors(exc)['message']}") from exc
        for action in trigger.actions:
            if action.call_tool and action.call_tool.tool not in self.tools and action.call_tool.tool != GET_TIME:
                raise WorldError(f"trigger {trigger.id}: actions.call_tool.tool: no tool {action.call_tool.tool!r}")
            if action.set_tool_access and (problem := self.rbac.unknown(action.set_tool_access.role)):
                raise WorldError(f"trigger {trigger.id}: actions.set_tool_access.role: {problem}")
        armed = _Armed(trigger, kind_cls(settings))
        self._bind(armed, self.clock.now())
        if getattr(kind_cls, "edge", False):
            holds = getattr(armed.kind, "holds", None)
            armed.last_holds = bool(holds(self)) if holds else False
        self.triggers[trigger.id] = armed
        self._changed()
        self._schedule(armed, shifted(self.clock.now(), -1e-6))

    def _bind(self, armed: _Armed, anchor: datetime) -> None:
        """Give a kind that draws random times its seed, key and arming time (kept in every snapshot)."""
        armed.anchor = anchor
        bind = getattr(armed.kind, "bind", None)
        if bind is not None:
            bind(self.seed, armed.definition.id, anchor)

    def set_clock(
        self,
        start: str | datetime | None = None,
        *,
        mode: ClockMode | None = None,
        rate: float | None = None,
        timezone: str | None = None,
    ) -> None:
        """Set (arm) the shared clock and re-plan every time trigger against the new time. Moving an armed clock
        forward fires the time triggers it passes first, each at its own time (as `advance` does): a jump
        past a trigger is the clock passing it."""
        if start is not None and self.clock.armed:
            from agentenv_runtime.world.clock import parse_time

            target = parse_time(start)
            if target > self.clock.now():
                self._fire_due(target)
        self.clock.set(start, mode=mode, rate=rate, timezone=timezone)
        after = shifted(self.clock.now(), -1e-6)
        for armed in self.triggers.values():
            self._schedule(armed, after)

    def set_tool_access(
        self, role: str, *, enable: Iterable[str] = (), disable: Iterable[str] = (), by: str | None = None
    ) -> None:
        """Change a role's tools mid-run and record the change in the trajectory."""
        enable, disable = list(enable), list(disable)
        self.rbac.change(role, enable=enable, disable=disable)
        self.trajectory.record("access", self.clock.now().isoformat(), role=role, enable=enable, disable=disable, by=by)

    def remove_trigger(self, trigger_id: str) -> bool:
        self._changed()
        self.pending = [p for p in self.pending if p.trigger != trigger_id]
        return self.triggers.pop(trigger_id, None) is not None

    def _schedule(self, armed: _Armed, after: datetime) -> None:
        was_timed = armed.next_at is not None
        try:
            armed.next_at = armed.kind.next_due(after) if self.clock.armed and not armed.spent else None
        except OverflowError:  # the next firing would be past the end of representable time: never
            armed.next_at = None
        times = getattr(armed.kind.settings, "times", None)
        if times is not None and armed.fired >= times:
            armed.next_at = None
        if was_timed != (armed.next_at is not None):  # it moved between the timeline and the event index
            self._changed()
        elif self._index is not None:
            self._index.rescheduled(armed)

    def _next_due(self) -> _Armed | Pending | None:
        """The next thing on the timeline: a time trigger or a waiting firing (these first at a tie)."""
        return self.index.next_due()

    def _fire_due(self, until: datetime | None = None) -> int:
        """Fire time triggers and run waiting actions due by `until` (default: now), in time order, each at its
        own virtual time."""
        if not self.clock.armed or (not self.triggers and not self.pending):
            return 0
        limit = until or self.clock.now()
        earliest = self.index.earliest
        if earliest is None or earliest > limit:
            return 0
        fired = 0
        while (item := self._next_due()) is not None and _due_of(item) <= limit:
            due = _due_of(item)
            if self.clock.mode != "scaled":
                self.clock.advance_to(due)
            if isinstance(item, Pending):
                self._run_pending(item)
            else:
                self._fire(item, None, 0, at=due)
                self._schedule(item, due)
                fired += 1
        return fired

    def advance(self, seconds: float) -> int:
        """Move virtual time forward, firing every time trigger due on the way; returns how many fired."""
        if not math.isfinite(seconds):
            raise ValueError(f"seconds: {seconds} is not a finite number of seconds")
        now = self.clock.now()
        try:
            target = now + timedelta(seconds=seconds)
        except OverflowError:  # an asked-for jump past year 9999 is refused, not cut short without a word
            room = (END_OF_TIME - now).total_seconds() if seconds > 0 else (now - START_OF_TIME).total_seconds()
            raise ValueError(
                f"seconds: {seconds:g} would move the clock from {now.isoformat()} past the calendar "
                f"(years 1 to 9999); at most {room:,.0f} seconds {'forward' if seconds > 0 else 'back'} fit"
            ) from None
        fired = self._fire_due(target)
        self.clock.advance_to(target)
        return fired

    def run_until_idle(self, until: datetime | str | None = None, max_events: int = 1_000_000) -> int:
        """Event-driven: jump from one scheduled trigger to the next until none is left (or `until`)."""
        from agentenv_runtime.world.clock import parse_time

        limit = parse_time(until, field="until") if until is not None else None
        fired = 0
        steps = 0
        while fired < max_events and steps < max_events and (item := self._next_due()) is not None:
            if limit is not None and _due_of(item) > limit:
                break
            fired += self._fire_due(_due_of(item))
            steps += 1
        if limit is not None and limit > self.clock.now():
            self.clock.advance_to(limit)
        return fired

    def await_fired(self, trigger_ids: Iterable[str], within: float) -> list[str]:
        """Move virtual time on, event by event, until each trigger has fired and its actions are done (at most
        `within` seconds); the ids that had not by then (empty: all did)."""
        ids = list(trigger_ids)
        unknown = [t for t in ids if t not in self.triggers]
        if unknown:
            raise WorldError(
                f"no trigger {', '.join(map(repr, unknown))} (registered: {', '.join(self.triggers) or 'none'})"
            )
        limit = shifted(self.clock.now(), within)

        def waiting() -> list[str]:
            return [t for t in ids if self.triggers[t].fired == 0 or self.triggers[t].waiting is not None]

        while waiting() and (item := self._next_due()) is not None and _due_of(item) <= limit:
            self._fire_due(_due_of(item))
        return waiting()

    def _react(self, event: ToolCallEvent, depth: int, candidates: list[_Armed]) -> None:
        for armed in candidates:
            if not armed.enabled or armed.next_at is not None:
                continue
            if armed.spent:
                continue
            holds = armed.kind.on_event(event, self)
            if getattr(armed.kind, "edge", False):
                rising, armed.last_holds = holds and not armed.last_holds, holds
                holds = rising
            if holds:
                self._fire(armed, event, depth + 1)

    def _fire(self, armed: _Armed, event: ToolCallEvent | None, depth: int, at: datetime | None = None) -> None:
        armed.fired += 1
        armed.last_error = None
        trigger_id = armed.definition.id
        when = (at or self.clock.now()).isoformat()
        if depth > MAX_TRIGGER_DEPTH:
            armed.last_error = {"code": "trigger_loop", "message": f"nested deeper than {MAX_TRIGGER_DEPTH}"}
            self.trajectory.record(
                "trigger", when, trigger=trigger_id, trigger_kind=armed.definition.kind, error=armed.last_error
            )
            return
        run_at, waiting = self._when_actions_run(armed, at or self.clock.now())
        extra = {"waits_until": run_at.isoformat(), "status": waiting} if waiting else {}
        self.trajectory.record(
            "trigger",
            when,
            trigger=trigger_id,
            trigger_kind=armed.definition.kind,
            cause=event.tool if event else None,
            **extra,
        )
        if waiting is None:
            self._run_actions(armed, event, depth)
            return
        self.pending.append(Pending(run_at, trigger_id, event_state(event), depth, len(self.pending)))
        armed.waiting = waiting
        self._pending_changed()
        if armed.definition.barrier and event is not None:  # hold the provoking call: time moves to the actions
            self._fire_due(run_at)
            self.clock.advance_to(run_at)

    def _when_actions_run(self, armed: _Armed, fired_at: datetime) -> tuple[datetime, str | None]:
        """When a firing's actions run and why they wait (`queued` for a delay, `deferred` for working hours)."""
        definition = armed.definition
        run_at = shifted(fired_at, definition.delay_seconds) if definition.delay is not None else fired_at
        waiting = "queued" if run_at > fired_at else None
        hours = definition.working_hours or next(
            (self.executors[a.nl.executor][1] for a in definition.actions if a.nl and a.nl.executor in self.executors),
            None,
        )
        if hours is not None:
            opens = hours.next_open(run_at)
            if opens > run_at:
                run_at, waiting = opens, "deferred"
        return run_at, waiting

    def _run_pending(self, item: Pending) -> None:
        self.pending.remove(item)
        self._pending_changed()
        armed = self.triggers.get(item.trigger)
        if armed is None:
            return
        if not any(p.trigger == item.trigger for p in self.pending):
            armed.waiting = None
        self.trajectory.record("trigger_run", self.clock.now().isoformat(), trigger=item.trigger)
        self._run_actions(armed, event_from_state(item.event), item.depth)

    def _run_actions(self, armed: _Armed, event: ToolCallEvent | None, depth: int) -> None:
        armed.firing = True
        try:
            for action in armed.definition.actions:
                self._run_action(action, armed, event, depth)
        finally:
            armed.firing = False

    def _run_action(self, action: Action, armed: _Armed, event: ToolCallEvent | None, depth: int) -> None:
        trigger_id = armed.definition.id
        if action.call_tool is not None:
            call = action.call_tool
            outcome = self._call(call.tool, dict(call.args), call.role, trigger_id, depth)
            if outcome.error is not None and armed.last_error is None:
                armed.last_error = {"tool": call.tool, **outcome.error}
            elif outcome.error is None and armed.last_error is None:
                failed = [p for p, v in call.verify.items() if not matches(lookup(outcome.result, p), v)]
                if failed:
                    armed.last_error = {
                        "tool": call.tool,
                        "code": "verify_failed",
                        "message": f"{call.tool} as {call.role!r}: result {failed[0]!r} does not meet "
                        f"{call.verify[failed[0]]!r} (got {lookup(outcome.result, failed[0])!r})",
                    }
        elif action.nl is not None:
            self._run_nl(action, armed, event)
        elif action.set_tool_access is not None:
            change = action.set_tool_access
            self.set_tool_access(change.role, enable=change.enable, disable=change.disable, by=trigger_id)
        elif action.reply is not None:
            self._reply(action, armed, event, depth)

    def _reply(self, action: Action, armed: _Armed, event: ToolCallEvent | None, depth: int) -> None:
        reply = action.reply
        assert reply is not None
        now = self.clock.now().isoformat()
        message = event.message if event else None
        if message is None:
            self.trajectory.record(
                "reply",
                now,
                trigger=armed.definition.id,
                error={"code": "no_message", "message": "a reply action needs a trigger fired by a message"},
            )
            return
        sender = reply.sender or getattr(armed.kind.settings, "persona", None) or message.recipients[0]
        text = reply.text
        if reply.llm and self.responder is not None:
            try:
                text = self.responder(sender, message, reply.text)
            except Exception as exc:  # a model outage must not break the agent's tool call
                failure = {"code": "responder_failed", "message": str(exc)}
                armed.last_error = armed.last_error or failure
                self.trajectory.record("reply", now, trigger=armed.definition.id, sender=sender, error=failure)
                return
        env = self.env(message.env)
        result, error = env.atomic("reply", env.deliver_reply, message=message, sender=sender, text=text)
        if error is not None:
            armed.last_error = armed.last_error or {"action": "reply", **error}
        self.trajectory.record(
            "reply",
            now,
            trigger=armed.definition.id,
            env=env.name,
            sender=sender,
            text=text,
            result=result,
            error=error,
        )

    def _run_nl(self, action: Action, armed: _Armed, event: ToolCallEvent | None) -> None:
        """Hand the instruction to the executor agent; it acts through the tools as its own role."""
        assert action.nl is not None
        name, now = action.nl.executor, self.clock.now().isoformat()
        text = fill_event(action.nl.text, event)
        if name not in self.executors:
            known = ", ".join(self.executors) or "none"
            failure = {"code": "no_executor", "message": f"no executor {name!r} for the nl action (executors: {known})"}
            armed.last_error = armed.last_error or failure
            self.trajectory.record("nl", now, trigger=armed.definition.id, executor=name, error=failure)
            return
        try:
            reply = self.executors[name][0](text)
        except Exception as exc:  # an executor agent that fails must not break the agent's tool call
            failure = {"code": "executor_failed", "message": f"{name}: {type(exc).__name__}: {exc}"}
            armed.last_error = armed.last_error or failure
            self.trajectory.record("nl", now, trigger=armed.definition.id, executor=name, text=text, error=failure)
            return
        self.trajectory.record("nl", now, trigger=armed.definition.id, executor=name, text=text, reply=reply)

    # ---- state -------------------------------------------------------------------------------------
    def _rules_state(self) -> dict[str, Any]:
        return {
            "clock": self.clock.state(),
            "rbac": self.rbac.state(),
            "triggers": [
                {
                    "definition": a.definition.model_dump(),
                    "fired": a.fired,
                    "last_holds": a.last_holds,
                    "enabled": a.enabled,
                    "last_error": a.last_error,
                    "next_at": a.next_at.isoformat() if a.next_at else None,
                    **({"waiting": a.waiting} if a.waiting else {}),
                    **({"anchor": a.anchor.isoformat()} if a.anchor else {}),
                }
                for a in self.triggers.values()
            ],
            **({"pending": [p.state() for p in self.pending]} if self.pending else {}),
        }

    def checkpoint(self) -> WorldCheckpoint:
        """The world's state in memory, in the time it takes to serialize the envs that changed (none, for a
        world just restored): what a trainer keeps to reset to."""
        return WorldCheckpoint({name: env.snapshot() for name, env in self.envs.items()}, self._rules_state())

    def snapshot(self) -> bytes:
        """The whole world (every env's state, clock, roles, triggers) as bytes; the trajectory is not state."""
        point = self.checkpoint()
        sizes = {name: len(blob) for name, blob in point.envs.items()}
        header = json.dumps({"rules": point.rules, "sizes": sizes}).encode()
        return SNAPSHOT_MAGIC + struct.pack(">I", len(header)) + header + b"".join(point.envs.values())

    def restore_checkpoint(self, point: WorldCheckpoint, *, hold: bool = False) -> None:
        """Put back a checkpoint. Envs whose state is already its bytes are left alone, so resetting after a
        rollout costs only the apps the rollout changed.

        With `hold`, each app keeps this state as a savepoint (`Env.hold`), and the next `hold` restore of the
        same checkpoint rolls back to it instead of copying the bytes in: the fast path for resetting to one
        start thousands of times."""
        if set(point.envs) != set(self.envs):
            raise WorldError(f"checkpoint holds envs {sorted(point.envs)}, this world has {sorted(self.envs)}")
        for name, blob in point.envs.items():
            env = self.envs[name]
            if not (hold and env.rewind(blob)):
                env.restore(blob)
                if hold:
                    env.hold()
        self._load_rules(dict(point.rules))

    def restore(self, data: bytes) -> None:
        if not data.startswith(SNAPSHOT_MAGIC):
            raise WorldError("not a world snapshot (bad magic); was it made by World.snapshot()?")
        offset = len(SNAPSHOT_MAGIC)
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        header = json.loads(data[offset + 4 : offset + 4 + length])
        if set(header["sizes"]) != set(self.envs):
            raise WorldError(f"snapshot holds envs {sorted(header['sizes'])}, this world has {sorted(self.envs)}")
        position = offset + 4 + length
        for name, size in header["sizes"].items():
            self.envs[name].restore(data[position : position + size])
            position += size
        self._load_rules(header["rules"])

    def _load_rules(self, rules: dict[str, Any]) -> None:
        self.clock.load_state(rules["clock"])
        self.rbac.load_state(rules["rbac"])
        self.triggers = {}
        for saved in rules["triggers"]:
            definition = TriggerDef.model_validate(saved["definition"])
            kind_cls = self.trigger_kinds[definition.kind]
            armed = _Armed(definition, kind_cls(kind_cls.Settings.model_validate(definition.when)))
            armed.fired, armed.last_holds, armed.enabled = (
                saved["fired"],
                saved["last_holds"],
                saved["enabled"],
            )
            armed.last_error = saved.get("last_error")  # absent in snapshots made before it was kept
            armed.next_at = datetime.fromisoformat(saved["next_at"]) if saved["next_at"] else None
            armed.waiting = saved.get("waiting")
            if saved.get("anchor"):
                self._bind(armed, datetime.fromisoformat(saved["anchor"]))
            self.triggers[definition.id] = armed
        self.pending = [Pending.from_state(p) for p in rules.get("pending", [])]
        self._changed()

    def fork(self) -> World:
        """An independent world in the same state; envs fork by memory copy, rules by value."""
        clone = World(
            [env.fork() for env in self.envs.values()],
            name=self.name,
            seed=self.seed,
            trigger_kinds=self.trigger_kinds,
            clock=VirtualClock(),
        )
        clone._load_rules(self._rules_state())
        clone.responder, clone.on_tool_call = self.responder, self.on_tool_call
        clone.executors = dict(self.executors)
        clone.rewind_points = None if self.rewind_points is None else dict(self.rewind_points)
        clone.trajectory = self.trajectory.copy()
        return clone

    def state_digest(self) -> str:
        """A digest of the world's state: each env's tables (order-independent, incremental; see
        `agentenv_runtime.env.digest`) and the rules (clock, roles, triggers). The same state gives the same
        digest in any process; the trajectory is not part of it."""
        hasher = hashlib.sha256()
        for name in sorted(self.envs):
            hasher.update(f"{name}:{self.envs[name].state_digest()}\n".encode())
        hasher.update(json.dumps(self._rules_state(), sort_keys=True, default=str).encode())
        return hasher.hexdigest()

    def reset(self) -> None:
        """Every env back to its loaded state; triggers and trajectory are cleared."""
        for env in self.envs.values():
            env.reset()
        self.triggers.clear()
        self.pending = []
        self._changed()
        self.trajectory = Trajectory()
        if self.rewind_points is not None:  # positions count from the new trajectory's start
            self.rewind_points = {}

    def export(self) -> dict[str, Any]:
        return {name: env.export() for name, env in self.envs.items()}

    def load_many(self, artifacts: dict[str, list[Artifact]]) -> None:
        """Load artifacts into several envs ({env: [artifacts]}), all or none; an ArtifactError says which
        artifact failed in `env` and `index`."""
        done: list[tuple[Env, tuple[bytes, bytes, list[Artifact]]]] = []
        try:
            for name, items in artifacts.items():
                env = self.env(name)
                point = env.load_point()
                try:
                    env.load_many(items)
                except ArtifactError as exc:
                    exc.env = name
                    raise
                done.append((env, point))
        except BaseException:
            for env, point in reversed(done):
                env.back_to(point)
            raise


def _due_of(item: _Armed | Pending) -> datetime:
    due = item.due if isinstance(item, Pending) else item.next_at
    assert due is not None
    return due


def fill_event(text: str, event: ToolCallEvent | None) -> str:
    """`{{args.PATH}}`, `{{result.PATH}}`, `{{tool}}` and `{{role}}` from the call that fired the trigger."""
    if event is None or "{{" not in text:
        return text
    import re

    values = {"args": event.args, "result": event.result, "tool": event.tool, "role": event.role}

    def value(match: re.Match[str]) -> str:
        root, _, path = match[1].partition(".")
        found = values.get(root)
        return str(lookup(found, path) if path else found)

    return re.sub(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}", value, text)


def unknown_tool_message(tool: str, world: World) -> str:
    """Why `tool` is not there, with the names it most likely meant: the composed `<env>_<tool>` names a
    shared tool got, then close spellings."""
    names = list(world.tools)
    renamed = [name for name in names if name.endswith(f"_{tool}") and name.removesuffix(f"_{tool}") in world.envs]
    close = renamed or difflib.get_close_matches(tool, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"no tool {tool!r} in world {world.name!r}{hint} (list_tools shows what exists)"


class WorldToolAccess:
    """`agentenv.contracts.ToolAccess` over an in-process world, as one role."""

    def __init__(self, world: World, role: str = DEFAULT_ROLE) -> None:
        self.world = world
        self.role = role

    def list_tools(self) -> list[dict[str, Any]]:
        return self.world.list_tools(self.role)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`{"ok": true, "result": …}` or `{"ok": false, "error": {"code", "message", …}}`."""
        return self.world.call(name, arguments, role=self.role).to_dict()
