"""Issue 16: run records survive SIGKILL, store failures are one-line errors, damaged records do not break
listings, and a damaged trajectory is caught against the recorded digest. Each failed before its fix."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_runtime.engine.records import Records, StoreError
from agentenv_runtime.engine.runner import new_run_id
from agentenv_testing.installs import CliResult, cli_env
from agentenv_testing.tasks import write_task
from engine_helpers import ONLY_FIXTURE_PLUGINS, setup_cli

Agentenv = Callable[..., CliResult]

TASK = {
    "name": "marked",
    "steps": [
        {"id": "deploy", "type": "fixture_deploy"},
        {"id": "mark", "type": "fixture_mark", "world": "deploy", "times": 2},
        {"id": "grade", "type": "fixture_score", "score": 1.0},
    ],
}


@pytest.fixture
def cli(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(on_path, tmp_path, monkeypatch)
    return tmp_path


def one_line_error(result: CliResult) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_run_ids_do_not_collide_and_records_are_not_overwritten(cli: Path, agentenv: Agentenv) -> None:
    ids = {new_run_id() for _ in range(20_000)}
    assert len(ids) == 20_000  # 24 random bits per second collided here (birthday bound ≈ 4,000)
    done = agentenv("run", str(write_task(TASK, cli / "tasks")), "--json")
    assert done.returncode == 0, done
    run_id = done.json()["tasks"][0]["run_id"]
    from agentenv import get_host
    from agentenv.config import load_config

    records = Records(load_config(), get_host())
    with pytest.raises(StoreError, match="already recorded; refusing to overwrite"):
        records.create({"id": run_id, "status": "running"})
    assert records.get(run_id)["status"] == "succeeded"


def test_a_trajectory_that_cannot_be_stored_fails_the_run(cli: Path, agentenv: Agentenv) -> None:
    objects = cli / "objects" / "runs"
    objects.mkdir(parents=True)
    objects.chmod(0o500)  # read-only: the trajectory cannot be written
    if os.access(objects, os.W_OK):
        objects.chmod(0o700)
        (cli / "objects").chmod(0o700)
        objects.rmdir()
        objects.write_text("a file where the runs folder should be")  # root ignores modes; a file blocks it
    try:
        result = agentenv("run", str(write_task(TASK, cli / "tasks")), "--json")
        table = agentenv("run", str(write_task(TASK, cli / "tasks")))
    finally:
        if objects.is_dir():
            objects.chmod(0o700)
    assert result.returncode == 1, result  # was PASSED, exit 0
    (task,) = result.json()["tasks"]
    assert task["passed"] is False and task["status"] == "failed"
    assert task["reason"].startswith("saving world deploy: "), task  # every step succeeded: only the store failed
    listed = agentenv("runs", "show", task["run_id"])
    assert "store error: saving world deploy" in listed.stdout
    # the table said "failed 1.00" and nothing else
    assert table.returncode == 1, table
    row = next(line for line in table.stdout.splitlines() if line.startswith("marked "))
    assert row.split()[1:3] == ["failed", "1.00"]
    why = next(line for line in table.stdout.splitlines() if line.startswith("marked: failed: "))
    assert "saving world deploy: " in why and "the run's record or trajectory could not be stored" in why


def test_a_broken_document_store_is_a_one_line_error(cli: Path, agentenv: Agentenv) -> None:
    database = cli / "records.sqlite3"
    database.mkdir()  # the database replaced by a folder
    for args in (["run", str(write_task(TASK, cli / "tasks"))], ["runs", "list"], ["runs", "show", "r1"]):
        result = agentenv(*args)
        assert result.returncode != 0
        assert str(database) in one_line_error(result)
    database.rmdir()
    database.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)  # truncated
    result = agentenv("runs", "list")
    assert result.returncode != 0 and "records.sqlite3" in one_line_error(result)


def test_one_malformed_document_does_not_break_runs_list(cli: Path, agentenv: Agentenv) -> None:
    assert agentenv("run", str(write_task(TASK, cli / "tasks"))).returncode == 0
    with sqlite3.connect(cli / "records.sqlite3") as db:
        db.execute("INSERT INTO agentenv_documents VALUES ('runs', 'rbad1', '{not json', 1000000)")
        db.execute("INSERT INTO agentenv_documents VALUES ('runs', 'rbad2', '{\"id\": \"rbad2\"}', 1000001)")
    listed = agentenv("runs", "list")
    assert listed.returncode == 0, listed
    assert "rbad1" in listed.stdout and "damaged" in listed.stdout and "rbad2" in listed.stdout
    assert "marked" in listed.stdout
    assert agentenv("runs", "list", "--task", "marked").returncode == 0


def test_a_damaged_trajectory_is_caught_against_the_recorded_digest(cli: Path, agentenv: Agentenv) -> None:
    done = agentenv("run", str(write_task(TASK, cli / "tasks")), "--json")
    run_id = done.json()["tasks"][0]["run_id"]
    assert agentenv("runs", "trajectory", run_id).returncode == 0
    stored = cli / "objects" / "runs" / run_id / "deploy.trajectory.jsonl"
    lines = stored.read_text().splitlines()
    stored.write_text("\n".join(lines[:-1]) + "\n")  # one event lost
    lost = agentenv("runs", "trajectory", run_id)
    assert lost.returncode == 1 and "does not match its recorded digest" in one_line_error(lost)
    stored.write_bytes(b'{"seq": 0, "kind"')
    truncated = agentenv("runs", "trajectory", run_id)
    assert truncated.returncode == 1 and "is damaged" in one_line_error(truncated)


@pytest.fixture
def child_env(on_path: Path, cli: Path) -> dict[str, str]:
    """The environment of an `agentenv` child process that sees the same plugins and stores as `cli`."""
    return cli_env([on_path], AGENTENV_CONFIG=str(cli / "config.toml"), AGENTENV_PLUGINS=ONLY_FIXTURE_PLUGINS)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_sigkilled_run_is_listed_interrupted_and_can_be_resumed(
    cli: Path, child_env: dict[str, str], agentenv: Agentenv
) -> None:
    tmp_path, env = cli, child_env
    pid_file = tmp_path / "spawn.pid"
    blocking = {
        "name": "blocking",
        "steps": [
            {"id": "deploy", "type": "fixture_deploy"},
            {"id": "mark", "type": "fixture_mark", "world": "deploy"},
            {
                "id": "spawn",
                "type": "fixture_spawn",
                "pid_file": str(pid_file),
                "teardown_file": str(tmp_path / "teardown"),
            },
        ],
    }
    task = write_task(blocking, tmp_path / "tasks")
    proc = subprocess.Popen([sys.executable, "-m", "agentenv", "run", str(task)], env=env, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not pid_file.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the step never started"
        time.sleep(0.02)
    child = int(pid_file.read_text())
    running = agentenv("runs", "list", "--json").json()
    assert [r["status"] for r in running] == ["running"]  # the record exists from the start
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    os.kill(child, signal.SIGKILL)  # the killed runner could not tear down its child; that is prune's job
    listed = agentenv("runs", "list", "--json").json()
    assert [(r["task"], r["status"]) for r in listed] == [("blocking", "interrupted")]
    run_id = listed[0]["id"]
    shown = agentenv("runs", "show", run_id)
    assert "interrupted" in shown.stdout

    task.write_text(json.dumps(TASK | {"name": "blocking"}))  # the fixed task, same file
    resumed = agentenv("run", "--resume", run_id, "--json")
    assert resumed.returncode == 0, resumed
    (summary,) = resumed.json()["tasks"]
    assert summary["status"] == "succeeded"
    record = agentenv("runs", "show", summary["run_id"], "--json").json()
    assert record["resumed_from"] == run_id
