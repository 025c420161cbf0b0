"""The `claude-code` agent kind: `claude -p` against the world's MCP endpoint and an Anthropic endpoint.

How it is run (the reasons are in ../shared/reference/harness-facts.md, checked again for this kind):
- `--mcp-config` names one HTTP server, `world`, with the role's bearer token; `--strict-mcp-config` keeps
  any other MCP configuration out.
- `--tools ""` removes Claude Code's built-in tools unless the task switches some on; without built-ins
  there is no `ToolSearch` either, so the world's tools are sent to the model directly.
- `--permission-mode dontAsk` with `--allowedTools mcp__world` (+ the switched-on built-ins): allowed calls
  run, anything else is denied without a prompt. Root may not skip permissions, and need not.
- `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` and `DISABLE_TELEMETRY=1`: no feature-flag, telemetry or
  connectivity traffic; the only requests go to ANTHROPIC_BASE_URL and the world.
- A denied tool still ends with `subtype: success` and exit 0: `permission_denials` is read and fails the step.
"""

from __future__ import annotations

import importlib.util
import json
import re
import uuid
from pathlib import Path
from typing import Any, ClassVar

from agentenv_harness import api as harness
from agentenv_harness.api import CliFacts, HarnessAgent, HarnessSettings, Recipe, json_lines, turns_used_up

BUILTINS = {"shell": ["Bash"], "edit": ["Read", "Edit", "Write", "Glob", "Grep"], "web": ["WebFetch", "WebSearch"]}
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
"""Switches that keep Claude Code's traffic to the configured endpoint (see the facts file's network table)."""


class ClaudeCodeSettings(HarnessSettings):
    """Settings of the `claude-code` kind (those every harness takes)."""

    kind: ClassVar[str] = "claude-code"


class ClaudeCodeAgent(HarnessAgent[ClaudeCodeSettings]):
    """Claude Code (the CLI bundled in `claude-agent-sdk`), one `claude -p` run per prompt, resumed after."""

    name = "claude-code"
    description = "The real Claude Code CLI, acting through the world's MCP tools against an Anthropic endpoint."
    Settings = ClaudeCodeSettings
    cli = CliFacts(
        "ANTHROPIC_API_KEY", "anthropic", "pip install claude-agent-sdk (it bundles the CLI)", "No such tool available"
    )
    pending_session: str | None = None
    """The session id chosen for the first prompt (its transcript is found by it)."""

    def default_binary(self) -> Path | None:
        spec = importlib.util.find_spec("claude_agent_sdk")
        if spec is None or not spec.submodule_search_locations:
            return None
        return Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"

    def recipe(self) -> Recipe:
        return Recipe(Path(__file__).parent / "image", "claude", "/usr/local/bin/claude")

    @property
    def config_dir(self) -> Path:
        return self.workdir / "claude"

    def launch(self, prompt: str, endpoint: harness.McpEndpoint, chosen: harness.PromptOptions) -> harness.Launch:
        servers = {"world": {"type": "http", "url": endpoint.url, "headers": endpoint.headers}}
        if "mcp" not in self.options.tools:  # no world tools: no server at all (strict: none from elsewhere)
            servers = {}
        mcp_config = self.workdir / "mcp.json"
        mcp_config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        builtins = [name for tool in self.options.tools for name in BUILTINS.get(tool, [])]
        allowed = (["mcp__world"] if "mcp" in self.options.tools else []) + builtins
        argv = [
            self.cli_binary, "-p", prompt,
            "--output-format", "stream-json", "--verbose",
            "--mcp-config", str(mcp_config), "--strict-mcp-config",
            "--tools", ",".join(builtins),
            "--permission-mode", "dontAsk",
            "--max-turns", str(self.options.max_turns),
        ]  # fmt: skip
        if allowed:
            argv += ["--allowedTools", ",".join(allowed)]
        if chosen.model or self.options.model:
            argv += ["--model", str(chosen.model or self.options.model)]
        if chosen.effort:
            argv += ["--effort", chosen.effort]
        if self.options.system_prompt:
            argv += ["--system-prompt", self.options.system_prompt]
        if self.session is None:
            self.pending_session = str(uuid.uuid4())
            argv += ["--session-id", self.pending_session]
        else:
            argv += ["--resume", self.session]
        env = {
            **self.base_env(),
            **QUIET_ENV,
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
            "ANTHROPIC_BASE_URL": self.model_url,
            "ANTHROPIC_API_KEY": self.api_key,
        }
        return harness.Launch(argv, env)

    def read(self, finished: harness.Finished) -> harness.Outcome:
        results = [row for row in json_lines(finished.stdout) if row.get("type") == "result"]
        if not results:
            return harness.Outcome(text="", error="it printed no result line")
        result: dict[str, Any] = results[-1]
        outcome = harness.Outcome(
            text=str(result.get("result") or ""),
            session=str(result.get("session_id") or "") or None,
            usage=dict(result.get("usage") or {}),
        )
        subtype = str(result.get("subtype", ""))
        if subtype == "error_max_turns":
            outcome.error = turns_used_up(self.options.max_turns)
        elif result.get("is_error") or subtype != "success":  # an API error can come with subtype "success"
            outcome.error = f"it reported an error ({subtype}): {outcome.text or json.dumps(result)[:500]}"
        elif result.get("permission_denials"):
            denied = sorted({str(d.get("tool_name")) for d in result["permission_denials"] if isinstance(d, dict)})
            outcome.error = (
                f"Claude Code denied {', '.join(denied)} (not in the role's MCP tools or the task's `tools`)"
            )
        return outcome

    def transcript(self, outcome: harness.Outcome) -> Path | None:
        session = outcome.session or getattr(self, "pending_session", None)
        if not session or not re.fullmatch(r"[0-9a-fA-F-]+", session):
            return None
        return next(iter(sorted((self.config_dir / "projects").glob(f"*/{session}.jsonl"))), None)

    def entries(self, transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Claude Code's session lines: user and assistant messages whose content is text or blocks."""
        found: list[dict[str, Any]] = []
        for line in transcript:
            message = line.get("message")
            if line.get("type") not in ("user", "assistant") or not isinstance(message, dict):
                continue
            role = str(message.get("role") or line["type"])
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                found += _entry(role, block)
        return found


def _entry(role: str, block: Any) -> list[dict[str, Any]]:
    if not isinstance(block, dict):
        return []
    kind = block.get("type")
    if kind == "text" and block.get("text"):
        return [{"type": "message", "role": role, "text": str(block["text"])}]
    if kind == "tool_use":
        return [
            {"type": "tool_call", "id": block.get("id"), "name": block.get("name"), "arguments": block.get("input")}
        ]
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        return [{"type": "tool_result", "id": block.get("tool_use_id"), "content": str(content or ""),
                 "error": bool(block.get("is_error"))}]  # fmt: skip
    return []
