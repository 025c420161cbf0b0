"""A real harness agent on the browser: Claude Code (the CLI from claude-agent-sdk) driven by the stand-in model
gets the world's browser tools over MCP (the task's `agent` role: the browser only) and refunds Dana's boots on the
desk's website; the run is graded on the helpdesk's tables like the scripted agent's."""

from __future__ import annotations

from pathlib import Path

from agentenv_harness.testkit import run_agentenv, stored_files
from agentenv_model_standin.api import StandInModel

SCRIPT = Path(__file__).resolve().parent.parent / "src" / "agentenv_web_desk" / "scripts" / "refund-claude-code.toml"


def test_claude_code_refunds_through_the_browser_over_mcp(chromium: str, tmp_path: Path) -> None:
    with StandInModel(SCRIPT) as model:
        code, result, stderr = run_agentenv(
            tmp_path, "run", "web-desk", "--task", "refund-damaged-item", "--agent", "claude-code",
            "--model-url", model.url, timeout=600,
        )  # fmt: skip
    (task,) = result["tasks"] if isinstance(result, dict) else [None]
    assert task is not None and task["score"] == 1.0, (result, stderr[-3000:])
    assert code == 0
    assert model.turns_served == 11 and all(r.status == 200 for r in model.model_requests)
    offered = set(model.model_requests[0].tool_names)
    assert {"mcp__world__snapshot", "mcp__world__click", "mcp__world__type"} <= offered
    assert not any(name.endswith("issue_refund") for name in offered)  # the role has the browser, nothing else
    (transcript,) = stored_files(tmp_path, "claude-code-transcript-1.jsonl")
    assert '"name":"mcp__world__click"' in transcript.read_text()
