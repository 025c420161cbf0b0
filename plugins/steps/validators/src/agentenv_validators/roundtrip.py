"""The load/export round trip (36): data loaded into an env, exported, reloaded into a fresh env and
exported again must come back identical, table by table and row by row.

Runs in process with the installed env classes. The first export comes from an artifact loaded into a
fresh env, or from a world's current data (a deployed world, or a served world's `data/get`).
"""

from __future__ import annotations

import json
from typing import Any

from agentenv_runtime import Artifact

from agentenv_validators.results import Row, row


def normalized(export: Any) -> Any:
    """JSON-equal data compares equal (tuples and lists, int-valued floats stay as they are)."""
    return json.loads(json.dumps(export, sort_keys=True, default=str))


def first_difference(first: dict[str, Any], second: dict[str, Any]) -> str | None:
    """Where two exports of one env first differ, in words; None when they are equal."""
    for table in sorted(set(first) | set(second)):
        if table not in second:
            return f"table {table!r} is missing after the reload"
        if table not in first:
            return f"table {table!r} appeared after the reload"
        a, b = first[table], second[table]
        if len(a) != len(b):
            return f"table {table!r}: {len(a)} rows exported, {len(b)} after the reload"
        for index, (left, right) in enumerate(zip(a, b, strict=True)):
            if left != right:
                keys = sorted(k for k in set(left) | set(right) if left.get(k) != right.get(k))
                changes = ", ".join(f"{k}: {left.get(k)!r} → {right.get(k)!r}" for k in keys)
                return f"table {table!r} row {index}: {changes}"
    return None


def reload(cls: type, settings: Any, env_name: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` loaded into a fresh instance of `cls`, exported."""
    fresh = cls(settings)
    fresh.load(Artifact.build(name="roundtrip", env=env_name, version="0", data=data))
    exported: dict[str, Any] = normalized(fresh.export())
    return exported


def roundtrip_rows(
    classes: dict[str, tuple[type, Any]], exports: dict[str, dict[str, Any]], sources: dict[str, str]
) -> list[Row]:
    """One row per env: its first export (from `sources[env]`) reloaded into a fresh env exports equal."""
    rows = []
    for env_name, export in exports.items():
        criterion = f"{env_name} export → reload → export"
        if env_name not in classes:
            rows.append(row(criterion, False, f"env {env_name!r} is not installed here, so it cannot be reloaded"))
            continue
        cls, settings = classes[env_name]
        first = normalized(export)
        try:
            second = reload(cls, settings, env_name, first)
        except Exception as exc:  # the export does not load back: that is the finding
            rows.append(
                row(criterion, False, f"the export does not load into a fresh env: {type(exc).__name__}: {exc}")
            )
            continue
        difference = first_difference(first, second)
        count = sum(len(r) for r in first.values())
        detail = difference or f"identical ({len(first)} tables, {count} rows, from {sources.get(env_name, 'data')})"
        rows.append(row(criterion, difference is None, detail))
    return rows
