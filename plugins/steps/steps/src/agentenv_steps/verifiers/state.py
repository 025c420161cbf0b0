"""Read-only looks at a live world: SQL on an env's state, and the agent's successful tool calls."""

from __future__ import annotations

import sqlite3
from typing import Any

from agentenv.contracts import StepFailed
from agentenv_runtime import World, WorldError
from agentenv_runtime import lookup_path as lookup
from agentenv_runtime import matches_predicate as matches


def pick_env(world: World, env: str | None, where: str) -> str:
    """The env a check reads: the one named, or the world's only env."""
    if env is not None:
        return env
    if len(world.envs) == 1:
        return next(iter(world.envs))
    raise StepFailed(
        f"{where}: field `env`: world {world.name!r} has several apps ({', '.join(world.envs)}); "
        "name the one whose state the query reads"
    )


def first_value(world: World, env: str | None, sql: str, where: str) -> Any:
    """The first column of the first row of `sql` on the env's database (None when no row).

    The query may only read (`Env.read_only`), so a grading query can never change the state it grades.
    """
    name = pick_env(world, env, where)
    try:
        target = world.env(name)
    except WorldError as exc:
        raise StepFailed(f"{where}: field `env`: {exc}") from exc
    try:
        row = target.read_only(sql).fetchone()
    except sqlite3.Error as exc:
        hint = (
            "the query may only read (SELECT/WITH)"
            if "not authorized" in str(exc)
            else "fix the SQL (see the env's schema)"
        )
        raise StepFailed(f"{where}: field `sql`: query on {name!r} failed: {exc}; {hint}") from exc
    return row[0] if row is not None else None


def sql_holds(value: Any, equals: Any, has_equals: bool) -> bool:
    """`equals` given: the value must equal it (numbers compare as numbers); else the value must be truthy."""
    if not has_equals:
        return bool(value)
    if isinstance(value, int | float) and isinstance(equals, int | float) and not isinstance(equals, bool):
        return abs(float(value) - float(equals)) < 1e-9
    return bool(value == equals)


def matching_calls(
    world: World,
    tool: str,
    args: dict[str, Any],
    result: dict[str, Any],
    role: str | None,
    events: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Successful `tool` calls in the trajectory whose arguments and result satisfy every predicate.

    Predicates are the ones world triggers use (`agentenv_runtime.world.triggers.matches`): a literal means
    equals, or `{equals|contains|regex|in|gt|lt: ...}`, on dotted paths. Calls made by world rules
    (role `system`) are not the agent's and never count, unless `role = "system"` asks for them. `events`
    narrows the trajectory (a rubric graded up to a turn); default: all of it.
    """
    found = []
    for event in world.trajectory.events if events is None else events:
        if event.get("kind") != "tool_call" or event.get("tool") != tool or event.get("error"):
            continue
        if role is None and event.get("role") == "system":
            continue
        if role is not None and event.get("role") != role:
            continue
        if all(matches(lookup(event.get("args"), p), v) for p, v in args.items()) and all(
            matches(lookup(event.get("result"), p), v) for p, v in result.items()
        ):
            found.append(event)
    return found


def calls_of(world: World, tool: str, events: list[dict[str, Any]] | None = None) -> int:
    """How many successful calls of `tool` the trajectory (or `events`) holds (for failure details)."""
    return sum(
        1
        for e in (world.trajectory.events if events is None else events)
        if e.get("kind") == "tool_call" and e.get("tool") == tool and not e.get("error")
    )
