"""World rules mid-run: the virtual clock, triggers and role-based tool access."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agentenv.contracts import StepContext, StepFailed
from agentenv_runtime import (
    BUILTIN_TRIGGER_KINDS,
    CALENDAR_SECONDS,
    GET_TIME,
    MAX_RATE,
    SYSTEM_ROLE,
    TriggerDef,
    WorkingHours,
    World,
    WorldError,
    parse_time,
)
from pydantic import Field, ValidationError

from agentenv_steps._common import CoreStep, StepSettings, StrList, deployed_world, missing_step, validation_message
from agentenv_steps.executors import DEFAULT_EXECUTOR, executor_of

_BUILTIN_KINDS = {kind.name: kind for kind in BUILTIN_TRIGGER_KINDS}


# ---- sync_env_clock ---------------------------------------------------------------------------------
class SyncEnvClockSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world's clock to set.")
    start: str | None = Field(
        None, description="ISO 8601 start time (UTC unless an offset is given); absent = keep the current virtual time."
    )
    mode: Literal["scaled", "frozen", "event"] | None = Field(
        None,
        description="scaled (runs at `rate`), frozen (moves only when told), event (jumps to the next trigger); "
        "absent = keep (initially frozen).",
    )
    rate: float | None = Field(
        None, ge=0, le=MAX_RATE, description="Virtual seconds per real second when scaled (initially 1; 0 freezes)."
    )
    timezone: str | None = Field(None, description="IANA time zone for presentation (initially UTC).")
    advance_seconds: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="Then move time forward, firing due triggers."
    )
    run_until: str | None = Field(None, description="Then run event by event until this ISO time.")


class SyncEnvClock(CoreStep[SyncEnvClockSettings]):
    name = "sync_env_clock"
    description = "Set the world's virtual clock (start, mode, rate, zone); optionally advance or run until a time."
    Settings = SyncEnvClockSettings

    def check(self, settings: SyncEnvClockSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("env", settings.env, step_ids, "deploy_env")
        times = {}
        for field in ("start", "run_until"):
            value = getattr(settings, field)
            if value is not None:
                try:
                    times[field] = parse_time(value, field=field)
                except ValueError as exc:
                    problems.append((field, str(exc).removeprefix(f"{field}: ")))
        if settings.timezone is not None:
            try:
                ZoneInfo(settings.timezone)
            except (ZoneInfoNotFoundError, ValueError):
                problems.append(("timezone", f"{settings.timezone!r} is not an IANA time zone (e.g. Europe/Berlin)"))
        if "start" in times and "run_until" in times and times["run_until"] < times["start"]:
            problems.append(("run_until", f"{settings.run_until} is before start {settings.start}; time only moves on"))
        return problems + advance_problems(settings.advance_seconds, times.get("start"))

    async def execute(self, settings: SyncEnvClockSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        try:
            world.set_clock(settings.start, mode=settings.mode, rate=settings.rate, timezone=settings.timezone)
        except ValueError as exc:
            raise StepFailed(f"field `{str(exc).split(':', 1)[0]}`: {exc}") from None
        fired = 0
        if settings.advance_seconds:
            fired += world.advance(settings.advance_seconds)
        if settings.run_until is not None:
            fired += world.run_until_idle(until=settings.run_until)
        now = world.clock.now()
        return {
            "now": now.isoformat(),
            "local": world.clock.local(now).isoformat(),
            "mode": world.clock.mode,
            "timezone": world.clock.timezone,
            "fired": fired,
        }


def advance_problems(seconds: float | None, start: datetime | None) -> list[tuple[str, str]]:
    """An advance no task means: longer than the whole calendar, or past its end from the step's own start.
    The world would quietly stop at the calendar's last instant (it clamps rather than fail every call)."""
    if not seconds:
        return []
    if seconds > CALENDAR_SECONDS:
        span = f"{CALENDAR_SECONDS:.4g} s"
        return [("advance_seconds", f"{seconds:g} s is longer than years 1 to 9999 ({span}); advance by less")]
    if start is not None:
        try:
            start + timedelta(seconds=seconds)
        except OverflowError:
            past = f"{start.isoformat()} + {seconds:g} s is past the end of year 9999"
            return [("advance_seconds", f"{past}; advance by less or start earlier")]
    return []


# ---- register_env_triggers --------------------------------------------------------------------------
class RegisterEnvTriggersSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world gets the triggers.")
    triggers: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Trigger definitions: {id, kind, when, actions, repeat, delay, working_hours, barrier}.",
    )
    executor_agent: str | None = Field(
        None,
        description=f"A deploy_agent step: the agent `nl` actions are handed to (executor {DEFAULT_EXECUTOR!r}); "
        "it acts through the world's tools as its own role. Any kind; a scripted one runs offline.",
    )
    executors: dict[str, str] = Field(
        default_factory=dict,
        description="More executors: name (an `nl` action's `executor`) → deploy_agent step.",
    )
    executor_hours: WorkingHours | None = Field(
        None,
        description="The executors' working hours {start, end, time_zone | utc_offset, days}: an `nl` firing "
        "outside them is deferred to the next opening.",
    )
    executor_timeout_seconds: float = Field(
        300.0, gt=0, description="Real seconds an executor may take for one instruction (then the action fails)."
    )
    await_fired: StrList = Field(
        default_factory=list,
        description="Trigger ids to wait for: virtual time moves on, event by event, until each has fired and its "
        "actions are done.",
    )
    await_timeout_seconds: float = Field(
        86_400.0, gt=0, description="Virtual seconds `await_fired` may move the clock; a trigger not done by then "
        "fails the step.",
    )

    def all_executors(self) -> dict[str, str]:
        """name → deploy_agent step, `executor_agent` under the default name."""
        chosen = {DEFAULT_EXECUTOR: self.executor_agent} if self.executor_agent else {}
        return {**chosen, **self.executors}


def trigger_problems(index: int, raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Structure and, for the kernel's own kinds, `when`; each message names the trigger id."""
    where = f"triggers[{index}]"
    label = f"trigger {raw.get('id', '?')!r}"
    try:
        trigger = TriggerDef.model_validate(raw)
    except ValidationError as exc:
        return [(where, f"{label}: {validation_message(exc)}")]
    kind = _BUILTIN_KINDS.get(trigger.kind)
    if kind is not None:
        try:
            kind.Settings.model_validate(trigger.when)
        except ValidationError as exc:
            return [(f"{where}.when", f"{label}: {validation_message(exc, 'when.')}")]
    return []


class RegisterEnvTriggers(CoreStep[RegisterEnvTriggersSettings]):
    name = "register_env_triggers"
    description = "Register world triggers (time, tool call, state, persona) with their actions."
    Settings = RegisterEnvTriggersSettings

    def check(self, settings: RegisterEnvTriggersSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("env", settings.env, step_ids, "deploy_env")
        if not settings.triggers and not settings.await_fired and not settings.all_executors():
            problems.append(("triggers", "nothing to do: give `triggers`, executors or `await_fired`"))
        if settings.executor_agent and DEFAULT_EXECUTOR in settings.executors:
            problems.append(
                ("executors", f"{DEFAULT_EXECUTOR!r} is `executor_agent` already; give it once, in one of them")
            )
        for name, step_id in settings.all_executors().items():
            where = "executor_agent" if name == DEFAULT_EXECUTOR and settings.executor_agent else f"executors.{name}"
            problems += missing_step(where, step_id, step_ids, "deploy_agent")
        if settings.executor_hours is not None and not settings.all_executors():
            problems.append(("executor_hours", "there is no executor: set `executor_agent` or `executors`"))
        seen: set[Any] = set()
        for index, raw in enumerate(settings.triggers):
            problems.extend(trigger_problems(index, raw))
            trigger_id = raw.get("id")
            if trigger_id in seen:
                problems.append((f"triggers[{index}].id", f"trigger {trigger_id!r} is defined twice"))
            seen.add(trigger_id)
        return problems

    async def execute(self, settings: RegisterEnvTriggersSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        executors = {
            name: executor_of(ctx, step_id, world, settings.executor_timeout_seconds, field)
            for name, step_id, field in (
                (name, step_id, "executor_agent" if step_id == settings.executor_agent else f"executors.{name}")
                for name, step_id in settings.all_executors().items()
            )
        }
        for name, run in executors.items():  # before the triggers: a trigger may fire as soon as it is armed
            world.executors[name] = (run, settings.executor_hours)
        added: list[str] = []
        for index, raw in enumerate(settings.triggers):
            try:
                world.add_trigger(raw)
            except WorldError as exc:
                for trigger_id in added:  # all or nothing
                    world.remove_trigger(trigger_id)
                for name in executors:
                    world.executors.pop(name, None)
                raise StepFailed(f"field `triggers[{index}]`: {exc}") from None
            added.append(str(raw["id"]))
        output: dict[str, Any] = {"registered": added}
        if executors:
            output["executors"] = sorted(executors)
        if settings.await_fired:
            try:
                late = world.await_fired(settings.await_fired, settings.await_timeout_seconds)
            except WorldError as exc:
                raise StepFailed(f"field `await_fired`: {exc}") from None
            statuses = {t: world.triggers[t].status for t in settings.await_fired}
            output |= {"awaited": statuses, "now": world.clock.now().isoformat()}
            if late:
                raise StepFailed(
                    f"field `await_fired`: {', '.join(map(repr, late))} had not fired and finished within "
                    f"{settings.await_timeout_seconds:g} virtual seconds (statuses: "
                    f"{', '.join(f'{t}={statuses[t]}' for t in late)}); raise `await_timeout_seconds` or check the "
                    "triggers' `when`"
                )
        return output


# ---- modify_env_tool_access -------------------------------------------------------------------------
class ModifyEnvToolAccessSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world's access rules change.")
    role: str = Field("default", min_length=1, description="The role to change (a new role starts with no tools).")
    enable: StrList = Field(default_factory=list, description="Tools the role may call from now on.")
    disable: StrList = Field(default_factory=list, description="Tools the role may no longer call or see.")


class ModifyEnvToolAccess(CoreStep[ModifyEnvToolAccessSettings]):
    name = "modify_env_tool_access"
    description = "Enable or disable tools for a role mid-run (recorded in the trajectory)."
    Settings = ModifyEnvToolAccessSettings

    def check(self, settings: ModifyEnvToolAccessSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("env", settings.env, step_ids, "deploy_env")
        if not settings.enable and not settings.disable:
            problems.append(("enable", "name tools in `enable` or `disable` (both are empty)"))
        both = sorted(set(settings.enable) & set(settings.disable))
        if both:
            problems.append(("disable", f"{', '.join(both)} also in `enable`; a tool is either enabled or disabled"))
        if settings.role == SYSTEM_ROLE:
            problems.append(("role", f"{SYSTEM_ROLE!r} is the world rules' own role and always has every tool"))
        return problems

    async def execute(self, settings: ModifyEnvToolAccessSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        if (problem := world.rbac.unknown(settings.role)) is not None:  # never a new role with no tools
            raise StepFailed(f"field `role`: {problem}, or define it in deploy_env `roles`")
        for field in ("enable", "disable"):
            unknown = [t for t in getattr(settings, field) if t not in world.tools and t != GET_TIME]
            if unknown:
                raise StepFailed(
                    f"field `{field}`: no tool {', '.join(map(repr, unknown))} in world {world.name!r} "
                    f"(tools: {', '.join(sorted(world.tools))})"
                )
        world.set_tool_access(settings.role, enable=settings.enable, disable=settings.disable, by=ctx.step_id)
        return {
            "role": settings.role,
            "enabled": settings.enable,
            "disabled": settings.disable,
            "tools": sorted(world.tool_names(settings.role)),
        }
