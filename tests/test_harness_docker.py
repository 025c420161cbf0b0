"""Both harness kinds in the Docker sandbox, on their real binaries and the real engine.

Each kind's image is built from its distribution's recipe on agentenv-docker's local base image (no registry);
the CLI runs in a container of its own on an internal network, and reaches the world's /mcp (with the role's
own token) and the stand-in model on this host's loopback only through the agent's relay. The support-desk
must-shows hold as in the process sandbox (tests/test_harness_kinds.py); the coding must-show (issue 26) has
the harnesses fix a `coding` task with their own shell and edit tools in a Docker workspace; timeouts,
cancellation and Ctrl-C leave no container, network or process. Skipped, with the reason, without an engine.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_harness.api import HarnessAgent, HarnessError
from agentenv_harness.testkit import PROMPT, run_agentenv, script, support_world, tool_calls
from agentenv_model_standin.api import StandInModel
from harness_kinds import (
    KINDS,
    SOLVED,
    Kind,
    agent,
    answer,
    ask,
    assert_refused_and_recorded,
    check_support_refund_run,
    each_kind,
    forced_refund,
    harness_processes_under,
    interrupt_a_run,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
HARNESS_LABEL = "agentenv.harness"


def engine() -> Any:
    from agentenv_docker.api import engine as make

    return make()


def leftovers(label: str) -> dict[str, list[str]]:
    """Containers and networks of this plugin carrying `label` (KEY=VALUE), stopped ones too."""
    client = engine()
    try:
        filters = {"label": [HARNESS_LABEL, label]}
        return {
            "containers": [c.name for c in client.containers.list(all=True, filters=filters)],
            "networks": [n.name for n in client.networks.list(filters=filters)],
        }
    finally:
        client.close()


NOTHING: dict[str, list[str]] = {"containers": [], "networks": []}


@pytest.fixture(scope="module", autouse=True)
def harness_images(docker_engine: None) -> dict[str, float]:
    """Both kinds' images, built once per machine (their build time is printed, cold or cached)."""
    seconds = {}
    with StandInModel([{"text": "x"}]) as model:
        for kind in KINDS:
            instance = agent(kind, model, sandbox="docker")
            started = time.monotonic()
            try:
                instance.place.prepare()
                built = getattr(instance.place, "image_built", False)
            finally:
                instance.close()
            seconds[kind.name] = time.monotonic() - started
            print(f"[harness image] {kind.name}: {'built' if built else 'cached'} in {seconds[kind.name]:.1f} s")
    return seconds


def docker_config(kind: Kind) -> str:
    return f'\n[agents.{kind.name}]\nsandbox = "docker"\n'


@each_kind
@pytest.mark.parametrize(("name", "score"), [("support-refund-solve", 1.0), ("support-refund-wrong", 0.25)])
def test_support_refund_in_the_docker_sandbox(tmp_path: Path, kind: Kind, name: str, score: float) -> None:
    with StandInModel(script(name)) as model:
        code, result, stderr = run_agentenv(
            tmp_path, "run", "support-refund", "--agent", kind.name, "--model-url", kind.url(model),
            config=docker_config(kind),
        )  # fmt: skip
    view = check_support_refund_run(tmp_path, kind, name, score, model, code, result, stderr)
    assert view["sandbox"] == "docker"
    # every model request came through the container's network (the relay on its gateway), none from loopback
    assert {r.headers["host"].split(":")[0] for r in model.requests} != {"127.0.0.1"}
    assert leftovers(f"agentenv.run={result['tasks'][0]['run_id']}") == NOTHING


@each_kind
def test_world_trajectory_holds_the_calls_with_the_role_from_the_container(kind: Kind) -> None:
    (reply,), world, model, instance = answer(kind, script("support-refund-solve"), sandbox="docker")
    assert reply.text == "Refunded 89.99 on ORD-5001, closed TCK-9001 and emailed Dana."
    assert tool_calls(world) == SOLVED
    assert kind.shell_tool not in model.model_requests[0].tool_names  # own tools off unless the task says
    assert {r.method + " " + r.path.split("?")[0] for r in model.requests} <= {
        "POST /v1/messages",
        "POST /v1/responses",
    }
    assert leftovers(f"agentenv.harness.agent={instance.place.agent_id}") == NOTHING  # type: ignore[attr-defined]


@each_kind
def test_a_role_without_issue_refund_cannot_refund_from_the_container(kind: Kind) -> None:
    (reply,), world, model, _ = answer(kind, forced_refund(kind), role="support", sandbox="docker")
    assert_refused_and_recorded(kind, reply, world, model)


@each_kind
def test_max_turns_in_the_container(kind: Kind) -> None:
    ticket = {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]}
    world = support_world()
    with StandInModel([ticket, ticket, ticket, {"text": "done"}]) as model:
        instance = agent(kind, model, max_turns=2, sandbox="docker")
        try:
            with pytest.raises(HarnessError, match=r"used up its 2 turns \(settings.max_turns\)"):
                ask(instance, world, "billing_lead")
        finally:
            instance.close()
    assert tool_calls(world) == [("get_ticket", "billing_lead", None)] * 2


def _stopped(instance: HarnessAgent[Any], folder: Path) -> None:
    """Nothing of the agent runs: no container of it, no harness process."""
    agent_id = instance.place.agent_id  # type: ignore[attr-defined]
    assert leftovers(f"agentenv.harness.agent={agent_id}")["containers"] == []
    assert harness_processes_under(folder) == []


@each_kind
def test_a_timeout_and_a_cancellation_leave_no_container_and_no_process(kind: Kind) -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}, {"text": "late", "delay": 30}]) as model:
        instance = agent(kind, model, timeout=6, sandbox="docker")
        try:
            with pytest.raises(HarnessError, match=r"did not finish within 6 s \(settings.timeout\); its container"):
                ask(instance, world, "billing_lead")
            _stopped(instance, instance.workdir)

            async def cancel_once_asked() -> None:
                asked = len(model.model_requests)
                task = asyncio.create_task(instance.respond(PROMPT, world.tool_access("billing_lead")))
                while len(model.model_requests) == asked:
                    await asyncio.sleep(0.05)
                assert harness_processes_under(instance.workdir) != []
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

            asyncio.run(cancel_once_asked())
            _stopped(instance, instance.workdir)
        finally:
            instance.close()
    assert leftovers(f"agentenv.harness.agent={instance.place.agent_id}") == NOTHING  # type: ignore[attr-defined]


@each_kind
def test_ctrl_c_leaves_no_container_network_or_process(tmp_path: Path, kind: Kind) -> None:
    runner = interrupt_a_run(tmp_path, kind, config=docker_config(kind))
    assert leftovers(f"agentenv.owner.pid={runner}") == NOTHING


def test_prune_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    """SIGKILL leaves the container (its CLI still waiting for the model) and the network; their labels name
    the dead owner, so `agentenv docker prune` removes them, and the harness process with them."""
    kind = KINDS[0]
    runner = interrupt_a_run(tmp_path, kind, config=docker_config(kind), sig=signal.SIGKILL)
    owner = f"agentenv.owner.pid={runner}"
    left = leftovers(owner)
    assert left["containers"] and left["networks"]
    assert harness_processes_under(tmp_path) != []
    command = [sys.executable, "-m", "agentenv", "docker", "prune", "--label", owner,
               "--label", f"{HARNESS_LABEL}={kind.name}"]  # fmt: skip
    environ = {**os.environ, "AGENTENV_CONFIG": str(tmp_path / "config.toml")}
    pruned = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environ)
    assert pruned.returncode == 0, pruned.stderr
    assert leftovers(owner) == NOTHING
    deadline = time.monotonic() + 60
    while harness_processes_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert harness_processes_under(tmp_path) == []


def test_the_container_reaches_nothing_but_the_relay() -> None:
    """The agent's network is `internal` (Docker drops what would leave it), and the harness's own shell can
    neither resolve an outside name nor connect out; the world and the model answered through the relay."""
    connect = "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 443), timeout=3)' 2>&1 | tail -1"
    command = f"getent hosts example.com || echo no-name; {connect}"
    turns = [{"tool_calls": [{"tool": "Bash", "arguments": {"command": command}}]}, {"text": "looked"}]
    world = support_world()
    with StandInModel(turns) as model:
        instance = agent(KINDS[0], model, tools=["mcp", "shell"], sandbox="docker")
        try:
            instance.place.prepare()
            assert instance.place.network.attrs["Internal"] is True  # type: ignore[attr-defined]
            reply = ask(instance, world, "billing_lead")
        finally:
            instance.close()
    view = json.loads(reply.files["agent-trajectory-1.json"])
    (output,) = [e["content"] for e in view["entries"] if e["type"] == "tool_result"]
    assert "no-name" in output and ("timed out" in output or "unreachable" in output), output


# ---- issue 26: the harnesses fix a coding task with their own tools, in a Docker workspace -------------------
FIX_CLAUDE = [
    {"tool_calls": [{"tool": "Bash", "arguments": {"command": "python3 -m unittest 2>&1 | tail -3"}}]},
    {"tool_calls": [{"tool": "Read", "arguments": {"file_path": "/workspace/calc.py"}}]},
    {"tool_calls": [{"tool": "Edit", "arguments": {"file_path": "/workspace/calc.py",
                                                   "old_string": "def add(a, b):\n    return a - b",
                                                   "new_string": "def add(a, b):\n    return {fix}"}}]},
    {"tool_calls": [{"tool": "Bash", "arguments": {"command": "python3 -m unittest"}}]},
    {"text": "Fixed calc.add."},
]  # fmt: skip
FIX_CODEX = [
    {"tool_calls": [{"tool": "exec_command", "arguments": {"cmd": "python3 -m unittest 2>&1 | tail -3"}}]},
    {"tool_calls": [{"tool": "exec_command", "arguments": {"cmd": (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n"
        "+    return {fix}\n*** End Patch\nEOF\n")}}]},
    {"tool_calls": [{"tool": "exec_command", "arguments": {"cmd": "python3 -m unittest"}}]},
    {"text": "Fixed calc.add."},
]  # fmt: skip


@pytest.fixture
def docker_workspaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Workspaces in the Docker sandbox (one container per tree), under this test's folder."""
    from agentenv_steps.deploy import clear_templates
    from agentenv_workspace import layers

    root = tmp_path / "workspaces"
    monkeypatch.setenv(layers.ROOT_VARIABLE, str(root))
    monkeypatch.setenv("AGENTENV_WORKSPACE_SANDBOX", "docker")
    clear_templates()  # a cached world template would hold a process-sandbox workspace
    yield root
    layers.store().close()
    clear_templates()


@each_kind
@pytest.mark.parametrize(("fix", "score"), [("a + b", 1.0), ("a * b", 0.0)], ids=["right-edit", "wrong-edit"])
def test_a_harness_fixes_a_coding_task_with_its_own_tools(
    agentenv_runs: Any, docker_workspaces: Path, tmp_path: Path, kind: Kind, fix: str, score: float
) -> None:
    """The bundle's own `fix-bug` task, unchanged: `--agent KIND` and the kind's config table (the Docker
    sandbox, its own shell and edit tools only) are all it takes."""
    from agentenv import get_host
    from agentenv_runtime import find_bundle
    from agentenv_testing.tasks import temporary_config

    turns = json.loads(json.dumps(FIX_CLAUDE if kind.name == "claude-code" else FIX_CODEX).replace("{fix}", fix))
    bundle = find_bundle("coding", get_host())
    config = temporary_config(tmp_path)
    config.values["agents"] = {kind.name: {"sandbox": "docker", "tools": ["shell", "edit"], "timeout": 300}}
    with StandInModel(turns) as model:
        overrides = {"agent": kind.name, "model_url": kind.url(model)}
        record = agentenv_runs(
            bundle.task_files()["fix-bug"], bundle_dir=bundle.path, overrides=overrides, config=config
        )
    assert record["status"] == "succeeded", record["steps"]
    assert record["score"] == score
    assert model.turns_served == len(turns)
    offered = set(model.model_requests[0].tool_names)
    assert kind.shell_tool in offered and not any(name.startswith("mcp__world") for name in offered)
    (issue,) = [step for step in record["steps"] if step["id"] == "issue"]
    view = json.loads(agentenv_runs.object(issue["output"]["files"]["agent-trajectory-1.json"]))
    assert view["sandbox"] == "docker"
    first, *_, last = [e["content"] for e in view["entries"] if e["type"] == "tool_result"]
    assert "FAILED" in first  # its own shell ran the tests in the tree, before and after its own edit
    assert ("FAILED" in last) == (score < 1.0) and last.rstrip().endswith("OK") == (score == 1.0), last
    events = agentenv_runs.trajectory(record, world="repo")
    assert [e for e in events if e["kind"] == "tool_call"] == []  # it never used the world's tools
