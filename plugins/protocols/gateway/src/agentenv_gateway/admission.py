"""The request-limits layer: what one caller may hold of a served world at once, on every route and protocol.

Limits are keyed on who the server authenticated, never on what the client claims. The principal is the role
the bearer token opened (`local` on a token-less server, whose callers are all this machine). An MCP session id
counts as its own key only when this principal opened that session; any other id (a made-up one, another role's)
counts against the principal itself, so a caller cannot escape its limits by sending random `mcp-session-id`s.

- `max_in_flight` requests at once per MCP session, and `max_in_flight_principal` per principal (sessions and
  session-less requests together: 64 official-SDK clients initialising at once with one token fit);
- `max_pending_bytes` of request bodies being received or held per principal: 300 slow 1 MiB uploads get 429
  once the budget is taken, instead of 300 MiB of buffers;
- `body_timeout` seconds to receive a whole body (408 after): a trickling upload or a chunk size that announces
  more than will ever come does not hold a slot forever.

Bodies are read here, once, before any route sees them, and handed on unchanged.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentenv_gateway.limits import GatewayLimits

LOCAL_PRINCIPAL = "local"
"""Whose requests a token-less server counts together: every caller is this machine."""


class Refused(Exception):
    """A request over a limit: `status` and a message naming the limit."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class Admission:
    """In-flight counts and body budgets per principal and per owned MCP session."""

    limits: GatewayLimits
    in_flight: dict[str, int] = field(default_factory=dict)
    pending_bytes: dict[str, int] = field(default_factory=dict)
    owners: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """MCP session id → the principal that opened it (oldest first, at most `limits.max_sessions`)."""

    def principal(self, token_role: str, authorization: str) -> str:
        if not authorization:
            return LOCAL_PRINCIPAL
        digest = hashlib.sha256(authorization.encode("latin-1")).hexdigest()[:16]
        return f"{token_role}:{digest}"

    def owned(self, session: str | None, principal: str) -> bool:
        return session is not None and self.owners.get(session) == principal

    def keys(self, principal: str, session: str | None) -> tuple[str, ...]:
        """The counters a request takes: its principal's, and its session's when the principal owns it."""
        return (principal, "mcp:" + session) if session is not None and self.owned(session, principal) else (principal,)

    def enter(self, keys: tuple[str, ...]) -> None:
        """Count a request in; Refused (429) when one of its counters is full."""
        for key in keys:
            limit = self.limits.max_in_flight if key.startswith("mcp:") else self.limits.max_in_flight_principal
            if self.in_flight.get(key, 0) >= limit:
                which = "this MCP session" if key.startswith("mcp:") else "this caller (its token)"
                setting = "max_in_flight" if key.startswith("mcp:") else "max_in_flight_principal"
                raise Refused(429, "too_many_requests",
                              f"more than {limit} requests of {which} at once (limits.{setting}); wait for an answer")
        for key in keys:
            self.in_flight[key] = self.in_flight.get(key, 0) + 1

    def leave(self, keys: tuple[str, ...]) -> None:
        for key in keys:
            left = self.in_flight.get(key, 1) - 1
            if left > 0:
                self.in_flight[key] = left
            else:
                self.in_flight.pop(key, None)

    def reserve(self, principal: str, size: int) -> None:
        """Take `size` more bytes of the principal's body budget; Refused (429) when it would overflow."""
        held = self.pending_bytes.get(principal, 0)
        if held + size > self.limits.max_pending_bytes:
            raise Refused(
                429,
                "too_many_requests",
                f"this caller's request bodies in progress exceed {self.limits.max_pending_bytes} bytes "
                "(limits.max_pending_bytes); wait for an answer",
            )
        self.pending_bytes[principal] = held + size

    def release(self, principal: str, size: int) -> None:
        left = self.pending_bytes.get(principal, 0) - size
        if left > 0:
            self.pending_bytes[principal] = left
        else:
            self.pending_bytes.pop(principal, None)

    def opened(self, session: str, principal: str) -> None:
        """Remember who opened an MCP session (the SDK answered its `initialize` with this id)."""
        self.owners[session] = principal
        self.owners.move_to_end(session)
        while len(self.owners) > self.limits.max_sessions:
            self.owners.popitem(last=False)

    def closed(self, session: str) -> None:
        self.owners.pop(session, None)

    async def read_body(
        self, receive: Callable[[], Awaitable[dict[str, Any]]], principal: str, declared: int | None
    ) -> tuple[bytes, int]:
        """The whole body, within `max_body_bytes`, the principal's byte budget and `body_timeout`.

        A declared Content-Length is reserved before anything is read, so a caller over its budget is refused at
        once. Returns (body, bytes reserved: `release` them once the request is answered). Refused: 413, 429, 408."""
        import asyncio

        limit = self.limits.max_body_bytes
        too_large = Refused(413, "too_large", f"request body larger than {limit} bytes (limits.max_body_bytes)")
        if declared is not None and declared > limit:
            raise too_large
        self.reserve(principal, declared or 0)
        reserved = declared or 0
        chunks: list[bytes] = []

        async def collect() -> None:
            nonlocal reserved
            received = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise Refused(400, "disconnected", "the client went away before sending the whole body")
                chunk = message.get("body", b"")
                received += len(chunk)
                if received > limit:
                    raise too_large
                if received > reserved:
                    self.reserve(principal, received - reserved)
                    reserved = received
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return

        try:
            async with asyncio.timeout(self.limits.body_timeout):  # no extra task per request, unlike wait_for
                await collect()
        except TimeoutError:
            self.release(principal, reserved)
            raise Refused(
                408, "timeout", f"the body did not arrive within {self.limits.body_timeout} s (limits.body_timeout)"
            ) from None
        except BaseException:
            self.release(principal, reserved)
            raise
        return b"".join(chunks), reserved
