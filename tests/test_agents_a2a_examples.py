"""examples/agents-a2a: an OpenAI Agents SDK agent and a LangGraph agent, each in its own venv made from its folder's
requirements.txt (the published packages, never the workspace lock), served over A2A and driven by the `a2a` kind
through `agentenv run support-refund --agent a2a` with the README's `[agents.a2a]` block; the model is the stand-in
following the harness kinds' scripts. The solving script scores 1.0, the wrong one below 1.0."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentenv_harness.testkit import script
from agentenv_model_standin.api import StandInModel
from agentenv_testing.services import free_port
from agentenv_testing.wheels import framework_venv, uv_binary

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "agents-a2a"
FRAMEWORKS = ["openai-agents", "langgraph"]
ROLE_CALLS = [("get_ticket", "billing_lead"), ("get_order", "billing_lead"), ("issue_refund", "billing_lead"),
              ("close_ticket", "billing_lead"), ("send_email", "billing_lead")]  # fmt: skip


@dataclass
class Served:
    name: str
    url: str
    model: StandInModel
    process: subprocess.Popen[str]
    started_in: float


def readme_block() -> str:
    """The README's `[agents.a2a]` block, as a user copies it."""
    (block,) = re.findall(r"```toml\n(\[agents\.a2a\].*?)```", (EXAMPLES / "README.md").read_text(), re.S)
    return str(block)


def wait_for_card(served: Served, deadline: float = 240) -> None:
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        if served.process.poll() is not None:
            raise AssertionError(f"{served.name} agent exited: {served.process.communicate()[1][-3000:]}")
        try:
            if httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{served.name} agent did not serve its card within {deadline} s")


@pytest.fixture(scope="module", params=FRAMEWORKS)
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """The example's agent, in its own venv, on a free port, with the stand-in model as its OpenAI endpoint."""
    if uv_binary() is None:
        pytest.skip("uv is not installed (./dev sync installs it)")
    folder = EXAMPLES / request.param
    python = framework_venv(f"a2a-{request.param}", [folder / "requirements.txt"])
    with StandInModel(script("support-refund-solve")) as model:
        port = free_port()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
               "OPENAI_BASE_URL": model.openai_url, "OPENAI_API_KEY": "sk-unused"}  # fmt: skip
        began = time.monotonic()
        process = subprocess.Popen(
            [str(python), "agent.py", "--port", str(port)],
            cwd=folder, env=env, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        running = Served(request.param, f"http://127.0.0.1:{port}", model, process, 0.0)
        try:
            wait_for_card(running)
            running.started_in = time.monotonic() - began
            yield running
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()


def run_task(tmp_path: Path, served: Served, *flags: str) -> tuple[int, dict[str, Any], str, float]:
    block = readme_block().replace("http://127.0.0.1:9101", served.url)
    assert served.url in block
    config = tmp_path / "config.toml"
    config.write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n' + block
    )
    env = {"AGENTENV_CONFIG": str(config), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "run", "support-refund", "--agent", "a2a", "--json", *flags],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )  # fmt: skip
    took = time.monotonic() - began
    try:
        return done.returncode, json.loads(done.stdout), done.stderr, took
    except json.JSONDecodeError:
        raise AssertionError(f"agentenv run printed no JSON: {done.stdout}\n{done.stderr}") from None


def world_calls(tmp_path: Path, run_id: str) -> list[tuple[str, str]]:
    env = {"AGENTENV_CONFIG": str(tmp_path / "config.toml"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    shown = subprocess.run(
        [sys.executable, "-m", "agentenv", "runs", "trajectory", run_id, "--json"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    events = json.loads(shown.stdout)
    return [(e["tool"], e["role"]) for e in events if e.get("kind") == "tool_call"]


@pytest.mark.parametrize(
    ("name", "score", "flags"),
    [
        ("support-refund-solve", 1.0, ()),
        ("support-refund-wrong", 0.25, ()),
        ("support-refund-solve", 1.0, ("--sandbox", "process")),  # the world served in a subprocess: its own MCP
    ],
    ids=["solve", "wrong", "solve-process-sandbox"],
)
def test_the_framework_agent_resolves_support_refund_over_a2a(
    tmp_path: Path, served: Served, name: str, score: float, flags: tuple[str, ...]
) -> None:
    served.model.use(script(name))
    before = len(served.model.requests)
    code, result, stderr, took = run_task(tmp_path, served, *flags)
    (task,) = result["tasks"]
    assert task["score"] == pytest.approx(score), stderr
    assert code == (0 if score == 1.0 else 1)
    asked = served.model.requests[before:]
    assert [(r.api, r.status) for r in asked] == [("openai-chat", 200)] * 6  # the framework's own model calls
    assert "issue_refund" in asked[0].tool_names and "mcp" not in json.dumps(asked[0].tool_names)
    refunded = _tool_messages(asked[3].body)[-1]  # the refund's outcome, as the framework sent it back
    assert ("89.99" if score == 1.0 else "129.99") in refunded
    assert world_calls(tmp_path, task["run_id"]) == ROLE_CALLS  # through MCP, as the task's role
    print(f"\n{served.name}: agent up in {served.started_in:.1f} s; agentenv run to score {took:.1f} s")


def _tool_messages(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]
