"""Per-task aggregates of many runs: runs, passes, pass rate, mean/min/max score and pass^k.

`agentenv run -k 1000` (or an eval, or a seeded batch) makes thousands of runs; one row per run hides the
answer. The aggregate is one row per task: how many runs, how many passed, how many were not graded (a
judge with no model: never a pass), the score's mean, minimum and maximum over the runs that have one,
and pass^k with k the task's number of runs (every rollout passing, τ-bench's estimator).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentenv_runtime.engine.passk import pass_hat_ks

ROW_LIMIT = 20
"""Up to this many runs, the text output lists every run; beyond, only the aggregate (the JSON has them all)."""


def task_aggregates(results: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One aggregate per task, in the order tasks first appear. Each result is a run summary (`name`,
    `passed`, `score`, optionally `graded`)."""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        by_task.setdefault(str(result["name"]), []).append(result)
    return [aggregate(name, runs) for name, runs in by_task.items()]


def aggregate(name: str, runs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The aggregate of one task's runs (an empty list is not a task that ran)."""
    if not runs:
        raise ValueError(f"task {name!r} has no runs to aggregate")
    passed = sum(1 for r in runs if r.get("passed") is True)
    not_graded = sum(1 for r in runs if r.get("graded") is False)
    scores = [float(r["score"]) for r in runs if isinstance(r.get("score"), int | float)]
    return {
        "task": name,
        "runs": len(runs),
        "passed": passed,
        "not_graded": not_graded,
        "pass_rate": passed / len(runs),
        "mean": sum(scores) / len(scores) if scores else None,
        "min": min(scores) if scores else None,
        "max": max(scores) if scores else None,
        "pass_hat_k": pass_hat_ks(len(runs), passed)[-1],
    }


def aggregate_rows(aggregates: list[dict[str, Any]]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The text table of `task_aggregates`: headers and rows."""

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    headers: tuple[str, ...] = ("TASK", "RUNS", "PASSED", "NOT GRADED", "PASS RATE", "MEAN", "MIN", "MAX", "PASS^K")
    rows: list[tuple[str, ...]] = [
        (
            str(a["task"]),
            str(a["runs"]),
            str(a["passed"]),
            str(a["not_graded"]),
            f"{a['pass_rate']:.1%}",
            number(a["mean"]),
            number(a["min"]),
            number(a["max"]),
            f"{a['pass_hat_k']:.4f}",
        )
        for a in aggregates
    ]
    return headers, rows
