"""The web-desk tasks on the real browser: each scripted browser agent scores 1.0 working only through the desk's
web pages, each wrong click path scores below 1.0, the grade is read from the helpdesk's tables, and the run record
keeps the trajectory with the browser's screenshots (PNGs) and the website's tool calls."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.tasks import TaskRuns

BROWSER_TOOLS = {
    "goto",
    "snapshot",
    "find",
    "click",
    "type",
    "select",
    "scroll",
    "back",
    "screenshot",
    "mouse_click",
    "key",
}
TASKS = {  # task: (the wrong path's agent, the helpdesk tool the website must have called, the wrong path's score)
    "refund-damaged-item": ("refund-wrong", "issue_refund", 0.25),
    "change-address": ("address-wrong", "update_address", 0.75),
    "escalate-ticket": ("escalate-wrong", "escalate_ticket", 0.5),
}


def run(runs: TaskRuns, bundle: Path, task: str, agent: str | None = None) -> dict[str, Any]:
    overrides = {"agent": agent} if agent else None
    record = runs(bundle / "tasks" / f"{task}.toml", bundle_dir=bundle, overrides=overrides)
    assert record["status"] == "succeeded", [s.get("error") for s in record["steps"]]
    return record


@pytest.mark.parametrize("task", sorted(TASKS))
def test_the_scripted_browser_agent_solves_the_task_through_the_website(
    task: str, chromium: str, bundle: Path, tmp_path: Path
) -> None:
    written = TASKS[task][1]
    runs = TaskRuns(tmp_path / "runs")
    record = run(runs, bundle, task)
    assert record["score"] == 1.0
    events = [e for e in runs.trajectory(record, "desk") if e["kind"] == "tool_call"]
    agent_calls = [e for e in events if e["role"] == "agent"]
    assert {e["tool"] for e in agent_calls} <= BROWSER_TOOLS and all(e["error"] is None for e in agent_calls)
    site_calls = [e["tool"] for e in events if e["role"] == "desk"]
    assert site_calls.count(written) == 1  # the one form that changed the world, submitted through the page
    (shot,) = [e for e in agent_calls if e["tool"] == "screenshot"]
    png = base64.b64decode(shot["result"]["png_base64"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) == shot["result"]["bytes"] > 1000
    assert "/w/" in shot["result"]["url"]  # the page it left, on the world's own site


@pytest.mark.parametrize("task", sorted(TASKS))
def test_a_wrong_click_path_scores_below_one(task: str, chromium: str, bundle: Path, tmp_path: Path) -> None:
    wrong, _, expected = TASKS[task]
    record = run(TaskRuns(tmp_path / "runs"), bundle, task, wrong)
    assert record["score"] == expected < 1.0
