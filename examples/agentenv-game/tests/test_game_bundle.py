"""The connect-four bundle, run for real: the reference solver wins (1.0), the wrong one loses (below 1)."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv import get_host
from agentenv_runtime import find_bundle
from agentenv_testing.tasks import TaskRuns


def run_with(agentenv_runs: TaskRuns, agent: str) -> dict[str, Any]:
    bundle = find_bundle("connect-four", get_host())
    assert bundle.requirement_problems() == []
    task = bundle.task_files()["beat-the-bot"]
    return agentenv_runs(task, bundle_dir=bundle.path, overrides={"agent": agent})


@pytest.mark.parametrize(("agent", "score"), [("solver", 1.0), ("wrong_solver", 0.0)])
def test_the_match_is_scored(agentenv_runs: TaskRuns, agent: str, score: float) -> None:
    record = run_with(agentenv_runs, agent)
    assert record["status"] == "succeeded", record["steps"]
    assert record["score"] == score and record["passed"] is (score == 1.0)


def test_only_red_moves_come_from_the_agent(agentenv_runs: TaskRuns) -> None:
    record = run_with(agentenv_runs, "solver")
    calls = [e for e in agentenv_runs.trajectory(record, world="table") if e.get("kind") == "tool_call"]
    assert {e["tool"] for e in calls if e["role"] == "red"} <= {"view_board", "drop"}
    assert {e["tool"] for e in calls if e["role"] == "system"} == {"bot_move"}
