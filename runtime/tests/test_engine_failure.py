"""Failure policy: a fatal failure skips dependents and cancels what runs; `fail_task_on_error = false` goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agentenv.contracts import StepFailed
from engine_helpers import engine_host, make_step, run_task, runner_for, statuses, steps_by_id, task_file

TIMEOUT = 5.0


class Probe:
    """Shared by the steps of one test: when `slow` started, whether it was cancelled, what was torn down."""

    def __init__(self) -> None:
        self.slow_started = asyncio.Event()
        self.slow_may_finish = asyncio.Event()
        self.cancelled: list[str] = []
        self.ran: list[str] = []
        self.torn_down: list[str] = []

    def steps(self, error: Exception) -> list[Any]:
        async def boom(settings: Any, ctx: Any) -> dict[str, Any]:
            await asyncio.wait_for(self.slow_started.wait(), TIMEOUT)  # fail only while `slow` is running
            raise error

        async def slow(settings: Any, ctx: Any) -> dict[str, Any]:
            ctx.add_resource(ctx.step_id, object(), lambda: self.torn_down.append("slow"))
            self.slow_started.set()
            try:
                await asyncio.wait_for(self.slow_may_finish.wait(), TIMEOUT)
            except asyncio.CancelledError:
                self.cancelled.append(ctx.step_id)
                raise
            return {"slow": "done"}

        async def note(settings: Any, ctx: Any) -> dict[str, Any]:
            self.ran.append(ctx.step_id)
            if ctx.step_id == "after_boom":
                self.slow_may_finish.set()
            return {"ran": ctx.step_id}

        return [make_step("boom", boom), make_step("slow", slow), make_step("note", note)]


def _task(tmp_path: Path, fatal: bool) -> Any:
    return task_file(
        tmp_path,
        [
            {"id": "boom", "type": "boom", "depends_on": [], "fail_task_on_error": fatal},
            {"id": "slow", "type": "slow", "depends_on": []},
            {"id": "after_boom", "type": "note", "depends_on": ["boom"]},
            {"id": "after_slow", "type": "note", "depends_on": ["slow"]},
            {"id": "after_all", "type": "note"},
        ],
    )


def test_fatal_failure_skips_dependents_and_cancels_running_steps(tmp_path: Path) -> None:
    probe = Probe()
    host = engine_host(*probe.steps(StepFailed("the boom step went off; fix the fuse")))
    record = run_task(runner_for(host, tmp_path), _task(tmp_path, fatal=True))

    assert statuses(record) == {
        "boom": "failed",
        "slow": "cancelled",
        "after_boom": "skipped",
        "after_slow": "skipped",
        "after_all": "skipped",
    }
    assert probe.cancelled == ["slow"]  # the running step really got CancelledError
    assert probe.ran == []
    assert probe.torn_down == ["slow"]  # a failed run tears down what it started
    assert record["status"] == "failed" and record["passed"] is False
    assert steps_by_id(record)["boom"]["error"] == "the boom step went off; fix the fuse"
    assert steps_by_id(record)["slow"]["duration_ms"] is not None


def test_other_exceptions_are_recorded_with_their_type(tmp_path: Path) -> None:
    probe = Probe()
    host = engine_host(*probe.steps(ValueError("bad value")))
    record = run_task(runner_for(host, tmp_path), _task(tmp_path, fatal=True))
    assert steps_by_id(record)["boom"]["error"] == "ValueError: bad value"
    assert record["status"] == "failed"


@pytest.mark.parametrize("error", [StepFailed("tolerated"), RuntimeError("tolerated")])
def test_tolerated_failure_lets_dependents_run(tmp_path: Path, error: Exception) -> None:
    probe = Probe()
    host = engine_host(*probe.steps(error))
    record = run_task(runner_for(host, tmp_path), _task(tmp_path, fatal=False))

    assert statuses(record) == {
        "boom": "failed",
        "slow": "succeeded",
        "after_boom": "succeeded",
        "after_slow": "succeeded",
        "after_all": "succeeded",
    }
    assert probe.cancelled == []
    assert sorted(probe.ran) == ["after_all", "after_boom", "after_slow"]
    assert probe.ran[-1] == "after_all"
    assert record["status"] == "succeeded" and record["passed"] is True
    assert "tolerated" in steps_by_id(record)["boom"]["error"]
    assert steps_by_id(record)["after_boom"]["output"] == {"ran": "after_boom"}
