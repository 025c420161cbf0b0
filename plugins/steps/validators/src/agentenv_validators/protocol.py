"""The data-plane check (35): `data/reset`, `data/add` and `data/get` answer, and answer correctly.

The probe row is copied from data the world already holds (so it satisfies the env's constraints and
foreign keys) with its key changed: the first column when its values are all distinct, and any column a
`UNIQUE constraint failed: table.column` refusal names. `data/add` is all-or-nothing, so a refused
attempt changes nothing and the next table is tried. A `probe` (env, table, row) given by the caller
is used as it is.

Reset semantics: agentenv's gateway resets to the last *loaded* state, and `data/add` loads, so the probe
row survives `data/reset` there (`reset = "loaded"`, the default); servers that clear everything on reset
(`reset = "empty"`) must drop it. With `probe_call` (a mutating tool call) the check also proves that
`data/reset` undoes a change made through the tools.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from agentenv_validators.client import ProbeError, WorldClient
from agentenv_validators.results import Row, row

UNIQUE = re.compile(r"UNIQUE constraint failed: ([\w.]+(?:, [\w.]+)*)")
MAX_TABLES = 12
MAX_ATTEMPTS = 6


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _bump(value: Any, column_values: list[Any], attempt: int) -> Any:
    """A value like `value` that is not among `column_values`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        numbers = [v for v in column_values if isinstance(v, int | float) and not isinstance(v, bool)]
        return int(max(numbers, default=0)) + 1000 + attempt
    if isinstance(value, float):
        return max((v for v in column_values if isinstance(v, int | float)), default=0.0) + 1000.5 + attempt
    if isinstance(value, str):
        suffix = "probe" if attempt == 0 else f"probe{attempt}"
        if "@" in value:
            local, _, domain = value.partition("@")
            return f"{local}+{suffix}@{domain}"
        return f"{value}-{suffix}"
    return value


def _candidates(export: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(env, table, rows) for tables that hold rows, in export order."""
    found = []
    for env, tables in export.items():
        if not isinstance(tables, dict):
            continue
        for table, rows in tables.items():
            if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
                found.append((env, table, rows))
    return found[:MAX_TABLES]


async def _add(client: WorldClient, env: str, table: str, probe: dict[str, Any]) -> dict[str, Any] | None:
    _, error = await client.rpc("data/add", {"env": env, "parts": [{"kind": "data", "data": {table: [probe]}}]})
    return error


async def find_probe(client: WorldClient, export: dict[str, Any]) -> tuple[str, str, dict[str, Any], list[str]]:
    """Add a new row copied from existing data: (env, table, row added, refusals on the way).

    Raises ProbeError when no table takes a copied row."""
    refusals: list[str] = []
    for env, table, rows in _candidates(export):
        probe = copy.deepcopy(rows[-1])
        columns = list(probe)
        if columns:
            first = columns[0]
            values = [r.get(first) for r in rows]
            if len({_canon(v) for v in values}) == len(values):
                probe[first] = _bump(probe[first], values, 0)
        for attempt in range(MAX_ATTEMPTS):
            error = await _add(client, env, table, probe)
            if error is None:
                return env, table, probe, refusals
            message = str(error.get("message", error))
            match = UNIQUE.search(message)
            if not match:
                refusals.append(f"{env}.{table}: {message}")
                break
            for qualified in match.group(1).split(", "):
                column = qualified.rsplit(".", 1)[-1]
                if column in probe:
                    probe[column] = _bump(probe[column], [r.get(column) for r in rows], attempt + 1)
        else:
            refusals.append(f"{env}.{table}: still a duplicate after {MAX_ATTEMPTS} changed keys")
    raise ProbeError(
        "no table accepted a copied row"
        + (f" ({'; '.join(refusals[:3])})" if refusals else " (the world holds no rows: load an artifact first)")
        + "; give `probe` = {env, table, row} to choose the row"
    )


def _contains(rows: Any, probe: dict[str, Any]) -> bool:
    return isinstance(rows, list) and any(
        isinstance(r, dict) and all(_canon(r.get(k)) == _canon(v) for k, v in probe.items()) for r in rows
    )


def _names_envs(answer: Any) -> bool:
    """Whether a raw `data/get` answer's data parts say which env they are (`metadata.env`, optional)."""
    parts = answer.get("parts") if isinstance(answer, dict) else None
    return isinstance(parts, list) and any(
        isinstance(p, dict) and isinstance(p.get("metadata"), dict) and p["metadata"].get("env") for p in parts
    )


def _export_problem(export: Any, envs: list[str]) -> str | None:
    if not isinstance(export, dict):
        return f"the result is {type(export).__name__}, not an object of env → tables"
    for env, tables in export.items():
        if not isinstance(tables, dict) or not all(isinstance(rows, list) for rows in tables.values()):
            return f"{env!r} is not an object of table → list of rows"
    if missing := [e for e in envs if e not in export]:
        return f"no data for env(s) {', '.join(missing)} listed on the card"
    return None


async def protocol_rows(
    client: WorldClient,
    *,
    probe: dict[str, Any] | None = None,
    reset: str = "loaded",
    probe_call: dict[str, Any] | None = None,
) -> list[Row]:
    """Rows for the data plane of the world behind `client` (this changes its data: see the module doc)."""
    rows: list[Row] = []
    try:
        card = await client.card()
        envs = [str(c.get("name")) for c in card.get("children_environments") or [] if isinstance(c, dict)]
    except ProbeError:
        envs = []
    _, error = await client.rpc("data/reset")
    rows.append(row("data/reset answers", error is None, f"error {error}" if error else "ok"))
    answer, error = await client.rpc("data/get", raw=True)
    before: Any = {} if error else await client.export(answer)
    problem = f"error {error}" if error else _export_problem(before, envs)
    rows.append(row("data/get answers", problem is None, problem or f"{len(before)} env(s)"))
    if problem:
        return rows
    # a request that must be refused, and must change nothing: asked only of a server whose parts name their env
    # (`metadata.env`, agentenv's routing); the protocol's parts name none, and its `data/add` takes no `env`
    if _names_envs(answer):
        bad = {"env": "no-such-env-validate", "parts": [{"kind": "data", "data": {}}]}
        _, error = await client.rpc("data/add", bad)
        after_bad, _ = await client.rpc("data/get")
        refused = error is not None and _canon(after_bad) == _canon(before)
        detail = f"refused with code {error.get('code')}" if error else "accepted an env that does not exist"
        if error is not None and not refused:
            detail += ", but the data changed"
        rows.append(row("data/add of an unknown env is refused and changes nothing", refused, detail))
    elif probe is None and not _candidates(before):
        detail = "the env holds no rows to copy a probe from (give `probe` = {env, table, row}); not checked"
        rows.append(row("data/add loads a row", True, detail, weight=0))
        return rows
    # add a row, see it
    try:
        if probe is not None:
            env, table, added = probe["env"], probe["table"], probe["row"]
            if (failed := await _add(client, env, table, added)) is not None:
                raise ProbeError(f"the given probe row was refused: {failed.get('message', failed)}")
        else:
            env, table, added, _ = await find_probe(client, before)
    except ProbeError as exc:
        rows.append(row("data/add loads a row", False, str(exc)))
        return rows
    rows.append(row("data/add loads a row", True, f"one row into {env}.{table}"))
    after, error = await client.rpc("data/get")
    shown = error is None and isinstance(after, dict) and _contains((after.get(env) or {}).get(table), added)
    grew = shown and len(after[env][table]) == len(before.get(env, {}).get(table, [])) + 1
    others = shown and all(_canon(tables) == _canon(before.get(name)) for name, tables in after.items() if name != env)
    detail = (
        "the new row is there, nothing else changed"
        if shown and grew and others
        else (
            "the added row is missing"
            if not shown
            else "other data changed too"
            if not others
            else "row count is wrong"
        )
    )
    rows.append(row("data/get shows the added row", bool(shown and grew and others), detail))
    if probe_call:
        rows.append(await _reset_undoes_call(client, probe_call, after))
    # reset
    _, error = await client.rpc("data/reset")
    final, error2 = await client.rpc("data/get")
    if error or error2:
        rows.append(row(f"data/reset returns to the {reset} state", False, f"error {error or error2}"))
        return rows
    present = _contains(((final or {}).get(env) or {}).get(table), added)
    if reset == "empty":
        ok, text = not present, "the added row is gone" if not present else "the added row survived data/reset"
    else:
        ok = _canon(final) == _canon(after)
        text = "back to the loaded data (data/add moved the reset point)" if ok else "differs from the loaded data"
    rows.append(row(f"data/reset returns to the {reset} state", ok, text))
    return rows


async def _reset_undoes_call(client: WorldClient, call: dict[str, Any], loaded: dict[str, Any]) -> Row:
    name = "data/reset undoes a tool call"
    result, error = await client.rpc("tools/call", {"name": call["tool"], "arguments": call.get("arguments", {})})
    if error or not isinstance(result, dict) or result.get("ok") is False:
        return row(name, False, f"the probe call {call['tool']} failed: {error or result}")
    changed, _ = await client.rpc("data/get")
    if _canon(changed) == _canon(loaded):
        return row(name, False, f"the probe call {call['tool']} changed no data; pick a tool that writes")
    await client.rpc("data/reset")
    back, _ = await client.rpc("data/get")
    ok = _canon(back) == _canon(loaded)
    return row(name, ok, f"{call['tool']} undone" if ok else f"the change made by {call['tool']} survived data/reset")
