"""What only the `claude-code` kind does, on the real Claude Code binary against the stand-in model.

The behaviour both harness kinds share (support-refund scores, RBAC, max turns, continuation, timeouts,
cancellation, preflight) is tested for both in the repository's tests/test_harness_kinds.py, and in the Docker
sandbox in tests/test_harness_docker.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agentenv_claude_code.agent import ClaudeCodeAgent
from agentenv_harness.api import Finished, HarnessError
from agentenv_harness.testkit import PROMPT, support_world
from agentenv_model_standin.api import StandInModel

TICKET = {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]}


def run(turns: Any, **settings: Any) -> tuple[Any, StandInModel, ClaudeCodeAgent]:
    world = support_world()
    with StandInModel(turns) as model:
        instance = ClaudeCodeAgent({"base_url": model.url, "timeout": 120, **settings})
        try:
            reply = asyncio.run(instance.respond(PROMPT, world.tool_access("billing_lead")))
        finally:
            instance.close()
    return reply, model, instance


def test_world_tools_go_directly_and_nothing_else_is_asked_for() -> None:
    _, model, instance = run([TICKET, {"text": "done"}])
    first = model.model_requests[0]
    assert "mcp__world__get_ticket" in first.tool_names
    assert not {"ToolSearch", "Bash", "Edit", "Read"} & set(first.tool_names)
    assert [r.turn for r in model.requests] == [0, 1]  # no ToolSearch step, no probe (HEAD /api/hello)
    assert first.headers["x-claude-code-session-id"] == instance.session


def test_an_api_error_is_a_step_error_naming_the_cause() -> None:
    with pytest.raises(HarnessError, match=r"claude-code failed: .*no single offered tool matches 'no_such_tool'"):
        run([{"tool_calls": [{"tool": "no_such_tool"}]}])


def test_permission_denials_fail_although_claude_reports_success() -> None:
    instance = object.__new__(ClaudeCodeAgent)
    instance.options = ClaudeCodeAgent.Settings()
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "ok", "session_id": "s",
              "permission_denials": [{"tool_name": "mcp__world__issue_refund", "tool_input": {}}]}  # fmt: skip
    outcome = instance.read(Finished(0, json.dumps(result) + "\n", "", 1.0))
    assert outcome.error is not None and "denied mcp__world__issue_refund" in outcome.error
