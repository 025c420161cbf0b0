"""Resuming a run that failed: finished steps are not run again, deploy steps are, and worlds come back as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentenv.contracts import StepFailed
from agentenv_runtime.world.world import World
from engine_helpers import (
    TallyEnv,
    brief,
    deploy_tally_step,
    engine_host,
    make_step,
    marks,
    run_task,
    runner_for,
    statuses,
    steps_by_id,
    task_file,
)
from pydantic import BaseModel


class Gate(BaseModel):
    flag: str


def test_resume_skips_finished_steps_and_restores_the_world(tmp_path: Path) -> None:
    deployed: list[World] = []
    executions: list[str] = []
    final_saw: list[list[str]] = []
    flag = tmp_path / "flag"

    async def mutate(settings: Any, ctx: Any) -> dict[str, Any]:
        executions.append(ctx.step_id)
        assert ctx.resource("deploy", World).call("mark", {"label": "before-failure"}).ok
        return {"marked": 1}

    async def gate(settings: Gate, ctx: Any) -> dict[str, Any]:
        executions.append(ctx.step_id)
        if not Path(settings.flag).exists():
            raise StepFailed(f"{settings.flag} does not exist yet")
        return {"open": True}

    async def final(settings: Any, ctx: Any) -> dict[str, Any]:
        executions.append(ctx.step_id)
        final_saw.append(marks(ctx.resource("deploy", World)))
        return {"seen_mutate_output": ctx.outputs["mutate"]}

    host = engine_host(
        deploy_tally_step("deploy_tally", deployed),
        make_step("mutate", mutate),
        make_step("gate", gate, settings=Gate),
        make_step("final", final),
    )
    task = task_file(
        tmp_path,
        [
            {"id": "deploy", "type": "deploy_tally"},
            {"id": "mutate", "type": "mutate"},
            {"id": "gate", "type": "gate", "flag": str(flag)},
            {"id": "final", "type": "final"},
        ],
    )
    first = run_task(runner_for(host, tmp_path), task, seed=11)
    assert first["status"] == "failed"
    assert statuses(first) == {"deploy": "succeeded", "mutate": "succeeded", "gate": "failed", "final": "skipped"}
    assert set(first["world_snapshots"]) == {"deploy"}  # a run that did not finish keeps its worlds' state
    assert executions == ["mutate", "gate"]

    flag.write_text("open")
    executions.clear()
    runner = runner_for(host, tmp_path)  # a new runner, as a new `agentenv run --resume` process would make
    stored = runner.records.get(first["id"][:-2])  # a unique prefix of the id is enough
    assert stored["id"] == first["id"]
    second = run_task(runner, task, seed=stored["seed"], resume=stored)

    assert second["status"] == "succeeded", brief(second)
    assert second["resumed_from"] == first["id"] and second["id"] != first["id"]
    assert second["seed"] == 11
    assert executions == ["gate", "final"]  # mutate succeeded before: not run again
    assert len(deployed) == 2  # the deploy step ran again to re-create its world
    assert final_saw == [["before-failure"]]  # the new world holds the stored run's state
    assert marks(deployed[1]) == ["before-failure"]
    steps = steps_by_id(second)
    assert steps["mutate"]["status"] == "succeeded" and steps["mutate"]["output"] == {"marked": 1}
    assert steps["final"]["output"] == {"seen_mutate_output": {"marked": 1}}
    assert steps["deploy"]["status"] == "succeeded"
    assert "world_snapshots" not in second  # finished: nothing left to resume

    listed = runner.records.list(limit=10, task="t")
    assert {r["id"] for r in listed} == {first["id"], second["id"]}


def test_resume_runs_deploy_steps_the_stored_run_never_reached_in_dag_order(tmp_path: Path) -> None:
    """Only deploys that succeeded before are re-run up front; a deploy after the failure point waits its turn."""
    order: list[str] = []
    flag = tmp_path / "flag"

    async def deploy(settings: Any, ctx: Any) -> dict[str, Any]:
        order.append(ctx.step_id)
        ctx.add_resource(ctx.step_id, World([TallyEnv()]))
        return {}

    async def gate(settings: Gate, ctx: Any) -> dict[str, Any]:
        order.append(ctx.step_id)
        if not Path(settings.flag).exists():
            raise StepFailed("closed")
        return {}

    host = engine_host(make_step("deploy", deploy, creates_resources=True), make_step("gate", gate, settings=Gate))
    task = task_file(
        tmp_path,
        [
            {"id": "early", "type": "deploy"},
            {"id": "gate", "type": "gate", "flag": str(flag)},
            {"id": "late", "type": "deploy"},
        ],
    )
    first = run_task(runner_for(host, tmp_path), task)
    assert statuses(first) == {"early": "succeeded", "gate": "failed", "late": "skipped"}
    flag.write_text("open")
    order.clear()
    runner = runner_for(host, tmp_path)
    second = run_task(runner, task, resume=runner.records.get(first["id"]))
    assert second["status"] == "succeeded", brief(second)
    assert order == ["early", "gate", "late"]
