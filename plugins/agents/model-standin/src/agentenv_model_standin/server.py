"""The stand-in model server: a loopback HTTP server answering model requests from a script of turns.

Every request is logged (`StandInModel.requests`), answered or not. Each model request takes the next turn;
when a turn calls a tool the client did not offer, the server first tries the client's tool search (Claude
Code's `ToolSearch`, Codex's `tool_search`), which does not use up the turn, and otherwise answers HTTP 400
naming the tools it was offered, so a script that no longer fits its client fails loudly.

Standard library only (`http.server` in a thread): starting one costs a few milliseconds.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import urlsplit

from agentenv_model_standin import anthropic, openai_chat, openai_responses
from agentenv_model_standin.script import Script, Turn, load_script
from agentenv_model_standin.wire import Offered, Part, Rendered, Usage, json_reply

_WIRES: dict[str, ModuleType] = {
    "/messages": anthropic,
    "/responses": openai_responses,
    "/chat/completions": openai_chat,
}
EXHAUSTED = "The stand-in model's script has no more turns."
_SEPARATORS = ("__", ".", "/", "-", "_")


@dataclass
class LoggedRequest:
    """One request as received, and what the stand-in did with it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The parsed JSON body (None when empty or not JSON)."""
    api: str | None
    """`anthropic`, `openai-responses`, `openai-chat`, or None for other paths."""
    received_at: float = field(default_factory=time.time)
    status: int = 0
    turn: int | None = None
    """Index (from 0) of the script turn this request was answered with; None for searches and errors."""
    error: str | None = None

    @property
    def tool_names(self) -> list[str]:
        """The tools the client offered, qualified (`mcp__world__get_ticket` for Codex's namespaces too)."""
        wire = _wire_for(self.path)
        if wire is None or not isinstance(self.body, dict):
            return []
        return [tool.qualified for tool in wire.offered(self.body)]


def _wire_for(path: str) -> ModuleType | None:
    path = urlsplit(path).path.rstrip("/")
    return next((wire for suffix, wire in _WIRES.items() if path.endswith(suffix)), None)


def match_tool(suffix: str, offered: list[Offered]) -> Offered | None:
    """The offered tool named `suffix`, or the only one whose name ends with a separator and `suffix`."""
    exact = [tool for tool in offered if tool.qualified == suffix or tool.name == suffix]
    if exact:
        return exact[0]
    ending = [tool for tool in offered if any(tool.qualified.endswith(sep + suffix) for sep in _SEPARATORS)]
    return ending[0] if len(ending) == 1 else None


class StandInModel:
    """A scripted model on loopback; use it as a context manager, or `start()`/`stop()`.

    `url` is the root for Anthropic clients (`ANTHROPIC_BASE_URL`); `openai_url` (`url + "/v1"`) is the
    `base_url` for OpenAI clients.
    """

    def __init__(
        self,
        script: Script | Path | str | dict[str, Any] | list[dict[str, Any]],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = load_script(script)
        self.requests: list[LoggedRequest] = []
        self._host, self._port = host, port
        self._cursor = 0
        self._searched_at: int | None = None
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stand-in model is not running; call start() or use it in a `with` block")
        return f"http://{self._host}:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def turns_served(self) -> int:
        return self._cursor

    @property
    def model_requests(self) -> list[LoggedRequest]:
        """The requests to a model endpoint (not probes such as `HEAD /api/hello`)."""
        return [request for request in list(self.requests) if request.api is not None]

    def use(self, script: Script | Path | str | dict[str, Any] | list[dict[str, Any]]) -> None:
        """Follow another script from its first turn; the request log is kept."""
        with self._lock:
            self.script, self._cursor, self._searched_at = load_script(script), 0, None

    def start(self) -> StandInModel:
        if self._server is None:
            self._server = ThreadingHTTPServer((self._host, self._port), _handler_for(self))
            self._server.daemon_threads = True
            self._thread = threading.Thread(target=self._server.serve_forever, name="stand-in-model", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> StandInModel:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def answer(self, wire: ModuleType, raw: bytes, body: dict[str, Any], logged: LoggedRequest) -> Rendered:
        """The next turn rendered for `wire`, a tool-search step, or an error naming what did not fit."""
        with self._lock:
            turn: Turn | None = self.script.turns[self._cursor] if self._cursor < len(self.script.turns) else None
            if turn is None:
                logged.error = "script exhausted"
                parts = [Part(text=EXHAUSTED)]
            else:
                resolved = self._resolve(wire, turn, body)
                if isinstance(resolved, Rendered):
                    return resolved
                parts = resolved
                if not parts[-1].search:
                    logged.turn, self._cursor, self._searched_at = self._cursor, self._cursor + 1, None
        if turn is not None and turn.delay:
            time.sleep(turn.delay)
        rendered: Rendered = wire.render(parts, body, Usage.estimate(raw, parts))
        return rendered

    def _resolve(self, wire: ModuleType, turn: Turn, body: dict[str, Any]) -> list[Part] | Rendered:
        offered: list[Offered] = wire.offered(body)
        parts = [Part(text=turn.text)] if turn.text is not None else []
        missing: list[str] = []
        for call in turn.tool_calls:
            tool = match_tool(call.tool, offered) or (None if call.offered else Offered(call.tool, call.namespace))
            if tool is None:
                missing.append(call.tool)
            else:
                parts.append(Part(tool=tool, arguments=call.arguments))
        if not missing:
            return parts
        search: Part | None = wire.search(body, missing) if self._searched_at != self._cursor else None
        if search is not None:
            self._searched_at = self._cursor
            return [search]
        names = ", ".join(tool.qualified for tool in offered) or "none"
        message = (
            f"stand-in model ({self.script.source}), turn {self._cursor + 1}: no single offered tool matches "
            f"{', '.join(repr(name) for name in missing)}; offered: {names}"
        )
        rendered: Rendered = wire.error(400, message)
        return rendered


def _handler_for(model: StandInModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the request log is `model.requests`, not stderr."""

        def do_HEAD(self) -> None:
            logged = self._log(None, None)
            logged.status = 200
            self._send(Rendered(200, "text/plain", b""), logged, head=True)

        def do_GET(self) -> None:
            logged = self._log(None, None)
            if urlsplit(self.path).path.rstrip("/").endswith("/models"):
                reply = json_reply(
                    {"object": "list", "data": [{"id": "stand-in", "object": "model", "owned_by": "agentenv"}]}
                )
            else:
                reply = json_reply({"error": {"message": f"no such path {self.path}"}}, 404)
            logged.status = reply.status
            self._send(reply, logged)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = None
            wire = _wire_for(self.path)
            logged = self._log(body, wire)
            if wire is None:
                reply = json_reply({"error": {"message": f"no model endpoint at {self.path}"}}, 404)
            elif not isinstance(body, dict):
                reply = wire.error(400, "the request body is not a JSON object")
            else:
                reply = model.answer(wire, raw, body, logged)
            if reply.status != 200 and logged.error is None:
                logged.error = reply.body.decode(errors="replace")
            logged.status = reply.status
            self._send(reply, logged)

        def _log(self, body: Any, wire: ModuleType | None) -> LoggedRequest:
            logged = LoggedRequest(
                method=self.command,
                path=self.path,
                headers={key.lower(): value for key, value in self.headers.items()},
                body=body,
                api=wire.name if wire is not None else None,
            )
            model.requests.append(logged)
            return logged

        def _send(self, reply: Rendered, logged: LoggedRequest, head: bool = False) -> None:
            try:
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                if not head:
                    self.wfile.write(reply.body)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # a killed or timed-out client; nothing to tell it
                self.close_connection = True
                logged.error = logged.error or "the client went away before the reply"

    return Handler
