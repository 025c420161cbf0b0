"""What the three wire formats share: the parts of a reply, the tools a client offered, and SSE framing.

A reply is a list of `Part`s (text, or a call of one offered tool); each API module turns it into its own
JSON or server-sent events, and reads the offered tools out of its own request body.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Offered:
    """A tool the client sent: its name, and the namespace holding it (Codex groups MCP tools)."""

    name: str
    namespace: str | None = None

    @property
    def qualified(self) -> str:
        """The name a suffix is matched against: `mcp__world__get_ticket` for Codex's namespaced tools too."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Part:
    """One piece of a reply: `text`, or a call of `tool` with `arguments` (`search` marks a tool search)."""

    text: str | None = None
    tool: Offered | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    search: bool = False
    call_id: str = field(default_factory=lambda: secrets.token_hex(8))


@dataclass(frozen=True)
class Rendered:
    """An HTTP answer: status, content type and body bytes."""

    status: int
    content_type: str
    body: bytes


class Wire(Protocol):
    """One API's dialect; the server picks the module by request path."""

    name: str

    def offered(self, body: dict[str, Any]) -> list[Offered]: ...

    def search(self, body: dict[str, Any], suffixes: list[str]) -> Part | None:
        """A tool-search call that would reveal deferred tools, when the client offers one; else None."""
        ...

    def render(self, parts: list[Part], body: dict[str, Any], usage: Usage) -> Rendered: ...

    def error(self, status: int, message: str) -> Rendered: ...


@dataclass(frozen=True)
class Usage:
    """Token counts reported to the client: rough but stable (a token per four bytes)."""

    input_tokens: int
    output_tokens: int

    @classmethod
    def estimate(cls, request: bytes, parts: list[Part]) -> Usage:
        produced = sum(len(part.text or "") + len(json.dumps(part.arguments)) for part in parts)
        return cls(input_tokens=max(1, len(request) // 4), output_tokens=max(1, produced // 4))


def sse(events: list[tuple[str | None, Any]]) -> Rendered:
    """Server-sent events; an event name of None writes only `data:` (Chat Completions' style)."""
    chunks: list[str] = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        chunks.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return Rendered(200, "text/event-stream; charset=utf-8", "".join(chunks).encode())


def json_reply(data: Any, status: int = 200) -> Rendered:
    return Rendered(status, "application/json", json.dumps(data).encode())


def new_id(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(12)}"
