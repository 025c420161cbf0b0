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
