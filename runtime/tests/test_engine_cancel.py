"""Ctrl-C and SIGTERM cancel a run: everything it started is torn down, the record says `cancelled`, exit 130/143.

The run is a real `python -m agentenv run TASK` process whose step starts a real child process (`sleep 60`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_testing.installs import CliResult, cli_env
from agentenv_testing.tasks import write_task
from engine_helpers import ONLY_FIXTURE_PLUGINS, setup_cli

Agentenv = Callable[..., CliResult]
WAIT = 60.0


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended before its step started (exit {proc.returncode}):\n{out}\n{err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the step never started its child process")
        time.sleep(0.02)
    return int(path.read_text())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_signals_cancel_the_run_tear_down_and_record(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentenv: Agentenv
) -> None:
    config = setup_cli(on_path, tmp_path, monkeypatch)
    env = cli_env([on_path], AGENTENV_CONFIG=str(config), AGENTENV_PLUGINS=ONLY_FIXTURE_PLUGINS)
    runs: dict[str, dict[str, object]] = {}
    for name, signum in (("int", signal.SIGINT), ("term", signal.SIGTERM)):  # both runs at once: half the wait
        task = write_task(
            {
                "name": f"cancel-{name}",
                "steps": [
                    {"id": "deploy", "type": "fixture_deploy"},
                    {"id": "mark", "type": "fixture_mark", "world": "deploy"},
                    {
                        "id": "spawn",
                        "type": "fixture_spawn",
                        "pid_file": str(tmp_path / f"{name}.pid"),
                        "teardown_file": str(tmp_path / f"{name}.teardown"),
                    },
                    {"id": "after", "type": "fixture_score", "score": 1},
                ],
            },
            tmp_path / "tasks",
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentenv", "run", str(task)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        runs[name] = {"proc": proc, "signal": signum}

    for name, run in runs.items():
        proc = run["proc"]
        assert isinstance(proc, subprocess.Popen)
        run["child"] = child = _wait_for(tmp_path / f"{name}.pid", proc)
        assert _alive(child)
        proc.send_signal(run["signal"])  # only the agentenv process: the child must be stopped by the teardown

    for name, run in runs.items():
        proc = run["proc"]
        assert isinstance(proc, subprocess.Popen)
        try:
            out, err = proc.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"SIG{name.upper()} did not end the run")
        expected = 128 + int(run["signal"])  # type: ignore[call-overload]
        assert proc.returncode == expected, (name, proc.returncode, out, err)
        assert "cancelled: everything the run started was torn down" in err
        assert "Traceback" not in err, err
        child = run["child"]
        assert isinstance(child, int)
        assert not _alive(child), f"the child process {child} outlived the cancelled run"
        assert (tmp_path / f"{name}.teardown").read_text() == str(-signal.SIGTERM)  # terminated by the teardown

    listed = agentenv("runs", "list", "--json")
    assert listed.returncode == 0, listed
    assert sorted((r["task"], r["status"], r["passed"]) for r in listed.json()) == [
        ("cancel-int", "cancelled", False),
        ("cancel-term", "cancelled", False),
    ]
    for summary in listed.json():
        record = agentenv("runs", "show", summary["id"], "--json").json()
        assert {s["id"]: s["status"] for s in record["steps"]} == {
            "deploy": "succeeded",
            "mark": "succeeded",
            "spawn": "cancelled",
            "after": "cancelled",
        }
        assert record["teardown_errors"] == []
        assert set(record["world_snapshots"]) == {"deploy"}  # kept so the run can be resumed
        events = agentenv("runs", "trajectory", summary["id"], "--json").json()
        assert [e["tool"] for e in events] == ["mark"]  # what the run did before the signal is kept
