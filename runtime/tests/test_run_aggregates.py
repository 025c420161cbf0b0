"""Per-task aggregates of many runs (runs, pass rate, mean/min/max, pass^k) in `agentenv run`'s text and JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime.engine.aggregates import aggregate_rows, task_aggregates
from agentenv_testing.installs import CliResult
from agentenv_testing.tasks import write_task
from engine_helpers import setup_cli

Agentenv = Callable[..., CliResult]


@pytest.fixture
def cli(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(on_path, tmp_path, monkeypatch)
    return tmp_path


def graded(score: float) -> dict[str, Any]:
    return {
        "name": "graded",
        "pass_threshold": 0.8,
        "steps": [
            {"id": "deploy", "type": "fixture_deploy"},
            {"id": "grade", "type": "fixture_score", "score": score},
        ],
    }


def test_aggregate_per_task() -> None:
    results = [
        {"name": "a", "passed": True, "score": 1.0},
        {"name": "a", "passed": False, "score": 0.25},
        {"name": "a", "passed": False, "score": None, "graded": False},
        {"name": "b", "passed": True, "score": None},
    ]
    a, b = task_aggregates(results)
    assert a == {
        "task": "a",
        "runs": 3,
        "passed": 1,
        "not_graded": 1,
        "pass_rate": pytest.approx(1 / 3),
        "mean": pytest.approx(0.625),
        "min": 0.25,
        "max": 1.0,
        "pass_hat_k": 0.0,
    }
    assert b["pass_rate"] == 1.0 and b["mean"] is None and b["pass_hat_k"] == 1.0
    headers, rows = aggregate_rows([a, b])
    assert headers[0] == "TASK" and rows[0] == ("a", "3", "1", "1", "33.3%", "0.62", "0.25", "1.00", "0.0000")
    assert rows[1][5:8] == ("-", "-", "-")


def test_a_thousand_rollouts_print_the_aggregate_not_a_thousand_rows(cli: Path, agentenv: Agentenv) -> None:
    done = agentenv("run", str(write_task(graded(0.9), cli / "many")), "-k", "1000")
    assert done.returncode == 0, done
    lines = done.stdout.splitlines()
    assert len(lines) < 40, done.stdout  # was one line per run (capped at 50) and no aggregate
    assert "1000 runs: per-run rows left out" in done.stdout
    (row,) = [line.split() for line in lines if line.startswith("graded")]
    assert row == ["graded", "1000", "1000", "0", "100.0%", "0.90", "0.90", "0.90", "1.0000"]
    assert "PASSED: 1000/1000 passed" in done.stdout


def test_json_has_the_aggregate_beside_every_run(cli: Path, agentenv: Agentenv) -> None:
    done = agentenv("run", str(write_task(graded(0.5), cli / "few")), "-k", "3", "--json")
    assert done.returncode == 1, done
    summary = done.json()
    assert len(summary["tasks"]) == 3
    (aggregate,) = summary["aggregate"]
    assert aggregate["task"] == "graded" and aggregate["runs"] == 3 and aggregate["passed"] == 0
    assert aggregate["mean"] == 0.5 and aggregate["pass_hat_k"] == 0.0
    table = agentenv("run", str(write_task(graded(0.5), cli / "few2")), "-k", "3")
    assert "PASS RATE" in table.stdout and table.stdout.count("r20") == 3  # few runs: rows and the aggregate


def not_graded() -> dict[str, Any]:
    task = graded(1.0)
    task["steps"][1]["graded"] = False
    return task


def test_a_run_that_was_not_graded_never_passes(cli: Path, agentenv: Agentenv) -> None:
    done = agentenv("run", str(write_task(not_graded(), cli / "ng")), "-k", "3", "--json")
    assert done.returncode == 1, done  # the verifier's score is 1.0, but nothing was graded
    summary = done.json()
    assert summary["passed"] is False
    assert all(t["graded"] is False and t["passed"] is False and t["score"] is None for t in summary["tasks"])
    assert summary["pass_hat_k"] == {"1": 0.0, "2": 0.0, "3": 0.0}
    (aggregate,) = summary["aggregate"]
    assert aggregate["not_graded"] == 3 and aggregate["passed"] == 0 and aggregate["pass_rate"] == 0.0

    text = agentenv("run", str(write_task(not_graded(), cli / "ng2")))
    assert text.returncode == 1 and "succeeded (not graded)" in text.stdout
    assert "FAILED: 0/1 passed (1 not graded" in text.stdout
    run_id = next(w for w in text.stdout.split() if w.startswith("r20"))

    listed = agentenv("runs", "list", "--json").json()
    assert {(r["graded"], r["passed"]) for r in listed} == {(False, False)}
    assert "succeeded (not graded)" in agentenv("runs", "list").stdout
    shown = agentenv("runs", "show", run_id).stdout
    assert "(not graded)" in shown and "passed=False" in shown
    assert "not graded: grade could not grade fixed (no judge model)" in shown


def test_a_verifier_cannot_pass_what_it_did_not_grade() -> None:
    from agentenv_runtime.engine.verdict import verifier_result_problem

    problem = verifier_result_problem({"score": 1.0, "passed": True, "graded": False, "rows": []})
    assert problem is not None and "was not graded cannot pass" in problem


def test_score_of_a_task_whose_verifier_was_not_graded_is_none() -> None:
    """What RL episodes read too: no score, so never `passed` and no partial reward from a half-graded rubric."""
    from types import SimpleNamespace

    from agentenv_runtime.engine.engine import StepRecord, score_of

    task: Any = SimpleNamespace(steps=[SimpleNamespace(id="grade")])
    planned: Any = {"grade": SimpleNamespace(step=SimpleNamespace(verifier=True))}
    ok = {"grade": StepRecord("grade", "v", "succeeded", output={"score": 0.75, "passed": False, "rows": []})}
    assert score_of(task, planned, ok) == 0.75
    output = {"score": 0.75, "passed": False, "graded": False, "rows": []}
    assert score_of(task, planned, {"grade": StepRecord("grade", "v", "succeeded", output=output)}) is None
