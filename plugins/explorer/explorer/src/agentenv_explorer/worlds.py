"""A run's world as the world page shows it: the card, the tools each role may call, and the apps' tables as
they were at the end of the run (from the state the run kept: compressed for a succeeded run, whole for a failed
or `--keep` one).

The world is rebuilt from what the task file and the run's deploy step name (its envs and roles), so the card
is the one the agent saw; no artifact is loaded, the snapshot brings the data back.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentenv_explorer.errors import ApiError, not_found

ROWS_SHOWN = 200
"""Rows per table in the answer (the row count is always the full one)."""


def deploy_steps(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """World key → {envs, roles} for each `deploy_env` step of the run (envs from its output, roles from the task)."""
    from agentenv_runtime import TaskError, read_task

    declared: dict[str, dict[str, Any]] = {}
    path = record.get("task_file")
    if isinstance(path, str):
        try:
            for step in read_task(Path(path)).steps:
                if step.type == "deploy_env":
                    declared[step.id] = step.fields
        except (TaskError, OSError):
            pass
    worlds: dict[str, dict[str, Any]] = {}
    for step in record.get("steps") or []:
        if not isinstance(step, dict) or step.get("type") != "deploy_env":
            continue
        output = step.get("output") if isinstance(step.get("output"), dict) else {}
        fields = declared.get(str(step.get("id")), {})
        envs = (output or {}).get("envs") or fields.get("envs") or []
        worlds[str(step["id"])] = {"envs": [str(e) for e in envs], "roles": dict(fields.get("roles") or {})}
    return worlds


def build(envs: list[str], roles: Mapping[str, Any]) -> Any:
    from agentenv_runtime import WorldError, build_world

    try:
        return build_world(envs, roles=roles or None)
    except WorldError as exc:
        raise ApiError(409, f"the run's world cannot be rebuilt here: {exc}") from None


def tables(world: Any) -> dict[str, dict[str, Any]]:
    """`env.table` → {columns, rows (the first ROWS_SHOWN), count} of every app's tables."""
    out: dict[str, dict[str, Any]] = {}
    for name, env in world.envs.items():
        db = env.db
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in names:
            cursor = db.execute(f'SELECT * FROM "{table}" LIMIT {ROWS_SHOWN}')
            columns = [c[0] for c in cursor.description]
            rows = [[_cell(value) for value in row] for row in cursor.fetchall()]
            (count,) = db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()
            out[f"{name}.{table}"] = {"columns": columns, "rows": rows, "count": count}
    return out


def _cell(value: Any) -> Any:
    """A table cell as JSON: SQLite gives text, numbers, None and bytes (shown by size; they are blobs)."""
    return f"<{len(value)} bytes>" if isinstance(value, bytes) else value


def role_tools(world: Any, roles: Mapping[str, Any]) -> dict[str, list[str]]:
    """Role → the tools it may call, as the world's own RBAC lists them (the default role included)."""
    return {role: sorted(world.tool_names(role)) for role in ["default", *roles]}


def final_tables(runs: Any, record: Mapping[str, Any], key: str, envs: list[str], roles: Any) -> Any:
    """The tables at the end of the run from its stored snapshot (a failed or `--keep` run's `world_snapshots`,
    a succeeded run's compressed `final_states`), or None when the run stored none."""
    import zlib

    snapshots, finals = record.get("world_snapshots") or {}, record.get("final_states") or {}
    if key in snapshots:
        state = runs.guard(runs.records.get_object, snapshots[key])
    elif key in finals:
        state = zlib.decompress(runs.guard(runs.records.get_object, finals[key]))
    else:
        return None
    world = build(envs, roles)
    world.restore(state)
    return tables(world)


def world_page(runs: Any, run_id: str, world_key: str | None) -> dict[str, Any]:
    from agentenv_runtime import build_card

    record = runs.get(run_id)
    worlds = deploy_steps(record)
    if not worlds:
        raise not_found(f"run {record['id']} deployed no world", "open a run whose task has a deploy_env step")
    key = world_key or next(iter(worlds))
    if key not in worlds:
        raise not_found(f"run {record['id']} has no world {key!r}", f"worlds: {', '.join(worlds)}")
    spec = worlds[key]
    world = build(spec["envs"], spec["roles"])
    state = final_tables(runs, record, key, spec["envs"], spec["roles"])
    return {
        "run": record["id"],
        "world": key,
        "worlds": list(worlds),
        "envs": spec["envs"],
        "card": build_card(world, role="default"),
        "roles": role_tools(world, spec["roles"]),
        "tables": state,
        "tables_note": None
        if state is not None
        else "this run kept no world state (too large, or recorded before runs kept one): use `agentenv run --keep`",
    }
