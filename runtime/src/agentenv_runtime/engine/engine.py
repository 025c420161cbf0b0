"""The DAG engine: preflight every step, then run them with dependencies, concurrency, retries and teardown.

Independent steps run concurrently on one event loop. A failed step either fails the task (its dependents
are skipped and running steps are cancelled) or, with `fail_task_on_error = false`, lets the rest go on.
`retry` rolls every world back to the snapshot taken just before the retry's `from` step and runs that part
of the graph again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentenv import PluginHost
from agentenv.contracts import Step, StepFailed, kinds
from pydantic import BaseModel, ValidationError

from agentenv_runtime.engine.context import CURRENT_STEP, RunContext
from agentenv_runtime.engine.order import order_problems
from agentenv_runtime.engine.task import StepDecl, TaskError, TaskFile, ancestors
from agentenv_runtime.engine.verdict import all_graded, verifier_result_problem, verifier_score
from agentenv_runtime.world.world import World


@dataclass
class Planned:
    decl: StepDecl
    step: Step[Any]
    settings: BaseModel


@dataclass
class StepRecord:
    id: str
    type: str
    status: str = "pending"
    attempts: int = 0
    started: float | None = None
    duration_ms: float | None = None
    output: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def preflight(task: TaskFile, host: PluginHost, model: str | None = None) -> dict[str, Planned]:
    """Every step's type exists, its fields validate and the steps they name run before it; all problems at
    once, each naming file, step and field (a TaskError).

    `model` names the configured model (config `[model]` or `--model`); a step that needs one says so through
    `Step.needs_model`, and without a model the task is refused here rather than passing or failing later.
    """
    planned, problems = plan(task, host, model)
    if problems:
        raise TaskError("\n".join(problems))
    return planned


def plan(task: TaskFile, host: PluginHost, model: str | None = None) -> tuple[dict[str, Planned], list[str]]:
    """What `preflight` checks, without raising: the steps that passed and one line per problem."""
    steps = host.registry(kinds.STEPS)
    ids = [s.id for s in task.steps]
    planned: dict[str, Planned] = {}
    problems: list[str] = []
    for decl in task.steps:
        where = f"{task.path}: step {decl.id!r}"
        if decl.type not in steps:
            import difflib

            close = difflib.get_close_matches(decl.type, steps, n=1)
            known = f"installed: {', '.join(sorted(steps)) or 'none'}; " if len(steps) <= 12 else ""
            hint = f"did you mean {close[0]!r}? " if close else ""
            fix = f"{hint}{known}see `agentenv steps list`, and add the plugin that brings it (the bundle's "
            fix += "[requires] names what it needs)"
            problems.append(f"{where}: field `type`: unknown step type {decl.type!r}; fix: {fix}")
            continue
        try:
            step_cls = steps[decl.type].obj
        except LookupError as exc:  # a step type registered by name whose class is broken
            problems.append(f"{where}: field `type`: {exc}")
            continue
        try:
            settings = step_cls.Settings.model_validate(decl.fields)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                field_name = ".".join(str(p) for p in err["loc"]) or "(fields)"
                problems.append(f"{where} ({decl.type}): field `{field_name}`: {err['msg']}")
            continue
        step = step_cls()
        checked = _step_checks(step, settings, ids, f"{where} ({decl.type}): ", steps[decl.type].dist)
        if isinstance(checked, list):
            problems += checked
            continue
        own, need = checked
        problems.extend(f"{where} ({decl.type}): field `{f}`: {m}" for f, m in own)
        if need and not model:
            problems.append(
                f"{where} ({decl.type}): field `{need[0]}`: {need[1]} needs a model, and none is "
                "configured; fix: set [model] base_url and model in .agentenv/config.toml, or pass --model"
            )
        planned[decl.id] = Planned(decl, step, settings)
    problems += order_problems(task, {step_id: (made.step, made.settings) for step_id, made in planned.items()})
    return planned, problems


def _step_checks(
    step: Step[Any], settings: BaseModel, ids: list[str], where: str, dist: str
) -> tuple[list[tuple[str, str]], tuple[str, str] | None] | list[str]:
    """(its preflight problems, what needs a model) of a step type, or, when its own checks raise (third-party
    code), one line per check that raised naming the plugin: a bug there refuses the task, never ends the CLI."""
    own: list[tuple[str, str]] = []
    need: tuple[str, str] | None = None
    failed: list[str] = []
    for check in ("preflight", "needs_model"):
        try:
            if check == "preflight":
                own = list(step.preflight(settings, ids))
            else:
                need = step.needs_model(settings)
        except Exception as exc:
            failed.append(
                f"{where}its {check} raised {type(exc).__name__}: {exc} (a bug in {dist}, which registers step type "
                f"{step.name!r}; fix it there, or report it to its authors)"
            )
    return failed or (own, need)


class Engine:
    """Runs one task's planned steps in one run context."""

    def __init__(
        self,
        task: TaskFile,
        planned: dict[str, Planned],
        ctx: RunContext,
        on_step: Callable[[str, StepRecord], None] | None = None,
        skip: dict[str, StepRecord] | None = None,
    ) -> None:
        self.task, self.planned, self.ctx = task, planned, ctx
        self.deps = task.deps()
        self.records = {s.id: StepRecord(s.id, s.type) for s in task.steps}
        self.on_step = on_step or (lambda event, record: None)
        self.retries_left = {s.id: s.retry.times for s in task.steps if s.retry}
        self.retry_targets = {s.retry.from_ for s in task.steps if s.retry}
        self.checkpoints: dict[str, dict[str, bytes]] = {}
        for step_id, record in (skip or {}).items():  # resumed: already done in the stored run
            self.records[step_id] = record
            ctx.outputs[step_id] = record.output

    def _ready(self, step_id: str) -> bool | None:
        """True when every dependency is done, None when one failed fatally (so this step can never run)."""
        for dep in self.deps[step_id]:
            status = self.records[dep].status
            if status in ("skipped", "cancelled") or (status == "failed" and self.planned[dep].decl.fail_task_on_error):
                return None
            if status not in ("succeeded", "failed"):
                return False
        return True

    async def run(self) -> dict[str, StepRecord]:
        running: dict[asyncio.Task[dict[str, Any]], str] = {}
        try:
            while True:
                for step_id, record in self.records.items():
                    if record.status != "pending":
                        continue
                    ready = self._ready(step_id)
                    if ready is None:
                        record.status = "skipped"
                        self.on_step("skipped", record)
                    elif ready:
                        running[self._start(step_id)] = step_id
                if not running:
                    break
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for job in finished:
                    self._finish(running.pop(job), job, running)
        except asyncio.CancelledError:
            for job, step_id in running.items():
                job.cancel()
                self.records[step_id].status = "cancelled"
            await asyncio.gather(*running, return_exceptions=True)
            for record in self.records.values():
                if record.status == "pending":
                    record.status = "cancelled"
            raise
        return self.records

    def _start(self, step_id: str) -> asyncio.Task[dict[str, Any]]:
        if step_id in self.retry_targets:
            self.checkpoints[step_id] = {key: world.snapshot() for key, world in self.ctx.resources_of(World).items()}
        record = self.records[step_id]
        record.status, record.started, record.attempts = "running", time.time(), record.attempts + 1
        self.on_step("started", record)
        return asyncio.ensure_future(self._execute(step_id))

    async def _execute(self, step_id: str) -> dict[str, Any]:
        """Run one step with `ctx.step_id` naming it (a context variable: concurrent steps each see their own)."""
        CURRENT_STEP.set(step_id)
        plan = self.planned[step_id]
        return await plan.step.execute(plan.settings, self.ctx)

    def _finish(self, step_id: str, job: asyncio.Task[dict[str, Any]], running: dict[Any, str]) -> None:
        record = self.records[step_id]
        record.duration_ms = (time.time() - (record.started or time.time())) * 1000
        if job.cancelled():
            record.status = "cancelled"
            self.on_step("cancelled", record)
            return
        error = job.exception()
        if error is None:
            output = job.result() or {}
            problem = verifier_result_problem(output) if self.planned[step_id].step.verifier else None
            if problem is None:
                record.status, record.output, record.error = "succeeded", output, None
                self.ctx.outputs[step_id] = record.output
                self.on_step("succeeded", record)
                return
            record.output, error = output, StepFailed(problem)  # kept: what the verifier returned
        record.status = "failed"
        record.error = str(error) if isinstance(error, StepFailed) else f"{type(error).__name__}: {error}"
        self.on_step("failed", record)
        decl = self.planned[step_id].decl
        if decl.retry and self.retries_left.get(step_id, 0) > 0:
            self.retries_left[step_id] -= 1
            self._rewind(decl.retry.from_, step_id)
        elif decl.fail_task_on_error:
            for other in running:
                other.cancel()

    def _rewind(self, origin: str, failed: str) -> None:
        """Restore worlds to just before `origin`; mark origin, failed and every step after origin that already
        finished (the restore undid its work) to run again."""
        for key, blob in self.checkpoints.get(origin, {}).items():
            self.ctx.resources_of(World)[key].restore(blob)
        after = {s for s in self.deps if origin in ancestors(self.deps, s)}
        again = {failed, origin} | {s for s in after if self.records[s].status in ("succeeded", "failed")}
        for step_id in again:
            self.records[step_id].status = "pending"
            self.ctx.outputs.pop(step_id, None)
        self.ctx.log(f"retrying from {origin} after {failed} failed ({self.retries_left[failed]} retries left)")


def score_of(task: TaskFile, planned: dict[str, Planned], records: dict[str, StepRecord]) -> float | None:
    """The task's score: the last verifier step's (aggregate last by convention); None for open-ended tasks, and
    when a verifier was not graded (`graded = false`: a judge with no model), which is never a pass."""
    score = None
    for decl in task.steps:
        if planned[decl.id].step.verifier and records[decl.id].status == "succeeded":
            if not all_graded([records[decl.id].output]):
                return None
            score = verifier_score(records[decl.id].output)
    return score
