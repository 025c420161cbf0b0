"""A verifier's result is checked by the engine before its score counts: a score that is not a number in [0, 1],
a missing score or a `passed` that is not a boolean fails that step with the reason; every step's record is kept
and `--resume` runs the failed verifier again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_helpers import engine_host, make_step, run_task, runner_for, statuses, steps_by_id, task_file


def verifier_returning(result: dict[str, Any]) -> Any:
    async def grade(settings: Any, ctx: Any) -> dict[str, Any]:
        return result

    return make_step("custom_grade", grade, verifier=True)


async def work(settings: Any, ctx: Any) -> dict[str, Any]:
    return {"done": True}


STEPS = [{"id": "work", "type": "work"}, {"id": "grade", "type": "custom_grade"}]


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        ({"score": "high"}, "field `score`: Input should be a valid number"),
        ({"score": 7.5}, "field `score`: Input should be less than or equal to 1"),
        ({"passed": True}, "field `score`: Field required"),
        ({"score": -0.1}, "field `score`: Input should be greater than or equal to 0"),
        ({"score": True}, "field `score`: Input should be a valid number"),
        ({"score": 0.5, "passed": "yes"}, "field `passed`: Input should be a valid boolean"),
        ({"score": 0.5, "rows": [{"criterion": "x", "score": 3}]}, "field `rows.0.score`"),
    ],
)
def test_a_bad_verifier_result_fails_that_step_with_the_reason(
    tmp_path: Path, result: dict[str, Any], reason: str
) -> None:
    host = engine_host(make_step("work", work), verifier_returning(result))
    record = run_task(runner_for(host, tmp_path), task_file(tmp_path, STEPS))
    assert statuses(record) == {"work": "succeeded", "grade": "failed"}
    assert record["status"] == "failed"
    assert record["score"] is None
    error = steps_by_id(record)["grade"]["error"]
    assert "verifier result" in error and reason in error, error
    assert steps_by_id(record)["work"]["output"] == {"done": True}  # every step's record is kept


def test_a_good_verifier_result_is_the_score(tmp_path: Path) -> None:
    result = {"score": 1, "passed": True, "rows": [{"criterion": "c", "passed": True, "score": 1.0, "detail": "ok"}]}
    host = engine_host(make_step("work", work), verifier_returning(result))
    record = run_task(runner_for(host, tmp_path), task_file(tmp_path, STEPS))
    assert statuses(record) == {"work": "succeeded", "grade": "succeeded"}
    assert record["score"] == 1.0


def test_resume_runs_the_failed_verifier_again(tmp_path: Path) -> None:
    returned: list[dict[str, Any]] = [{"score": "high"}]
    ran: list[str] = []

    async def grade(settings: Any, ctx: Any) -> dict[str, Any]:
        ran.append(ctx.step_id)
        return returned[-1]

    async def counted_work(settings: Any, ctx: Any) -> dict[str, Any]:
        ran.append(ctx.step_id)
        return {"done": True}

    host = engine_host(make_step("work", counted_work), make_step("custom_grade", grade, verifier=True))
    task = task_file(tmp_path, STEPS)
    first = run_task(runner_for(host, tmp_path), task)
    assert statuses(first) == {"work": "succeeded", "grade": "failed"}

    returned.append({"score": 0.75})
    ran.clear()
    runner = runner_for(host, tmp_path)
    stored = runner.records.get(first["id"])
    second = run_task(runner, task, seed=stored["seed"], resume=stored)
    assert ran == ["grade"]
    assert statuses(second) == {"work": "succeeded", "grade": "succeeded"}
    assert second["score"] == 0.75
