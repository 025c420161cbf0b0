"""`agentenv run --json`, `agentenv runs show/trajectory/list` and `agentenv task schema` on real runs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agentenv_testing.installs import KERNEL_VERSION, CliResult
from agentenv_testing.tasks import write_task
from engine_helpers import FIXTURE_DIST, FIXTURE_VERSION, setup_cli

Agentenv = Callable[..., CliResult]


@pytest.fixture
def cli(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(on_path, tmp_path, monkeypatch)
    return tmp_path


def graded(score: float, threshold: float = 0.8, **fields: Any) -> dict[str, Any]:
    return {
        "name": "graded",
        "pass_threshold": threshold,
        **fields,
        "steps": [
            {"id": "deploy", "type": "fixture_deploy"},
            {"id": "mark", "type": "fixture_mark", "world": "deploy", "label": "hello", "times": 2},
            {"id": "grade", "type": "fixture_score", "score": score},
        ],
    }


def test_run_json_summary_and_exit_codes(cli: Path, agentenv: Agentenv) -> None:
    good = agentenv("run", str(write_task(graded(0.9), cli / "good")), "--json")
    assert good.returncode == 0, good
    summary = good.json()
    assert summary["passed"] is True
    (task,) = summary["tasks"]
    assert {"name", "status", "score", "trajectory_digest", "run_id"} <= set(task)
    assert task["name"] == "graded" and task["status"] == "succeeded" and task["score"] == 0.9
    assert re.fullmatch(r"[0-9a-f]{64}", task["trajectory_digest"])
    assert task["run_id"].startswith("r")

    low = agentenv("run", str(write_task(graded(0.4), cli / "low")), "--json")
    assert low.returncode == 1, low  # the run succeeded, but the score is below the threshold
    assert low.json()["passed"] is False
    assert low.json()["tasks"][0]["status"] == "succeeded" and low.json()["tasks"][0]["score"] == 0.4
    assert low.json()["tasks"][0]["trajectory_digest"] == task["trajectory_digest"]  # same seed, same calls

    exact = agentenv("run", str(write_task(graded(0.8), cli / "exact")), "--json")
    assert exact.returncode == 0 and exact.json()["passed"] is True  # the threshold itself passes

    table = agentenv("run", str(write_task(graded(0.4), cli / "table")))
    assert table.returncode == 1
    assert "FAILED: 0/1 passed" in table.stdout and "graded" in table.stdout and "0.40" in table.stdout


def test_open_ended_and_failed_runs(cli: Path, agentenv: Agentenv) -> None:
    open_ended = {"name": "open", "steps": [{"id": "deploy", "type": "fixture_deploy"}]}
    result = agentenv("run", str(write_task(open_ended, cli / "t")), "--json")
    assert result.returncode == 0, result
    assert result.json()["tasks"][0]["score"] is None and result.json()["passed"] is True

    failing = {
        "name": "failing",
        "steps": [
            {"id": "mark", "type": "fixture_mark", "world": "nowhere"},
            {"id": "grade", "type": "fixture_score", "score": 1},
        ],
    }
    result = agentenv("run", str(write_task(failing, cli / "t")), "--json")
    assert result.returncode == 1, result
    (task,) = result.json()["tasks"]
    assert task["status"] == "failed" and task["score"] is None and task["trajectory_digest"] is None
    record = agentenv("runs", "show", task["run_id"], "--json").json()
    steps = {s["id"]: s for s in record["steps"]}
    assert steps["mark"]["status"] == "failed"
    assert steps["mark"]["error"] == "no step 'nowhere' has created anything to use (created so far: none yet)"
    assert steps["grade"]["status"] == "skipped"


def test_runs_show_trajectory_and_list(cli: Path, agentenv: Agentenv) -> None:
    path = write_task(graded(0.9, seed=3), cli / "t")
    run = agentenv("run", str(path), "--json")
    assert run.returncode == 0, run
    run_id = run.json()["tasks"][0]["run_id"]

    shown = agentenv("runs", "show", run_id, "--json")
    assert shown.returncode == 0, shown
    record = shown.json()
    assert record["id"] == run_id and record["task"] == "graded" and record["task_file"] == str(path)
    assert record["seed"] == 3  # the task's seed, since none was given
    assert record["status"] == "succeeded" and record["passed"] is True and record["score"] == 0.9
    assert record["plugin_versions"][FIXTURE_DIST] == FIXTURE_VERSION
    assert record["plugin_versions"]["agentenv-kernel"] == KERNEL_VERSION
    assert record["trajectory_digest"] == run.json()["tasks"][0]["trajectory_digest"]
    assert record["resumed_from"] is None and record["teardown_errors"] == []
    assert record["verifiers"] == {"grade": {"score": 0.9, "rows": [{"check": "fixed", "score": 0.9}]}}
    assert [s["id"] for s in record["steps"]] == ["deploy", "mark", "grade"]
    for step in record["steps"]:
        assert step["status"] == "succeeded" and step["attempts"] == 1
        assert isinstance(step["started"], float) and step["duration_ms"] >= 0
    assert [s["output"] for s in record["steps"]] == [
        {"envs": ["tally"]},
        {"marked": 2},
        {"score": 0.9, "rows": [{"check": "fixed", "score": 0.9}]},
    ]
    assert record["finished_at"] >= record["started_at"]

    text = agentenv("runs", "show", run_id[:-1])  # a unique prefix
    assert text.returncode == 0
    assert f"run {run_id}  task graded  succeeded  passed=True  score=0.900" in text.stdout
    # every verifier's rows, each with what decided it (they were only in --json)
    verifier_table = text.stdout.split("VERIFIER", 1)[1].splitlines()
    assert verifier_table[0].split() == ["CRITERION", "PASSED", "SCORE", "WEIGHT", "DETAIL"]
    assert verifier_table[2].split() == ["grade", "fixed", "-", "0.90", "-", "-"]
    assert f"{FIXTURE_DIST} {FIXTURE_VERSION}" in text.stdout

    trajectory = agentenv("runs", "trajectory", run_id, "--json")
    assert trajectory.returncode == 0, trajectory
    events = trajectory.json()
    assert [(e["world"], e["seq"], e["kind"], e["tool"], e["args"]) for e in events] == [
        ("deploy", 0, "tool_call", "mark", {"label": "hello"}),
        ("deploy", 1, "tool_call", "mark", {"label": "hello"}),
    ]
    assert {e["virtual_time"] for e in events} == {"2026-01-05T09:00:00+00:00"}
    assert [e["result"] for e in events] == [{"id": 1}, {"id": 2}]
    assert all(e["error"] is None for e in events)

    again = agentenv("run", str(path), "--seed", "4", "--json")
    listed = agentenv("runs", "list", "--json").json()
    assert [(r["id"], r["seed"], r["status"]) for r in listed] == [
        (again.json()["tasks"][0]["run_id"], 4, "succeeded"),
        (run_id, 3, "succeeded"),
    ]
    assert agentenv("runs", "list", "--task", "nope", "--json").json() == []

    missing = agentenv("runs", "show", "zzz")
    assert missing.returncode == 1
    assert missing.stderr == "error: no run 'zzz'; see `agentenv runs list`\n"


def test_task_schema_describes_installed_step_types(cli: Path, agentenv: Agentenv) -> None:
    result = agentenv("task", "schema")
    assert result.returncode == 0, result
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "path" not in schema["properties"], "the task file's own location is not a field of the file"
    variants = {v["properties"]["type"]["const"]: v for v in schema["properties"]["steps"]["items"]["anyOf"]}
    assert set(variants) == {"fixture_deploy", "fixture_mark", "fixture_score", "fixture_spawn", "fixture_meet"}
    mark = variants["fixture_mark"]
    assert {"world", "label", "times", "id", "depends_on", "fail_task_on_error", "retry"} <= set(mark["properties"])
    assert set(mark["required"]) == {"id", "type", "world"}

    validator = jsonschema.Draft202012Validator(schema)
    good = graded(0.5)
    good["$schema"] = "./task.schema.json"
    good["steps"][1]["retry"] = {"from": "deploy", "times": 2}
    assert list(validator.iter_errors(good)) == []
    for bad_step in (
        {"id": "m", "type": "fixture_mark", "world": "d", "times": "two"},  # wrong field type
        {"id": "m", "type": "fixture_mark"},  # missing field
        {"id": "m", "type": "fixture_mark", "world": "d", "colour": "red"},  # unknown field
        {"id": "m", "type": "not_installed"},  # unknown step type
        {"id": "m", "type": "fixture_score", "score": 2},  # out of range
    ):
        assert list(validator.iter_errors({"name": "x", "steps": [bad_step]})), bad_step
    assert list(validator.iter_errors({"name": "x", "steps": []}))

    out = cli / "task.schema.json"
    written = agentenv("task", "schema", "-o", str(out))
    assert written.returncode == 0 and json.loads(out.read_text()) == schema


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "0"], "argument -k: 0 is less than 1"),
        (["--workers", "two"], "argument --workers: 'two' is not a whole number"),
        (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_run_refuses_bad_options_before_running(cli: Path, agentenv: Agentenv, args: list[str], message: str) -> None:
    result = agentenv("run", str(write_task(graded(0.9), cli / "opts")), *args)
    assert result.returncode == 2, result
    assert f"agentenv run: error: {message}" in result.stderr
    assert "usage: agentenv run" in result.stderr
    assert agentenv("runs", "list", "--json").json() == [], "nothing ran"


def test_run_help_lists_every_option(agentenv: Agentenv) -> None:
    result = agentenv("run", "--help")
    assert result.returncode == 0, result
    for option in ("--task", "--agent", "--model", "--sandbox", "--seed", "-k", "--workers", "--dry-run", "--keep"):
        assert option in result.stdout
    assert "--resume" in result.stdout and "--json" in result.stdout


def test_bundle_schema_describes_bundle_toml_and_eval_files(cli: Path, agentenv: Agentenv) -> None:
    import tomllib

    manifest = json.loads(agentenv("bundle", "schema").stdout)
    evals = json.loads(agentenv("bundle", "schema", "eval").stdout)
    for schema in (manifest, evals):
        jsonschema.Draft202012Validator.check_schema(schema)
    assert manifest["title"] == "agentenv bundle.toml" and evals["title"] == "agentenv eval"
    assert set(evals["properties"]) == {"description", "tasks", "k", "concurrency", "seed", "seeds", "overrides"}

    shipped = tomllib.loads((Path(__file__).parent / "fixtures" / "registry-bundle" / "bundle.toml").read_text())
    assert list(jsonschema.Draft202012Validator(manifest).iter_errors(shipped)) == []
    assert list(jsonschema.Draft202012Validator(manifest).iter_errors({"tasks": "hello"}))
    check = jsonschema.Draft202012Validator(evals)
    assert list(check.iter_errors({"tasks": ["a"], "k": 3, "overrides": {"a": {"agent": "careful"}}})) == []
    for bad in ({"tasks": []}, {"tasks": ["a"], "k": 0}, {"tasks": ["a"], "overrides": {"a": {"colour": 1}}}):
        assert list(check.iter_errors(bad)), bad

    out = cli / "eval.schema.json"
    assert agentenv("bundle", "schema", "eval", "-o", str(out)).returncode == 0 and json.loads(out.read_text()) == evals
    wrong = agentenv("bundle", "schema", "tasks")
    assert wrong.returncode == 1 and "give `bundle` (bundle.toml) or `eval` (evals/NAME.toml)" in wrong.stderr


def test_bundle_toml_mistakes_name_the_field(tmp_path: Path) -> None:
    from agentenv_runtime import TaskError
    from agentenv_runtime.engine.bundle import read_bundle

    (tmp_path / "bundle.toml").write_text('name = 5\ntasks = ["a", 1]\n[splits]\ntrain = "a"\n')
    with pytest.raises(TaskError) as err:
        read_bundle(tmp_path)
    lines = str(err.value).splitlines()
    assert lines == [
        f"{tmp_path / 'bundle.toml'}: field `name` must be text, the bundle's name",
        f'{tmp_path / "bundle.toml"}: field `tasks` must be a list of task names, e.g. tasks = ["resolve-refund"]',
        f'{tmp_path / "bundle.toml"}: field `splits` must be a table of name = list of task names, e.g. train = ["0"]',
    ]
