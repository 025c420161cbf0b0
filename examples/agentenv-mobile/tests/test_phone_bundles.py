"""The phone bundles run for real: each graded task scores 1.0 with its reference solver, below 1 with a wrong one."""

from __future__ import annotations

import pytest
from agentenv import get_host
from agentenv_runtime import find_bundle
from agentenv_testing.tasks import TaskRuns

CASES = [
    ("phone-day", "reschedule-dentist", "dentist_wrong"),
    ("phone-day", "quiet-evening", "quiet_wrong"),
    ("phone-and-slack", "dentist-to-slack", "wrong_solver"),
]


@pytest.mark.parametrize(("bundle_name", "task", "wrong"), CASES)
def test_reference_solver_scores_one_and_the_wrong_one_less(
    agentenv_runs: TaskRuns, bundle_name: str, task: str, wrong: str
) -> None:
    bundle = find_bundle(bundle_name, get_host())
    assert bundle.requirement_problems() == []
    path = bundle.task_files()[task]
    solved = agentenv_runs(path, bundle_dir=bundle.path)
    assert solved["status"] == "succeeded" and solved["score"] == 1.0, solved["steps"]
    failed = agentenv_runs(path, bundle_dir=bundle.path, overrides={"agent": wrong})
    assert failed["status"] == "succeeded" and failed["score"] < 1.0 and not failed["passed"]


def test_the_gui_task_exposes_only_screen_tools(agentenv_runs: TaskRuns) -> None:
    bundle = find_bundle("phone-day", get_host())
    record = agentenv_runs(bundle.task_files()["quiet-evening"], bundle_dir=bundle.path)
    calls = [e for e in agentenv_runs.trajectory(record, world="phone") if e.get("kind") == "tool_call"]
    assert calls and {e["tool"] for e in calls} <= {"read_screen", "tap", "go_home"}
