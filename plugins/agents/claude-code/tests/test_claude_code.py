"""The `claude-code` kind on the real Claude Code binary (bundled in claude-agent-sdk), against the stand-in model.

The world is the support desk (helpdesk + email + slack with Acme's data); the model is
`agentenv-model-standin` following a script, so every run is offline and deterministic.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agentenv_claude_code.agent import ClaudeCodeAgent
from agentenv_harness.api import HarnessError
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
from agentenv_model_standin.api import StandInModel

SOLVED = [("get_ticket", "billing_lead", None), ("get_order", "billing_lead", None),
          ("issue_refund", "billing_lead", None), ("close_ticket", "billing_lead", None),
          ("send_email", "billing_lead", None)]  # fmt: skip


def agent(model: StandInModel, **settings: Any) -> ClaudeCodeAgent:
    return ClaudeCodeAgent({"base_url": model.url, "timeout": 120, **settings})


def prompt(instance: ClaudeCodeAgent, world: Any, role: str, text: str = PROMPT) -> Any:
    return asyncio.run(instance.respond(text, world.tool_access(role)))


@pytest.mark.parametrize(("name", "score"), [("support-refund-solve", 1.0), ("support-refund-wrong", 0.25)])
def test_support_refund_through_agentenv_run(tmp_path: Path, name: str, score: float) -> None:
    with StandInModel(script(name)) as model:
        code, result, stderr = run_agentenv(
            tmp_path, "run", "support-refund", "--agent", "claude-code", "--model-url", model.url
        )
    (task,) = result["tasks"]
    assert task["score"] == pytest.approx(score), stderr
    assert code == (0 if score == 1.0 else 1)
    assert model.turns_served == 6 and all(r.status == 200 for r in model.model_requests)
    (transcript,) = stored_files(tmp_path, "claude-code-transcript-1.jsonl")  # stored with the run
    assert '"name":"mcp__world__issue_refund"' in transcript.read_text()


def test_world_trajectory_holds_the_harness_calls_with_its_role() -> None:
    world = support_world()
    with StandInModel(script("support-refund-solve")) as model:
        instance = agent(model)
        try:
            reply = prompt(instance, world, "billing_lead")
        finally:
            instance.close()
    assert reply.text == "Refunded 89.99 on ORD-5001, closed TCK-9001 and emailed Dana."
    assert tool_calls(world) == SOLVED
    assert refunded_cents(world) == 8999
    first = model.model_requests[0]
    assert first.headers["x-api-key"] == "sk-agentenv-local"
    assert "mcp__world__issue_refund" in first.tool_names
    assert not {"Bash", "ToolSearch", "Edit"} & set(first.tool_names)  # built-ins are off by default
    assert {r.method + " " + r.path.split("?")[0] for r in model.requests} == {"POST /v1/messages"}  # no probes


def test_a_role_without_issue_refund_cannot_refund() -> None:
    world = support_world()
    turns = [
        {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]},
        {"tool_calls": [{"tool": "mcp__world__issue_refund", "offered": False,
                         "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}}]},
        {"text": "I may not refund."},
    ]  # fmt: skip
    with StandInModel(turns) as model:
        instance = agent(model)
        try:
            reply = prompt(instance, world, "support")
        finally:
            instance.close()
    assert reply.text == "I may not refund."
    assert "mcp__world__issue_refund" not in model.model_requests[0].tool_names  # RBAC: not even offered
    assert refunded_cents(world) == 0
    assert tool_calls(world) == [("get_ticket", "support", None)]
    transcript = reply.files["claude-code-transcript-1.jsonl"]
    assert "No such tool available: mcp__world__issue_refund" in transcript  # refused, recorded by the harness


def test_a_later_prompt_resumes_the_same_session() -> None:
    world = support_world()
    turns = [{"text": "First answer."}, {"text": "Second answer."}]
    with StandInModel(turns) as model:
        instance = agent(model)
        try:
            first = prompt(instance, world, "billing_lead", "Remember the word heron.")
            second = prompt(instance, world, "billing_lead", "Which word?")
        finally:
            instance.close()
    assert (first.text, second.text) == ("First answer.", "Second answer.")
    later = json.dumps(model.model_requests[-1].body["messages"])
    assert "Remember the word heron." in later and "First answer." in later
    assert model.model_requests[0].headers["x-claude-code-session-id"] == instance.session


def test_timeout_kills_the_whole_process_tree() -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}]) as model:
        instance = agent(model, timeout=4)
        try:
            with pytest.raises(HarnessError, match=r"did not finish within 4 s \(settings.timeout\)"):
                prompt(instance, world, "billing_lead")
            assert living(instance.binary) == []
        finally:
            instance.close()


def test_cancelling_the_run_kills_the_whole_process_tree() -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}]) as model:
        instance = agent(model)

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


def test_a_failing_cli_is_a_step_error_naming_the_cause() -> None:
    world = support_world()
    with StandInModel([{"tool_calls": [{"tool": "no_such_tool"}]}]) as model:
        instance = agent(model)
        try:
            with pytest.raises(
                HarnessError, match=r"claude-code failed: .*no single offered tool matches 'no_such_tool'"
            ):
                prompt(instance, world, "billing_lead")
        finally:
            instance.close()


def test_max_turns_is_enforced() -> None:
    world = support_world()
    ticket = {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]}
    with StandInModel([ticket, ticket, ticket, {"text": "done"}]) as model:
        instance = agent(model, max_turns=2)
        try:
            with pytest.raises(HarnessError, match=r"used up its 2 turns \(settings.max_turns\)"):
                prompt(instance, world, "billing_lead")
        finally:
            instance.close()


def test_host_tools_are_switched_on_per_task_with_consent() -> None:
    with pytest.raises(ValueError, match=r"allow_host_tools = true"):
        ClaudeCodeAgent.Settings(tools=["mcp", "shell"])
    world = support_world()
    with StandInModel([{"text": "ok"}]) as model:
        instance = agent(model, tools=["mcp", "shell"], allow_host_tools=True)
        try:
            prompt(instance, world, "billing_lead")
        finally:
            instance.close()
    assert {"Bash", "mcp__world__get_ticket"} <= set(model.model_requests[0].tool_names)


def test_preflight_names_the_fix_and_starts_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HarnessError, match=r"no model endpoint .*\[agents.claude-code\] .*--model-url"):
        ClaudeCodeAgent({})
    with pytest.raises(HarnessError, match=r"nothing answers there .*agentenv model stand-in"):
        ClaudeCodeAgent({"base_url": "http://127.0.0.1:9"})
    with StandInModel([{"text": "x"}]) as model:
        with pytest.raises(HarnessError, match=r"settings.binary .*no executable file"):
            ClaudeCodeAgent({"base_url": model.url, "binary": str(tmp_path / "claude")})
        monkeypatch.setattr(ClaudeCodeAgent, "default_binary", lambda self: None)
        with pytest.raises(HarnessError, match=r"not installed: pip install claude-agent-sdk"):
            ClaudeCodeAgent({"base_url": model.url})
        monkeypatch.undo()
        with pytest.raises(HarnessError, match=r"speaks only 'anthropic'"):
            ClaudeCodeAgent({"base_url": model.url, "api": "openai-chat"})
    assert model.requests == []


def test_the_key_defaults_to_anthropic_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-the-environment")
    world = support_world()
    with StandInModel([{"text": "ok"}]) as model:
        instance = agent(model)
        try:
            prompt(instance, world, "billing_lead")
        finally:
            instance.close()
    assert model.model_requests[0].headers["x-api-key"] == "sk-from-the-environment"
