"""Starting a run through the API, following it on the live stream, cancelling one: real `agentenv run`
subprocesses started by the real server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from agentenv_testing.services import LoopbackService

if TYPE_CHECKING:
    from conftest import Project


def stream(explorer: LoopbackService, run_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event name, data) of the run's server-sent events, until the server ends the stream."""
    with httpx.stream("GET", f"{explorer.url}/api/runs/{run_id}/events", timeout=120) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in answer.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name is not None:
                yield name, json.loads(line[6:])


def start(explorer: LoopbackService, body: Any) -> httpx.Response:
    return httpx.post(f"{explorer.url}/api/runs", json=body, timeout=120)


def test_start_hello_and_follow_it_to_the_end(explorer: LoopbackService) -> None:
    started = start(explorer, {"bundle": "hello", "seed": 11})
    assert started.status_code == 200, started.text
    run_id = started.json()["run"]
    events = list(stream(explorer, run_id))
    names = [name for name, _ in events]
    assert names[0] == "run_started" and names[-1] == "end" and "run_finished" in names
    calls = [data["call"] for name, data in events if name == "tool_called"]
    assert [c["tool"] for c in calls] == ["post_message"] and "Hello" in json.dumps(calls[0]["args"])
    finished = next(data["run"] for name, data in events if name == "run_finished")
    assert finished["status"] == "succeeded" and finished["seed"] == 11
    record = httpx.get(f"{explorer.url}/api/runs/{run_id}", timeout=30).json()
    assert record["status"] == "succeeded" and record["summary"]["seed"] == 11


def test_cancel_a_waiting_run(explorer: LoopbackService) -> None:
    started = start(explorer, {"bundle": "waiting"})
    assert started.status_code == 200, started.text
    run_id = started.json()["run"]
    for name, data in stream(explorer, run_id):
        if name == "step_started" and data["step"]["id"] == "review":
            break
    cancelled = httpx.post(f"{explorer.url}/api/runs/{run_id}/cancel", timeout=120)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["cancelled"] is True
    record = httpx.get(f"{explorer.url}/api/runs/{run_id}", timeout=30).json()
    assert record["status"] == "cancelled"  # the runtime's own teardown recorded it
    again = httpx.post(f"{explorer.url}/api/runs/{run_id}/cancel", timeout=30)
    assert again.status_code == 409 and "not running (status cancelled)" in again.json()["error"]
    # a run that did not succeed stores its world's snapshot: the world page shows the tables it ended with
    world = httpx.get(f"{explorer.url}/api/runs/{run_id}/world", timeout=60).json()
    assert world["tables_note"] is None and world["tables"]["slack.users"]["count"] > 0
    users = world["tables"]["slack.users"]
    assert "user_id" in users["columns"] or "id" in users["columns"]
    assert len(users["rows"]) == min(users["count"], 200)
    same = httpx.get(f"{explorer.url}/api/compare", params={"a": run_id, "b": run_id}, timeout=60).json()
    assert same["tables"] == {} and same["trajectory"]["identical"] is True  # both snapshots read, nothing differs


def _running_run(explorer: LoopbackService, seed: int, process: subprocess.Popen[bytes]) -> str:
    """The id of the `waiting` run with this seed once its record says it is running."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it was seen running"
        runs = httpx.get(f"{explorer.url}/api/runs", params={"seed": seed, "status": "running"}, timeout=30).json()
        if runs["runs"]:
            return str(runs["runs"][0]["id"])
        time.sleep(0.2)
    raise AssertionError("the run never showed up as running")


def test_a_run_started_elsewhere_in_the_project_streams_its_events_live(
    explorer: LoopbackService, project: Project
) -> None:
    """`agentenv run` in another terminal of the project: while the explorer serves, it writes its event log into
    the project's live folder, and the explorer streams it as it does its own launches."""
    seed = 4242
    process = subprocess.Popen(
        [sys.executable, "-m", "agentenv", "run", "waiting", "--seed", str(seed)],
        cwd=project.folder, env=project.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        run_id = _running_run(explorer, seed, process)
        names: list[str] = []
        finished: dict[str, Any] = {}
        for name, data in stream(explorer, run_id):
            names.append(name)
            if name == "step_started" and data["step"]["id"] == "review":
                process.send_signal(signal.SIGINT)  # Ctrl-C where it runs: it cancels, records, and says so
            if name == "run_finished":
                finished = data["run"]
        assert names[0] == "run_started" and names[-1] == "end", names
        assert "step_finished" in names and finished["id"] == run_id and finished["status"] == "cancelled"
        assert process.wait(60) != 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_stream_of_a_stored_run_ends_at_once(explorer: LoopbackService, project: Project) -> None:
    events = list(stream(explorer, project.runs["hello"]))
    assert [name for name, _ in events] == ["status", "run_finished", "end"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ([1, 2], "must be a JSON object"),
        ({}, '"bundle" is required'),
        ({"bundle": "hello", "speed": 3}, "unknown field 'speed'"),
        ({"bundle": "nothing"}, "no installed bundle 'nothing'"),
        ({"bundle": "hello", "task": "nothing"}, "has no task 'nothing'"),
        ({"bundle": "hello", "seed": "seven"}, '"seed" must be a whole number'),
        ({"bundle": "hello", "agent": "--keep"}, 'may not start with "-"'),
        ({"bundle": "hello", "agent": 3}, '"agent" must be a string'),
    ],
)
def test_bad_start_bodies_are_400(explorer: LoopbackService, body: Any, says: str) -> None:
    before = len(httpx.get(f"{explorer.url}/api/runs", params={"limit": 500}, timeout=30).json()["runs"])
    answer = start(explorer, body)
    assert answer.status_code == 400 and says in answer.json()["error"]
    after = len(httpx.get(f"{explorer.url}/api/runs", params={"limit": 500}, timeout=30).json()["runs"])
    assert after == before  # nothing started


def test_a_body_that_is_not_json_is_400(explorer: LoopbackService) -> None:
    answer = httpx.post(f"{explorer.url}/api/runs", content=b"bundle=hello", timeout=30)
    assert answer.status_code == 400 and "not JSON" in answer.json()["error"]


def test_a_run_that_cannot_start_is_422_with_the_reason(explorer: LoopbackService) -> None:
    answer = start(explorer, {"bundle": "hello", "agent": "nobody"})
    assert answer.status_code == 422 and "--agent nobody" in answer.json()["error"]


def test_cancel_a_finished_run_is_409(explorer: LoopbackService, project: Project) -> None:
    answer = httpx.post(f"{explorer.url}/api/runs/{project.runs['hello']}/cancel", timeout=30)
    assert answer.status_code == 409 and "not running" in answer.json()["error"]


def test_closing_the_launcher_cancels_its_runs_and_removes_its_logs(project: Project) -> None:
    import asyncio

    from agentenv_explorer.launcher import Launcher

    launcher = Launcher(project.folder, project.env)
    started = asyncio.run(launcher.start({"bundle": "waiting"}))
    launch = launcher.launches[started["run"]]
    assert launch.alive() and launcher.folder.is_dir()
    launcher.close()
    assert launch.process.returncode == 143  # `agentenv run` cancelled by SIGTERM: torn down, record kept
    assert not launcher.folder.exists()


def test_stopping_the_server_cancels_the_runs_it_started(project: Project, make_explorer_service: Any) -> None:
    import os
    import signal

    service = make_explorer_service(project, log_name="up-stop.log").start()
    try:
        run_id = start(service, {"bundle": "waiting"}).json()["run"]
        for name, data in stream(service, run_id):
            if name == "step_started" and data["step"]["id"] == "review":
                break
        assert service.process is not None
        os.kill(service.process.pid, signal.SIGTERM)  # the server alone, not its process group
        assert service.process.wait(timeout=120) == 143
    finally:
        service.stop()
    with make_explorer_service(project, log_name="up-again.log") as again:
        record = httpx.get(f"{again.url}/api/runs/{run_id}", timeout=30).json()
    assert record["status"] == "cancelled"
