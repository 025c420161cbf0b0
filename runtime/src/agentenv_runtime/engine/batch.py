"""Batches of runs for evals and seeded batches: the plan (which task, which seed, which overrides) and
running it with at most `concurrency` runs at a time on one event loop.

Worlds stay in-process; concurrent runs share the loop, each with its own run context and records, and the
results come back in plan order whatever order they finish in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv_runtime.engine.evals import EvalFile
from agentenv_runtime.engine.runner import TaskRunner, summary_of
from agentenv_runtime.engine.seeds import SeedRow, filled_task
from agentenv_runtime.engine.task import TaskFile


@dataclass(frozen=True)
class Job:
    """One run of the batch."""

    task: TaskFile
    seed: int
    overrides: dict[str, Any] = field(default_factory=dict)
    row: SeedRow | None = None


def plan(
    tasks: list[TaskFile],
    *,
    base_seed: Callable[[TaskFile], int],
    k: int | None,
    overrides: dict[str, Any],
    spec: EvalFile | None = None,
    rows: list[SeedRow] | None = None,
) -> list[Job]:
    """Every run, in order: task by task, row by row, rollout by rollout.

    `k` given on the command line wins over the eval's; a task's `[overrides.TASK]` win over both, and
    over `--agent`/`--model`/`--sandbox`. Rollout i of a task uses its base seed + i; a seeded row's seed
    (else base + the row's index × k) starts its rollouts.
    """
    jobs: list[Job] = []
    for task in tasks:
        extra = spec.overrides.get(task.name) if spec else None
        rollouts = (extra.k if extra and extra.k else None) or k or (spec.k if spec else 1)
        seed0 = extra.seed if extra and extra.seed is not None else base_seed(task)
        chosen = {**overrides, **(extra.run_overrides() if extra else {})}
        each: list[SeedRow | None] = list(rows) if rows else [None]
        for row in each:
            if row is not None and row.task not in (None, task.name):
                continue
            start = seed0 if row is None else (row.seed if row.seed is not None else seed0 + row.index * rollouts)
            filled = filled_task(task, row.values) if row is not None else task
            jobs.extend(Job(filled, start + i, chosen, row) for i in range(rollouts))
    return jobs


async def run_jobs(
    runner: TaskRunner,
    jobs: list[Job],
    *,
    concurrency: int,
    bundle: str | None,
    bundle_dir: Path | None,
    on_done: Callable[[dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """Run every job, at most `concurrency` at a time; the summaries in job order (with the seed row)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(job: Job) -> dict[str, Any]:
        async with gate:
            record = await runner.run(
                job.task, seed=job.seed, bundle=bundle, bundle_dir=bundle_dir, overrides=job.overrides
            )
        summary = summary_of(record)
        if job.row is not None:
            summary["row"] = {"index": job.row.index + 1, "line": job.row.line, **job.row.values}
        on_done(summary)
        return summary

    return list(await asyncio.gather(*(one(job) for job in jobs)))
