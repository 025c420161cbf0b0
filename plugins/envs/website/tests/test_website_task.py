"""A website in a task: deploy_env starts the site with the world, the teardown stops it, and a site that does not
come up fails the deploy naming the env and leaves nothing behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from agentenv_testing.tasks import TaskRuns


def site_task(command: list[str], **settings: Any) -> dict[str, Any]:
    world = {
        "id": "world",
        "type": "deploy_env",
        "envs": ["website"],
        "settings": {"website": {"command": command, **settings}},
    }
    ask = {"call": "site_url", "save": "site", "expect": "ok"}
    agent = {
        "id": "agent",
        "type": "deploy_agent",
        "env": "world",
        "kind": "scripted",
        "settings": {"policy_data": {"turn": [{"actions": [ask, {"say": "{{ site.url }}"}]}]}},
    }
    return {
        "name": "site",
        "steps": [world, agent, {"id": "ask", "type": "prompt_agent", "agent": "agent", "prompt": "?"}],
    }


def test_the_site_starts_with_the_deploy_and_stops_at_teardown(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    server = (
        f"import http.server, os, sys; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); "
        "http.server.test(HandlerClass=http.server.SimpleHTTPRequestHandler, port=int(sys.argv[1]), bind='127.0.0.1')"
    )
    record = TaskRuns(tmp_path / "runs")(site_task([sys.executable, "-c", server, "{port}"]))
    assert record["status"] == "succeeded", [s.get("error") for s in record["steps"]]
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 1  # the deployed world's: the preflight's and the cached template's worlds start none
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(started[0]):
        time.sleep(0.05)
    assert not _alive(started[0])  # the run's world was torn down, its site with it


def test_a_site_that_never_comes_up_fails_the_deploy_naming_the_env(tmp_path: Path) -> None:
    crash = [sys.executable, "-c", "raise SystemExit('no database configured')"]
    record = TaskRuns(tmp_path / "runs")(site_task(crash))
    assert record["status"] == "failed"
    error = record["steps"][0]["error"]
    assert error.startswith("field `settings.website`: env website: the site (")
    assert "exit status 1" in error and "no database configured" in error


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
