"""A scratch project with real stored runs (hello, support-refund solved and wrongly solved) and the real
`agentenv up` serving it on a free loopback port, shared by the module's tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from agentenv_testing.installs import AGENTENV_VARS, install_fixture_plugin
from agentenv_testing.pytest_plugin import write_local_config
from agentenv_testing.services import LoopbackService

WAITING_PLUGIN = """
from pathlib import Path

from agentenv.contracts import BundleRef
from agentenv.hookspecs import hookimpl
from agentenv_explorer.api import Panel, explorer_hookimpl

HERE = Path(__file__).parent


@hookimpl
def agentenv_register_bundles():
    return [BundleRef("waiting", HERE / "waiting", "Waits for a review decision nobody writes (for cancelling).")]


@explorer_hookimpl
def explorer_panels():
    def data(record, records):
        return {"task": record["task"], "steps": len(record.get("steps") or [])}

    return [
        Panel("run-notes", "Run notes", "run", HERE / "notes.js", data),
        Panel("overview", "Overview", "page", HERE / "notes.js", lambda record, records: None),
    ]
"""
WAITING_TASK = """
name = "wait-for-review"
description = "Deploys Slack, then waits for a reviewer for an hour."
seed = 1

[[steps]]
id = "world"
type = "deploy_env"
envs = ["slack"]
artifacts = ["acme"]

[[steps]]
id = "review"
type = "review"
decision_file = "never-written.json"
message = "nobody will decide"
timeout = 3600
"""
NOTES_JS = """
export function render(element, data) {
  element.textContent = data ? `notes: task ${data.task}, ${data.steps} steps` : "a page of its own";
}
"""


def install_waiting_plugin(site: Path) -> None:
    """A throw-away installed plugin: bundle `waiting` (a run that waits until cancelled) and an explorer panel."""
    install_fixture_plugin(
        site,
        "agentenv-waiting",
        "0.1.0",
        "waiting",
        "agentenv_waiting_fixture",
        WAITING_PLUGIN,
        requires=("agentenv-kernel>=0.1,<0.2", "agentenv-steps>=0.1,<0.2", "agentenv-slack>=0.1,<0.2"),
    )
    bundle = site / "waiting"
    (bundle / "tasks").mkdir(parents=True)
    (bundle / "bundle.toml").write_text('name = "waiting"\ntasks = ["wait"]\n', encoding="utf-8")
    (bundle / "tasks" / "wait.toml").write_text(WAITING_TASK, encoding="utf-8")
    (site / "notes.js").write_text(NOTES_JS, encoding="utf-8")
    entry_points = site / "agentenv_waiting-0.1.0.dist-info" / "entry_points.txt"
    with entry_points.open("a", encoding="utf-8") as sink:
        sink.write("\n[agentenv.explorer]\nnotes = agentenv_waiting_fixture\n")


@dataclass
class Project:
    folder: Path
    env: dict[str, str]
    runs: dict[str, str]
    """hello, refund_pass, refund_fail, living (living-world's day-one: triggers, a refusal, clock jumps) → run id."""


def run_cli(project_env: dict[str, str], folder: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "run", *args, "--json"],
        cwd=folder,
        env=project_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary: dict[str, object] = json.loads(done.stdout)["tasks"][0]
    return summary


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    folder = tmp_path_factory.mktemp("explorer-project")
    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS}
    env["AGENTENV_CONFIG"] = str(write_local_config(folder))
    install_waiting_plugin(folder / "site")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder / "site"), env.get("PYTHONPATH")) if p)
    runs = {
        "hello": run_cli(env, folder, "hello"),
        "refund_pass": run_cli(env, folder, "support-refund"),
        "refund_fail": run_cli(env, folder, "support-refund", "--agent", "wrong_solver"),
        "living": run_cli(env, folder, "living-world", "--task", "day-one"),
    }
    assert runs["refund_pass"]["passed"] is True and runs["refund_fail"]["passed"] is False
    return Project(folder, env, {name: str(summary["run_id"]) for name, summary in runs.items()})


def explorer_service(project: Project, *extra: str, log_name: str = "up.log") -> LoopbackService:
    service = LoopbackService(
        [sys.executable, "-m", "agentenv", "up", "--port", "{port}", *extra],
        log=project.folder / log_name,
        ready_path="/api/openapi.json",
        env=project.env,
    )
    return service


@pytest.fixture(scope="session")
def explorer(project: Project) -> Iterator[LoopbackService]:
    with explorer_service(project) as service:  # runs it launches inherit AGENTENV_CONFIG
        yield service


@pytest.fixture
def make_explorer_service() -> object:
    """`explorer_service` for tests that start an explorer of their own (with other flags)."""
    return explorer_service
