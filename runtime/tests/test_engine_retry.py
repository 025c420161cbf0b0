"""`retry = {from = STEP, times = N}`: roll every world back to just before STEP and run again from there."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentenv.contracts import StepFailed
from agentenv_runtime.world.world import World
from engine_helpers import (
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

TIMEOUT = 5.0


class Mark(BaseModel):
    label: str = "m"


class Check(BaseModel):
    fail_times: int = 1
    """How many attempts fail before one passes."""


class Tally:
    """The steps of one test and what they saw."""

    def __init__(self) -> None:
        self.deployed: list[World] = []
        self.executions: dict[str, int] = {}
        self.check_saw: list[list[str]] = []
        self.side_done = asyncio.Event()

    def count(self, ctx: Any) -> None:
        self.executions[ctx.step_id] = self.executions.get(ctx.step_id, 0) + 1

    def steps(self) -> list[Any]:
        async def mark(settings: Mark, ctx: Any) -> dict[str, Any]:
            self.count(ctx)
            outcome = ctx.resource("deploy", World).call("mark", {"label": settings.label})
            assert outcome.ok, outcome.error
            if ctx.step_id == "side":
                self.side_done.set()
            return {"id": outcome.result["id"]}

        async def check(settings: Check, ctx: Any) -> dict[str, Any]:
            self.count(ctx)
            self.check_saw.append(marks(ctx.resource("deploy", World)))
            if self.executions[ctx.step_id] <= settings.fail_times:
                raise StepFailed(f"attempt {self.executions[ctx.step_id]} failed on purpose")
            return {"marks": len(self.check_saw[-1])}

        async def wait_side_then_check(settings: Check, ctx: Any) -> dict[str, Any]:
            await asyncio.wait_for(self.side_done.wait(), TIMEOUT)
            return await check(settings, ctx)

        return [
            deploy_tally_step("deploy_tally", self.deployed),
            make_step("mark", mark, settings=Mark),
            make_step("check", check, settings=Check),
            make_step("check_after_side", wait_side_then_check, settings=Check),
        ]


def _steps(fail_times: int, times: int = 2) -> list[dict[str, Any]]:
    return [
        {"id": "deploy", "type": "deploy_tally"},
        {"id": "mutate", "type": "mark"},
        {"id": "check", "type": "check", "fail_times": fail_times, "retry": {"from": "mutate", "times": times}},
    ]


def test_retry_rolls_the_world_back_to_before_the_from_step(tmp_path: Path) -> None:
    tally = Tally()
    host = engine_host(*tally.steps())
    record = run_task(runner_for(host, tmp_path), task_file(tmp_path, _steps(fail_times=1)))

    assert record["status"] == "succeeded", brief(record)
    assert record["passed"] is True
    assert tally.executions == {"mutate": 2, "check": 2}
    assert len(tally.deployed) == 1  # deploy is before `from`: not run again
    assert tally.check_saw == [["m"], ["m"]]  # without the rollback the second attempt would see two marks
    assert marks(tally.deployed[0]) == ["m"]
    steps = steps_by_id(record)
    assert {sid: s["attempts"] for sid, s in steps.items()} == {"deploy": 1, "mutate": 2, "check": 2}
    assert steps["check"]["error"] is None and steps["check"]["output"] == {"marks": 1}


def test_retries_exhausted_fail_the_task(tmp_path: Path) -> None:
    tally = Tally()
    host = engine_host(*tally.steps())
    events: list[tuple[str, str]] = []
    record = run_task(
        runner_for(host, tmp_path),
        task_file(tmp_path, _steps(fail_times=99, times=2)),
        on_step=lambda event, step: events.append((event, step.id)),
    )

    assert record["status"] == "failed" and record["passed"] is False
    assert statuses(record) == {"deploy": "succeeded", "mutate": "succeeded", "check": "failed"}
    steps = steps_by_id(record)
    assert steps["check"]["attempts"] == 3 and steps["mutate"]["attempts"] == 3  # 1 + times
    assert steps["check"]["error"] == "attempt 3 failed on purpose"
    assert events.count(("failed", "check")) == 3
    assert tally.check_saw == [["m"], ["m"], ["m"]]
    assert marks(tally.deployed[0]) == ["m"]


def test_retry_from_the_failing_step_itself_undoes_its_partial_work(tmp_path: Path) -> None:
    tally = Tally()

    async def flaky_mark(settings: Any, ctx: Any) -> dict[str, Any]:
        tally.count(ctx)
        ctx.resource("deploy", World).call("mark", {"label": f"try{tally.executions[ctx.step_id]}"})
        if tally.executions[ctx.step_id] == 1:
            raise StepFailed("half done")
        return {}

    host = engine_host(deploy_tally_step("deploy_tally", tally.deployed), make_step("flaky", flaky_mark))
    task = task_file(
        tmp_path,
        [{"id": "deploy", "type": "deploy_tally"}, {"id": "f", "type": "flaky", "retry": {"from": "f", "times": 1}}],
    )
    record = run_task(runner_for(host, tmp_path), task)
    assert record["status"] == "succeeded", brief(record)
    assert marks(tally.deployed[0]) == ["try2"]


def test_retry_reruns_finished_steps_whose_work_the_rollback_undid(tmp_path: Path) -> None:
    """`side` also runs after `mutate` but is not an ancestor of `check`. Restoring the world to before `mutate`
    erases `side`'s mark, so `side` must run again too ("run again from there"): nothing a run wrote is lost.
    """
    tally = Tally()
    host = engine_host(*tally.steps())
    task = task_file(
        tmp_path,
        [
            {"id": "deploy", "type": "deploy_tally"},
            {"id": "mutate", "type": "mark"},
            {"id": "side", "type": "mark", "label": "side", "depends_on": ["mutate"]},
            {
                "id": "check",
                "type": "check_after_side",
                "depends_on": ["mutate"],
                "retry": {"from": "mutate", "times": 1},
            },
        ],
    )
    record = run_task(runner_for(host, tmp_path), task)

    assert record["status"] == "succeeded", brief(record)
    assert tally.check_saw[0] == ["m", "side"]
    assert sorted(marks(tally.deployed[0])) == ["m", "side"], "side's mark was rolled back and never redone"
    assert steps_by_id(record)["side"]["attempts"] == 2
