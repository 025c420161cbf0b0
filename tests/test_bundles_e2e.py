"""The shipped bundles, end to end through the `agentenv` command, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    config = tmp_path / "config.toml"
    config.write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n'
    )

    def run(*args: str) -> tuple[int, Any, str]:
        done = subprocess.run(
            [sys.executable, "-m", "agentenv", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={"AGENTENV_CONFIG": str(config), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            timeout=300,
        )
        try:
            data = json.loads(done.stdout) if "--json" in args else done.stdout
        except json.JSONDecodeError:
            data = done.stdout
        return done.returncode, data, done.stderr

    run.objects = tmp_path / "objects"  # type: ignore[attr-defined]
    return run


def test_hello_passes_with_no_docker_model_or_config(cli) -> None:  # type: ignore[no-untyped-def]
    code, result, stderr = cli("run", "hello", "--json")
    assert code == 0, stderr
    assert result["passed"] is True and result["tasks"][0]["status"] == "succeeded"


def test_support_refund_scores_one_and_is_reproducible(cli) -> None:  # type: ignore[no-untyped-def]
    first = cli("run", "support-refund", "--seed", "7", "--json")
    second = cli("run", "support-refund", "--seed", "7", "--json")
    assert first[0] == 0 and second[0] == 0, first[2]
    task = first[1]["tasks"][0]
    assert set(task) >= {"name", "status", "score", "trajectory_digest", "run_id"}
    assert task["score"] == 1.0
    assert task["trajectory_digest"] == second[1]["tasks"][0]["trajectory_digest"]
    assert task["run_id"] != second[1]["tasks"][0]["run_id"]


def test_the_wrong_solver_scores_below_one_and_fails(cli) -> None:  # type: ignore[no-untyped-def]
    code, result, _ = cli("run", "support-refund", "--agent", "wrong_solver", "--json")
    assert code == 1
    assert result["passed"] is False and result["tasks"][0]["score"] < 1


def test_living_world_day_two_loads_day_one(cli) -> None:  # type: ignore[no-untyped-def]
    code, result, stderr = cli("run", "living-world", "--json")
    assert code == 0, stderr
    assert [(t["name"], t["score"]) for t in result["tasks"]] == [("day-one", 1.0), ("day-two", 1.0)]
    code, record, _ = cli("runs", "show", result["tasks"][0]["run_id"], "--json")
    assert code == 0 and record["status"] == "succeeded"
    code, events, _ = cli("runs", "trajectory", record["id"], "--json")
    assert {"trigger", "access", "reply", "tool_call"} <= {e["kind"] for e in events}


def test_open_ended_records_trajectory_and_files(cli) -> None:  # type: ignore[no-untyped-def]
    code, result, stderr = cli("run", "open-ended", "--json")
    assert code == 0 and result["tasks"][0]["score"] is None, stderr
    run_id = result["tasks"][0]["run_id"]
    code, record, _ = cli("runs", "show", run_id, "--json")
    files = next(s for s in record["steps"] if s["type"] == "prompt_agent")["output"]["files"]
    report = cli.objects / files["shift-report.md"]
    assert report.read_text().startswith("# Shift report")
    assert (cli.objects / record["trajectories"]["desk"]).read_text().count('"tool_call"') >= 2


def test_rollouts_across_worker_processes_are_all_recorded(cli) -> None:  # type: ignore[no-untyped-def]
    code, result, stderr = cli("run", "support-refund", "-k", "6", "--workers", "2", "--json")
    assert code == 0, stderr
    assert [t["seed"] for t in result["tasks"]] == list(range(7, 13))
    assert all(t["score"] == 1.0 for t in result["tasks"]) and len({t["run_id"] for t in result["tasks"]}) == 6
    code, runs, _ = cli("runs", "list", "--limit", "50", "--json")
    assert {r["id"] for r in runs} >= {t["run_id"] for t in result["tasks"]}


def test_the_shipped_smoke_eval(cli) -> None:  # type: ignore[no-untyped-def]
    code, result, stderr = cli("run", "support-refund", "--eval", "smoke", "--json")
    assert code == 0, stderr
    assert result["eval"] == "smoke" and [t["seed"] for t in result["tasks"]] == [7, 8, 9]
    (aggregate,) = result["aggregate"]
    assert aggregate["task"] == "resolve-refund" and aggregate["runs"] == 3 and aggregate["pass_rate"] == 1.0


def test_the_shipped_seeded_orders_eval(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, result, stderr = cli("run", "support-refund", "--eval", "orders", "--json")
    assert code == 0, stderr
    assert result["eval"] == "orders" and result["seeds"].endswith("evals/orders.csv")
    rows = [t["row"] for t in result["tasks"]]
    assert [r["order"] for r in rows] == ["ORD-5000", "ORD-4991", "ORD-4997", "ORD-4998"]
    assert len({t["trajectory_digest"] for t in result["tasks"]}) == 4  # each row is its own run
    (aggregate,) = result["aggregate"]
    assert aggregate["task"] == "order-status" and aggregate["runs"] == 4 and aggregate["pass_rate"] == 1.0

    code, result, stderr = cli("run", "support-refund", "--task", "order-status", "--json")  # the defaults
    assert code == 0 and result["tasks"][0]["passed"] is True, stderr

    # the row's `status` is the expected answer: a row that expects the wrong one fails that run only
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("customer,email,order,status\nMarcus Webb,marcus.webb@example.com,ORD-5000,cancelled\n")
    code, result, _ = cli("run", "support-refund", "--task", "order-status", "--seeds", str(wrong), "--json")
    assert code == 1 and result["tasks"][0]["passed"] is False and result["tasks"][0]["score"] == pytest.approx(1 / 3)


def test_living_office_is_seeded_all_through_a_k20_batch(cli) -> None:  # type: ignore[no-untyped-def]
    """Time zones, working hours, a barrier, seeded walk-ins and an `nl` instruction, 20 rollouts: the same seed
    gives the same 20 digests; another seed another weekend (the walk-ins' random gaps), every run passing."""
    code, first, stderr = cli("run", "living-office", "-k", "20", "--json")
    assert code == 0, stderr
    again = cli("run", "living-office", "-k", "20", "--json")[1]
    other = cli("run", "living-office", "-k", "20", "--seed", "1000", "--json")[1]

    def digests(result: Any) -> list[str]:
        return [task["trajectory_digest"] for task in result["tasks"]]

    assert [t["seed"] for t in first["tasks"]] == list(range(7, 27))  # the task's seed, then seed + i
    assert digests(first) == digests(again)
    assert len(set(digests(first))) == 20  # each rollout's seed draws its own walk-in times
    assert not set(digests(first)) & set(digests(other))
    assert first["aggregate"][0]["runs"] == 20 and first["aggregate"][0]["pass_rate"] == 1.0
    assert other["passed"] is True

    wrong = cli("run", "living-office", "--agent", "wrong_solver", "--json")
    assert wrong[0] == 1 and wrong[1]["tasks"][0]["score"] < 1


def test_living_office_holds_the_request_until_berlin_opens(cli) -> None:  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime, time, timedelta
    from zoneinfo import ZoneInfo

    code, result, stderr = cli("run", "living-office", "--json")
    assert code == 0, stderr
    run_id = result["tasks"][0]["run_id"]
    events = cli("runs", "trajectory", run_id, "--json")[1]
    calls = [(e["virtual_time"], e["role"], e["tool"]) for e in events if e["kind"] == "tool_call"]
    asked = next(t for t, role, tool in calls if tool == "post_message" and role == "support")
    refunded = next(t for t, role, tool in calls if tool == "issue_refund")
    # independently of the world's code: the first weekday 09:00 in Berlin after the request
    berlin = ZoneInfo("Europe/Berlin")
    local = datetime.fromisoformat(asked).astimezone(berlin)
    opening = next(
        candidate
        for days in range(8)
        if (candidate := datetime.combine(local.date() + timedelta(days=days), time(9), berlin)) > local
        and candidate.weekday() < 5
    )
    assert datetime.fromisoformat(refunded) == opening.astimezone(UTC)
    held = [t for t, role, _ in calls if role == "support"][3:]  # the agent's calls after its request
    assert held and all(datetime.fromisoformat(t) == opening for t in held)  # the barrier held the agent
    digests = [e for e in events if e["kind"] == "tool_call" and e["args"].get("text", "").startswith("Queue digest")]
    assert {e["virtual_time"] for e in digests} == {"2026-11-30T14:00:00+00:00"}
