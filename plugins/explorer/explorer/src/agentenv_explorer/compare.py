"""Two runs side by side: the first event where their trajectories part, and how their ends differ (scores,
each verifier criterion, tool-call counts, and the apps' tables where both runs stored a world snapshot).

Both trajectories are streamed, never held whole; events are compared without `real_time` and `seq`, the
only fields that differ between two identical runs.
"""

from __future__ import annotations

from collections import Counter
from itertools import zip_longest
from typing import Any

from agentenv_explorer.runs import RunsView, summary
from agentenv_explorer.worlds import deploy_steps, final_tables

IGNORED = ("real_time", "seq")


def _same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return {k: v for k, v in a.items() if k not in IGNORED} == {k: v for k, v in b.items() if k not in IGNORED}


def divergence(view: RunsView, one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Index of the first differing event of the first world of each run, the two events, and tool counts."""
    _, key_a = view.trajectory_key(one, None)
    _, key_b = view.trajectory_key(other, None)
    tools: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
    first: dict[str, Any] | None = None
    counts = [0, 0]
    for index, (a, b) in enumerate(zip_longest(view.pages.events(key_a), view.pages.events(key_b))):
        for side, event in enumerate((a, b)):
            if event is not None:
                counts[side] += 1
                if event.get("kind") == "tool_call":
                    tools[side][str(event.get("tool"))] += 1
        if first is None and not _same(a, b):
            first = {"index": index, "a": a, "b": b}
    names = sorted(set(tools[0]) | set(tools[1]))
    return {
        "identical": first is None,
        "first_difference": first,
        "events": {"a": counts[0], "b": counts[1]},
        "tool_calls": [{"tool": t, "a": tools[0][t], "b": tools[1][t]} for t in names if tools[0][t] != tools[1][t]],
    }


def criteria(one: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    """Each verifier criterion of either run with both runs' score and detail."""

    def rows(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out = {}
        for verifier, output in (record.get("verifiers") or {}).items():
            for row in (output or {}).get("rows") or []:
                if isinstance(row, dict) and "criterion" in row:
                    out[f"{verifier}.{row['criterion']}"] = row
        return out

    a, b = rows(one), rows(other)
    return [
        {
            "criterion": name,
            "a": a.get(name),
            "b": b.get(name),
            "differs": (a.get(name) or {}).get("score") != (b.get(name) or {}).get("score"),
        }
        for name in sorted(set(a) | set(b))
    ]


def table_difference(view: RunsView, one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any] | None:
    """Rows only in A or only in B per table, where both runs stored a snapshot of their first world."""
    worlds_a, worlds_b = deploy_steps(one), deploy_steps(other)
    if not worlds_a or not worlds_b:
        return None
    (key_a, spec_a), (key_b, spec_b) = next(iter(worlds_a.items())), next(iter(worlds_b.items()))
    tables_a = final_tables(view, one, key_a, spec_a["envs"], spec_a["roles"])
    tables_b = final_tables(view, other, key_b, spec_b["envs"], spec_b["roles"])
    if tables_a is None or tables_b is None:
        return None
    changed = {}
    for name in sorted(set(tables_a) | set(tables_b)):
        rows_a = {tuple(map(repr, r)) for r in (tables_a.get(name) or {}).get("rows", [])}
        rows_b = {tuple(map(repr, r)) for r in (tables_b.get(name) or {}).get("rows", [])}
        if rows_a != rows_b:
            changed[name] = {"only_a": len(rows_a - rows_b), "only_b": len(rows_b - rows_a)}
    return changed


def compare(view: RunsView, run_a: str, run_b: str) -> dict[str, Any]:
    one, other = view.get(run_a), view.get(run_b)
    return {
        "a": summary(one),
        "b": summary(other),
        "trajectory": divergence(view, one, other),
        "criteria": criteria(one, other),
        "tables": table_difference(view, one, other),
        "tables_note": "the apps' tables are compared only where both runs kept their world's final state",
    }
