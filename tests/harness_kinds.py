"""What the tests of both harness kinds share, in the process sandbox (test_harness_kinds.py) and in the Docker
sandbox (test_harness_docker.py): the kinds' facts, running prompts against the support world and a stand-in
model, and the checks a support-refund run and a refused call must pass in either sandbox."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentenv_claude_code.agent import ClaudeCodeAgent
from agentenv_codex.agent import CodexAgent
from agentenv_harness.api import HarnessAgent
from agentenv_harness.testkit import (
    PROMPT,
    refunded_cents,
    run_agentenv,
    stored_files,
    support_world,
    tool_calls,
    write_config,
)
from agentenv_model_standin.api import LoggedRequest, StandInModel

SOLVED = [("get_ticket", "billing_lead", None), ("get_order", "billing_lead", None),
          ("issue_refund", "billing_lead", None), ("close_ticket", "billing_lead", None),
          ("send_email", "billing_lead", None)]  # fmt: skip


@dataclass(frozen=True)
class Kind:
    name: str
    cls: type[HarnessAgent[Any]]
    openai: bool
    """Whether the CLI takes the OpenAI base URL (…/v1) rather than the root."""
    refund_call: str
    """How the issue_refund call reads in the kind's transcript."""
    refused: str
    """How the kind records a call of a tool it was not given."""
    shell_tool: str
    key_env: str

    def url(self, model: StandInModel) -> str:
        return model.openai_url if self.openai else model.url

    def key(self, request: LoggedRequest) -> str:
        return request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")


KINDS = [
    Kind("claude-code", ClaudeCodeAgent, False, '"name":"mcp__world__issue_refund"',
         "No such tool available: mcp__world__issue_refund", "Bash", "ANTHROPIC_API_KEY"),
    Kind("codex", CodexAgent, True, '"name":"issue_refund","namespace":"mcp__world"',
         "unsupported call", "exec_command", "OPENAI_API_KEY"),
]  # fmt: skip
each_kind = pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])


def agent(kind: Kind, model: StandInModel, **settings: Any) -> HarnessAgent[Any]:
    return kind.cls({"base_url": kind.url(model), "timeout": 120, **settings})


def ask(instance: HarnessAgent[Any], world: Any, role: str, text: str = PROMPT) -> Any:
    return asyncio.run(instance.respond(text, world.tool_access(role)))


def answer(kind: Kind, turns: Any, role: str = "billing_lead", prompts: tuple[str, ...] = (PROMPT,), **settings: Any
           ) -> tuple[list[Any], Any, StandInModel, HarnessAgent[Any]]:  # fmt: skip
    """Run the prompts against a fresh support world and a stand-in following `turns`."""
    world = support_world()
    with StandInModel(turns) as model:
        instance = agent(kind, model, **settings)
        try:
            replies = [ask(instance, world, role, text) for text in prompts]
        finally:
            instance.close()
    return replies, world, model, instance


def task_reply(script_name: str) -> str:
    return {"support-refund-solve": "Refunded 89.99 on ORD-5001, closed TCK-9001 and emailed Dana.",
            "support-refund-wrong": "Refunded the whole order."}[script_name]  # fmt: skip


def check_support_refund_run(
    tmp_path: Path, kind: Kind, name: str, score: float, model: StandInModel, code: int, result: Any, stderr: str
) -> dict[str, Any]:
    """What an `agentenv run support-refund --agent KIND` run must show (score, transcript, agent view, world
    trajectory with the role, export); returns the view."""
    (task,) = result["tasks"]
    assert task["score"] == pytest.approx(score), stderr
    assert code == (0 if score == 1.0 else 1)
    assert model.turns_served == 6 and all(r.status == 200 for r in model.model_requests)
    (transcript,) = stored_files(tmp_path, f"{kind.name}-transcript-1.jsonl")  # stored with the run
    assert kind.refund_call in transcript.read_text()
    _, (view,), _ = run_agentenv(tmp_path, "runs", "trajectory", task["run_id"], "--agent")
    assert (view["step"], view["kind"]) == ("ticket", kind.name)
    assert view["usage"]["input_tokens"] > 0
    calls = [e for e in view["entries"] if e["type"] == "tool_call"]
    assert [c["name"] for c in calls][2] == "mcp__world__issue_refund"
    assert calls[2]["arguments"]["amount"] == (89.99 if score == 1.0 else 129.99)
    results = [e for e in view["entries"] if e["type"] == "tool_result"]
    assert len(results) == 5 and "TCK-9001" in results[0]["content"]
    assert view["entries"][-1] == {"type": "message", "role": "assistant", "text": task_reply(name)}
    _, events, _ = run_agentenv(tmp_path, "runs", "trajectory", task["run_id"])  # the world's own record
    called = [(e["tool"], e["role"], (e.get("error") or {}).get("code")) for e in events if e["kind"] == "tool_call"]
    assert called == SOLVED
    export = tmp_path / "export.jsonl"
    subprocess.run(
        [sys.executable, "-m", "agentenv", "runs", "export", "--output", str(export)],
        env={"AGENTENV_CONFIG": str(tmp_path / "config.toml"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        cwd=tmp_path, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    (row,) = [json.loads(line) for line in export.read_text().splitlines()]
    exported = [m["tool_calls"][0]["function"]["name"] for m in row["messages"] if m.get("tool_calls")]
    assert exported == [tool for tool, _, _ in SOLVED] and row["reward"] == pytest.approx(score)
    found: dict[str, Any] = view
    return found


REFUSED_TURNS = [
    {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]},
    {"tool_calls": [{"tool": "issue_refund", "offered": False,
                     "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "x"}}]},
    {"text": "I may not refund."},
]  # fmt: skip


def forced_refund(kind: Kind) -> list[dict[str, Any]]:
    """The support role's script, with the refund call addressed as a model addresses the kind's world tools."""
    turns = json.loads(json.dumps(REFUSED_TURNS))
    call = turns[1]["tool_calls"][0]
    if kind.name == "claude-code":
        call["tool"] = "mcp__world__issue_refund"
    else:
        call["namespace"] = "mcp__world"
    return turns


def assert_refused_and_recorded(kind: Kind, reply: Any, world: Any, model: StandInModel) -> None:
    assert reply.text == "I may not refund."
    assert "mcp__world__issue_refund" not in model.model_requests[0].tool_names  # RBAC: not even offered
    assert refunded_cents(world) == 0
    assert kind.refused in reply.files[f"{kind.name}-transcript-1.jsonl"]  # the harness refused it itself
    # ... and the run's record says so: the world refused the same call for the role, and the view notes it
    assert tool_calls(world) == [("get_ticket", "support", None), ("issue_refund", "support", "forbidden")]
    view = json.loads(reply.files["agent-trajectory-1.json"])
    (refused,) = [e for e in view["entries"] if e.get("refused")]
    assert refused["name"] == "mcp__world__issue_refund" and refused["arguments"]["amount"] == 89.99
    assert refused["refused"]["role"] == "support" and refused["refused"]["code"] == "forbidden"


def harness_processes_under(folder: Path) -> list[int]:
    """Live harness processes of agents whose folder lies inside `folder`: every harness CLI gets a private
    HOME (`…/agentenv-<kind>-…/home`) and its children inherit it, on this machine or in a container."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        homes = [Path(item[5:].decode(errors="replace")) for item in environ if item.startswith(b"HOME=")]
        if homes and homes[0].is_relative_to(folder) and homes[0].parent.name.startswith("agentenv-"):
            found.append(int(entry.name))
    return found


def interrupt_a_run(tmp_path: Path, kind: Kind, config: str = "", sig: int = signal.SIGINT) -> int:
    """`sig` (Ctrl-C by default) to `agentenv run support-refund --agent KIND` while the harness waits for the
    model: the run ends, and (after Ctrl-C) no harness process of it is left, on this machine or in a container.
    Returns the runner's pid."""
    path = write_config(tmp_path, config)
    env = {"AGENTENV_CONFIG": str(path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    with StandInModel([{"text": "late", "delay": 60}]) as model:
        command = [sys.executable, "-m", "agentenv", "run", "support-refund", "--agent", kind.name,
                   "--model-url", kind.url(model)]  # fmt: skip
        runner = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 240
            while not model.model_requests and time.monotonic() < deadline and runner.poll() is None:
                time.sleep(0.1)
            assert model.model_requests, "the harness never asked the model"
            assert harness_processes_under(tmp_path) != []
            runner.send_signal(sig)
            runner.wait(timeout=120)
        finally:
            if runner.poll() is None:
                runner.kill()
    assert runner.returncode != 0
    if sig == signal.SIGINT:
        assert harness_processes_under(tmp_path) == []
    return runner.pid
