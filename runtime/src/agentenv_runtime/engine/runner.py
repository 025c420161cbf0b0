"""One task run from start to record: preflight, pins, the DAG, trajectory, teardown, the run record.

Whatever happens (a failed step, Ctrl-C), everything the run started is torn down and everything it
recorded is kept: the record, the trajectory and, for a run that did not finish, the worlds' state so the
run can be resumed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv import PluginHost
from agentenv import __version__ as KERNEL_VERSION
from agentenv.config import Config

from agentenv_runtime.engine.context import CURRENT_STEP, RunContext
from agentenv_runtime.engine.engine import Engine, Planned, StepRecord, plan, score_of
from agentenv_runtime.engine.install_preflight import install_problems
from agentenv_runtime.engine.ranges import unmet_ranges
from agentenv_runtime.engine.records import Records, owner
from agentenv_runtime.engine.seeds import with_defaults
from agentenv_runtime.engine.task import TaskError, TaskFile
from agentenv_runtime.engine.verdict import all_graded
from agentenv_runtime.events import RUN_ID
from agentenv_runtime.live import join_live_log
from agentenv_runtime.world.world import World

FINAL_STATE_MAX_BYTES = 4 * 1024 * 1024
"""The largest compressed final world state a succeeded run keeps (a helpdesk world: about 8 KB)."""


def new_run_id() -> str:
    """Sortable by start second, unique by 64 random bits (24 bits once collided across parallel rollouts)."""
    return time.strftime("r%Y%m%d-%H%M%S-", time.gmtime()) + os.urandom(8).hex()


def check_pins(task: TaskFile, host: PluginHost | None = None) -> None:
    problems = [
        f"{task.path}: field `pins.plugins.{dist}`: the task pins {dist}{spec}, but "
        + (f"{dist} {have} is installed" if have else f"{dist} is not installed")
        + f"; fix: agentenv plugin add '{dist}{spec}'"
        for dist, spec, have in unmet_ranges(task.pins.plugins, host, f"{task.path}: field `pins.plugins")
    ]
    if problems:
        raise TaskError("\n".join(problems))


def combined_digest(ctx: RunContext) -> str | None:
    worlds = ctx.resources_of(World)
    if not worlds:
        return None
    return combine_digests({key: world.trajectory.digest() for key, world in worlds.items()})


def combine_digests(digests: dict[str, str]) -> str:
    """A run's digest from its worlds' trajectory digests (one world: its own digest)."""
    if len(digests) == 1:
        return next(iter(digests.values()))
    lines = "".join(f"{key}:{digest}\n" for key, digest in sorted(digests.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


class TaskRunner:
    """Runs tasks against one host, config and set of stores (reuse it for many rollouts)."""

    def __init__(self, host: PluginHost, config: Config, *, logger: Callable[[str], None] | None = None) -> None:
        self.host, self.config, self.logger = host, config, logger
        self.records = Records(config, host)
        join_live_log(host)  # while `agentenv up` serves the project, its runs' events reach it live
        installed = {i.dist: i.version for i in host.infos if i.status == "ok"}
        self.plugin_versions = {"agentenv-kernel": KERNEL_VERSION, **installed}
        self._planned: dict[tuple[Any, ...], tuple[TaskFile, dict[str, Planned]]] = {}

    def prepare(
        self,
        task: TaskFile,
        model: str | None = None,
        *,
        bundle_dir: Path | None = None,
        agent: str | None = None,
        model_url: str | None = None,
    ) -> dict[str, Planned]:
        """Pins, preflight and the install checks, once per task file, bundle folder and `--agent`/`--model`
        choice (rollouts of one task share the plan). A TaskError names every problem; nothing has started."""
        key = (task.path, bundle_dir, agent, model, model_url)
        cached = self._planned.get(key)
        if cached is None or cached[0] is not task:
            check_pins(task, self.host)
            filled = with_defaults(task)  # a seeded batch's rows are filled already; what is left takes defaults
            configured = model or (self.config.raw("model.base_url") and self.config.raw("model.model"))
            planned, problems = plan(filled, self.host, configured or None)
            problems += install_problems(  # the models that make deploy_agent pick `llm`
                filled,
                self.host,
                bundle_dir,
                agent=agent,
                model=model,
                configured_model=self.config.raw("model.model"),
                steps=set(planned),  # a step its type refused is not checked twice
                config=self.config,
                model_url=model_url,
            )
            if problems:  # every problem in one pass, the step types' own first
                raise TaskError("\n".join(problems))
            cached = (task, planned)
            self._planned[key] = cached
        return cached[1]

    async def run(
        self,
        task: TaskFile,
        *,
        seed: int,
        bundle: str | None = None,
        bundle_dir: Path | None = None,
        overrides: dict[str, Any] | None = None,
        on_step: Callable[[str, StepRecord], None] | None = None,
        resume: dict[str, Any] | None = None,
        keep: bool = False,
    ) -> dict[str, Any]:
        wanted = overrides or {}
        agent, model_url = wanted.get("agent"), wanted.get("model_url")
        planned = self.prepare(task, wanted.get("model"), bundle_dir=bundle_dir, agent=agent, model_url=model_url)
        ctx = RunContext(
            new_run_id(),
            seed,
            task.name,
            task.path,
            bundle_dir,
            self.config,
            self.host,
            self.records.objects,
            overrides=dict(overrides or {}),
            artifact_pins=dict(task.pins.artifacts),
            logger=self.logger,
        )
        record: dict[str, Any] = {
            "id": ctx.run_id,
            "task": task.name,
            "task_file": str(task.path),
            "bundle": bundle,
            "seed": seed,
            "status": "running",
            "started_at": time.time(),
            "plugin_versions": self.plugin_versions,
            "pins": task.pins.model_dump(),
            "overrides": ctx.overrides,
            "agent": wanted.get("agent") or None,  # top level, so stores filter runs by agent without a scan
            "resumed_from": resume["id"] if resume else None,
            "owner": owner(),
        }
        self.records.create(record)  # before anything runs: a run that cannot be recorded does not start
        self.host.notify("run_started", run=dict(record))
        skip = self._resumable(resume, planned) if resume else None

        def observe(event: str, step: StepRecord) -> None:
            if on_step:
                on_step(event, step)
            hook = "step_started" if event == "started" else "step_finished"
            if event in ("started", "succeeded", "failed") and self.host.observes(hook):
                self.host.notify(hook, run_id=ctx.run_id, step=dict(vars(step)))

        engine = Engine(task, planned, ctx, observe, skip)
        status = "failed"
        run_token = RUN_ID.set(ctx.run_id)  # names the run in the event log's tool-call lines
        try:
            if resume:
                await self._restore_worlds(resume, engine)
            steps = await engine.run()
            ok = all(
                s.status == "succeeded" or (s.status == "failed" and not planned[s.id].decl.fail_task_on_error)
                for s in steps.values()
            )
            status = "succeeded" if ok else "failed"
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        finally:
            self._finish(record, ctx, engine, planned, status, keep)
            RUN_ID.reset(run_token)
        return record

    def _keep_final_state(self, record: dict[str, Any], run_id: str, key: str, world: World) -> None:
        """A finished run's world as it ended, compressed, so its tables can be shown later (`agentenv up`).

        Unlike `world_snapshots` (kept by failed and `--keep` runs, to resume them), it is read only. A world
        whose compressed state passes FINAL_STATE_MAX_BYTES is not kept (`--keep` keeps it whole): a helpdesk
        world is about 8 KB compressed (107 KB raw) and costs about half a millisecond."""
        import zlib

        packed = zlib.compress(world.snapshot(), 1)
        if len(packed) > FINAL_STATE_MAX_BYTES:
            record.setdefault("final_states_skipped", {})[key] = (
                f"{len(packed)} bytes compressed > {FINAL_STATE_MAX_BYTES}; run with --keep to keep it"
            )
            return
        object_key = f"runs/{run_id}/{key}.final.snapshot.zlib"
        self.records.put_object(object_key, packed)
        record.setdefault("final_states", {})[key] = object_key

    def _finish(
        self,
        record: dict[str, Any],
        ctx: RunContext,
        engine: Engine,
        planned: dict[str, Planned],
        status: str,
        keep: bool,
    ) -> None:
        graded = all_graded(r.output for sid, r in engine.records.items() if planned[sid].step.verifier)
        score = score_of(engine.task, planned, engine.records)  # None when not graded
        passed = status == "succeeded" and graded and (score is None or score >= engine.task.pass_threshold)
        digest = combined_digest(ctx)
        save_errors = []
        for key, world in ctx.resources_of(World).items():
            try:  # a served world whose server died, or a full disk, must not stop the teardown below
                trajectory_key = f"runs/{ctx.run_id}/{key}.trajectory.jsonl"
                self.records.put_object_chunks(trajectory_key, world.trajectory.iter_jsonl())
                record.setdefault("trajectories", {})[key] = trajectory_key
                if status != "succeeded" or keep:
                    snapshot_key = f"runs/{ctx.run_id}/{key}.snapshot"
                    self.records.put_object(snapshot_key, world.snapshot())
                    record.setdefault("world_snapshots", {})[key] = snapshot_key
                else:
                    self._keep_final_state(record, ctx.run_id, key, world)
            except Exception as exc:
                save_errors.append(f"saving world {key}: {type(exc).__name__}: {exc}")
        errors = save_errors + ([] if keep else ctx.teardown_all())
        if save_errors:  # a run whose trajectory is lost cannot be checked or reproduced: it did not pass
            status, passed = "failed", False
        record.update(
            status=status,
            passed=passed,
            graded=graded,
            store_errors=save_errors,
            score=score,
            trajectory_digest=digest,
            finished_at=time.time(),
            steps=[dict(vars(s)) for s in engine.records.values()],  # outputs are already JSON data
            teardown_errors=errors,
            verifiers={
                sid: r.output
                for sid, r in engine.records.items()
                if planned[sid].step.verifier and r.status == "succeeded"
            },
            kept=[key for key, _ in ctx.teardowns] if keep else [],
        )
        self.records.save(record)
        self.host.notify("run_finished", run=dict(record))

    @staticmethod
    def _resumable(resume: dict[str, Any], planned: dict[str, Planned]) -> dict[str, StepRecord]:
        """Steps of the stored run that succeeded and need not run again (deploy steps always re-run)."""
        done = {}
        for step in resume.get("steps", []):
            plan = planned.get(step["id"])
            if plan and step["status"] == "succeeded" and not plan.step.creates_resources:
                done[step["id"]] = StepRecord(**step)
        return done

    async def _restore_worlds(self, resume: dict[str, Any], engine: Engine) -> None:
        """Re-deploy what the stored run had deployed, then put each world back in the state it left it in.

        Deploy steps the stored run never finished are left to the DAG, so they still run after their dependencies.
        """
        done = {step["id"] for step in resume.get("steps", []) if step["status"] == "succeeded"}
        deploy = [sid for sid, plan in engine.planned.items() if plan.step.creates_resources and sid in done]
        for step_id in deploy:
            plan = engine.planned[step_id]
            token = CURRENT_STEP.set(step_id)  # `ctx.step_id` names the step, as in a normal run
            try:
                engine.ctx.outputs[step_id] = await plan.step.execute(plan.settings, engine.ctx) or {}
            finally:
                CURRENT_STEP.reset(token)
            engine.records[step_id] = StepRecord(
                step_id, plan.decl.type, "succeeded", 1, time.time(), 0.0, engine.ctx.outputs[step_id]
            )
        for key, object_key in (resume.get("world_snapshots") or {}).items():
            worlds = engine.ctx.resources_of(World)
            if key in worlds:
                worlds[key].restore(self.records.get_object(object_key))


def summary_of(record: dict[str, Any]) -> dict[str, Any]:
    """What `agentenv run --json` reports of one run."""
    return {
        "name": record["task"],
        "status": record["status"],
        "passed": record["passed"],
        "graded": record.get("graded", True),
        "score": record["score"],
        "trajectory_digest": record["trajectory_digest"],
        "run_id": record["id"],
        "seed": record["seed"],
        "reason": failure_reason(record),
        "stored": not record.get("store_errors"),
    }


def failure_reason(record: dict[str, Any]) -> str | None:
    """Why a failed run failed, in one line: what could not be stored (every step may have succeeded, the score
    standing), else the first failed step's error; None for a run that did not fail."""
    if record.get("status") != "failed":
        return None
    if record.get("store_errors"):
        return "; ".join(str(error) for error in record["store_errors"])
    for step in record.get("steps") or []:
        if step.get("status") == "failed":
            return f"step {step.get('id')!r} ({step.get('type')}): {step.get('error') or 'failed'}"
    return None


RolloutJob = tuple[str, str | None, str | None, list[int], dict[str, Any]]
"""(task file, bundle name, bundle folder, seeds, overrides): what `rollout_worker` runs."""


def rollout_worker(job: RolloutJob) -> list[dict[str, Any]]:
    """One worker process: its own plugin host, config and stores; runs its share of the seeds in order."""
    from agentenv import get_host
    from agentenv.config import load_config

    from agentenv_runtime.engine.task import read_task

    task_path, bundle, bundle_dir, seeds, overrides = job
    runner = TaskRunner(get_host(), load_config())
    task = read_task(Path(task_path))

    async def rollouts() -> list[dict[str, Any]]:
        return [
            summary_of(
                await runner.run(
                    task,
                    seed=seed,
                    bundle=bundle,
                    bundle_dir=Path(bundle_dir) if bundle_dir else None,
                    overrides=overrides,
                )
            )
            for seed in seeds
        ]

    return asyncio.run(rollouts())


def rollout_jobs(
    task: TaskFile, seeds: list[int], workers: int, bundle: str | None, folder: Path | None, overrides: dict[str, Any]
) -> list[RolloutJob]:
    """The seeds in chunks (about four per worker, at most 50 seeds each), in seed order."""
    chunk = max(1, min(50, len(seeds) // (workers * 4) or 1))
    where = str(folder) if folder else None
    return [(str(task.path), bundle, where, seeds[i : i + chunk], overrides) for i in range(0, len(seeds), chunk)]


def run_parallel(
    task: TaskFile,
    seeds: list[int],
    workers: int,
    *,
    bundle: str | None,
    bundle_dir: Path | None,
    overrides: dict[str, Any],
    on_done: Callable[[dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """Rollouts of one task across `workers` processes (worlds stay in-process inside each worker).

    Seeds are dealt round-robin in chunks so progress arrives while the run goes on; results come back in
    seed order. Each worker writes its own run records to the configured stores.
    """
    from concurrent.futures import ProcessPoolExecutor

    jobs = rollout_jobs(task, seeds, workers, bundle, bundle_dir, overrides)
    results: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for batch in pool.map(rollout_worker, jobs):
            for summary in batch:
                on_done(summary)
            results.extend(batch)
    return results
