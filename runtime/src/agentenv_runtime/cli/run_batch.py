"""`agentenv run BUNDLE --eval NAME` and `--seeds FILE.csv`: plan the batch and check every run of it before
any starts (`agentenv run` then runs the jobs, at most `concurrency` at a time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv_runtime.engine.batch import Job, plan
from agentenv_runtime.engine.bundle import Bundle
from agentenv_runtime.engine.evals import EvalFile, read_eval
from agentenv_runtime.engine.runner import TaskRunner
from agentenv_runtime.engine.seeds import check_columns, read_seeds
from agentenv_runtime.engine.task import TaskError, TaskFile


@dataclass
class Batch:
    jobs: list[Job]
    concurrency: int
    extra: dict[str, Any] = field(default_factory=dict)
    """What the JSON summary says about the batch (`eval`, `seeds`)."""

    @property
    def k(self) -> int:
        """The fewest runs any task has (pass^k goes up to it)."""
        counts: dict[str, int] = {}
        for job in self.jobs:
            counts[job.task.name] = counts.get(job.task.name, 0) + 1
        return min(counts.values(), default=1)


def plan_batch(
    runner: TaskRunner,
    bundle: Bundle | None,
    tasks: list[TaskFile],
    *,
    eval_name: str | None,
    seeds: str | None,
    k: int | None,
    seed: int | None,
    workers: int,
    overrides: dict[str, Any],
    check_overrides: Callable[..., None],
) -> Batch:
    """Every run of the eval / seeded batch, each checked as a run would check it (TaskError lists problems)."""
    spec: EvalFile | None = None
    if eval_name is not None:
        if bundle is None:
            raise TaskError(f"--eval {eval_name}: a task file has no evals; name its bundle")
        spec = read_eval(bundle, eval_name)
    rows, seeds_path = None, None
    if seeds is not None:
        seeds_path = Path(seeds)
    elif spec is not None and spec.seeds is not None:
        seeds_path = spec.path.parent.parent / spec.seeds
    if seeds_path is not None:
        rows = read_seeds(seeds_path)
        check_columns(seeds_path, rows, tasks)

    def base_seed(task: TaskFile) -> int:
        for value in (seed, spec.seed if spec else None, task.seed):
            if value is not None:
                return int(value)
        return int(runner.config.get("run.seed", 0))

    jobs = plan(tasks, base_seed=base_seed, k=k, overrides=overrides, spec=spec, rows=rows)
    if not jobs:
        raise TaskError(f"{seeds_path}: no row applies to the selected task(s); fix: check the rows' `task` column")
    problems: list[str] = []
    checked: set[tuple[int, str | None, str | None]] = set()
    for job in jobs:
        key = (id(job.task), job.overrides.get("agent"), job.overrides.get("sandbox"))
        if key in checked:
            continue
        checked.add(key)
        where = f"{seeds_path}: row {job.row.index + 1} (line {job.row.line}): " if job.row else ""
        try:
            check_overrides(
                runner.host, bundle, [job.task], agent=job.overrides.get("agent"), sandbox=job.overrides.get("sandbox")
            )
            runner.prepare(
                job.task,
                job.overrides.get("model"),
                bundle_dir=bundle.path if bundle else None,
                agent=job.overrides.get("agent"),
                model_url=job.overrides.get("model_url"),
            )
        except TaskError as exc:
            problems.append(f"{where}{exc}")
    if problems:
        raise TaskError("\n".join(problems))
    concurrency = workers if workers > 1 else (spec.concurrency if spec else 1)
    extra: dict[str, Any] = {}
    if spec is not None:
        extra["eval"] = eval_name
    if seeds_path is not None:
        extra["seeds"] = str(seeds_path)
    return Batch(jobs, concurrency, extra)


def describe(batch: Batch) -> list[str]:
    """What `--dry-run` prints: one line per task."""
    by_task: dict[str, list[Job]] = {}
    for job in batch.jobs:
        by_task.setdefault(job.task.name, []).append(job)
    return [
        f"{name}: {len(jobs)} run(s) ok (seeds {jobs[0].seed}…{jobs[-1].seed}"
        + (f", {len({j.row.index for j in jobs if j.row})} seeded row(s)" if jobs[0].row else "")
        + f"; {len(jobs[0].task.steps)} steps)"
        for name, jobs in by_task.items()
    ] + [f"{len(batch.jobs)} run(s) in all, {batch.concurrency} at a time"]
