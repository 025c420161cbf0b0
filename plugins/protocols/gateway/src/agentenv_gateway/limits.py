"""The gateway's bounds: what one request, one session and one argument may cost a served world.

Without them any role could stall and balloon a world (one 0.9 MB batch of 8,500 `tools/call`s blocked
every client, `/health` included, for seconds). Each bound is a setting with a safe default, read from
`[plugins.agentenv-gateway.limits]` in the config file:

    [plugins.agentenv-gateway.limits]
    max_body_bytes = 1048576    # request body; larger → 413
    max_batch = 32              # JSON-RPC requests in one batch for a non-control role
    max_batch_control = 1000    # the same for control roles (the data plane loads and resets)
    max_depth = 32              # nesting of one tool call's arguments (and of a request, plus its envelope)
    max_string = 65536          # characters in one argument string
    max_in_flight = 16          # concurrent requests of one MCP session its caller opened; → 429
    max_in_flight_principal = 256   # concurrent requests of one caller (its token; all of this machine without)
    max_pending_bytes = 8388608     # request-body bytes one caller may have in progress; → 429
    body_timeout = 30.0         # seconds to receive a whole request body; → 408
    header_timeout = 10.0       # seconds to receive a request's head (its headers); the connection is closed
    max_waiting_headers = 0     # connections waiting for a head before the longest-waiting is closed (0: from the
                                # descriptor limit, a quarter of it: 52 at 256, 244 at 1,024)
    max_sessions = 1024         # open MCP sessions; → 503 at the limit
    session_idle_timeout = 600.0    # seconds without a request before an MCP session is closed
    world_thread = true         # world calls on a dedicated thread, off the event loop; false: inline on the loop
"""

from __future__ import annotations

from typing import Any

from agentenv_runtime import ArgumentLimits, HeaderWaits
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

DIST = "agentenv-gateway"
ENVELOPE_DEPTH = 4
"""Levels a JSON-RPC envelope adds above the arguments (batch, request, params, arguments)."""


class LimitsError(ValueError):
    """A `[plugins.agentenv-gateway.limits]` value that cannot work; the message names the field."""


class GatewayLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_body_bytes: int = Field(1024 * 1024, ge=1024)
    max_batch: int = Field(32, ge=1)
    max_batch_control: int = Field(1000, ge=1)
    max_depth: int = Field(32, ge=2, le=1000)
    max_string: int = Field(65536, ge=1)
    max_in_flight: int = Field(16, ge=1)
    max_in_flight_principal: int = Field(256, ge=1)
    max_pending_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    body_timeout: float = Field(30.0, gt=0, le=3600)
    header_timeout: float = Field(10.0, gt=0, le=3600)
    max_waiting_headers: int = Field(0, ge=0)
    max_sessions: int = Field(1024, ge=1)
    session_idle_timeout: float = Field(600.0, gt=0)
    world_thread: bool = True
    """Run every world call on a dedicated thread, off the event loop (always with upstreams); false runs them
    inline on the loop, bounded by the batch chunking only."""

    @model_validator(mode="after")
    def _budget_holds_a_body(self) -> GatewayLimits:
        if self.max_pending_bytes < self.max_body_bytes:
            raise ValueError("max_pending_bytes must be at least max_body_bytes (one whole body)")
        return self

    @property
    def arguments(self) -> ArgumentLimits:
        return ArgumentLimits(max_depth=self.max_depth, max_string=self.max_string)

    @property
    def request_depth(self) -> int:
        return self.max_depth + ENVELOPE_DEPTH

    def header_waits(self) -> HeaderWaits:
        """The bounds on connections still sending their request head (`agentenv_runtime.slow_clients`)."""
        if self.max_waiting_headers:
            return HeaderWaits(header_timeout=self.header_timeout, max_waiting=self.max_waiting_headers)
        return HeaderWaits(header_timeout=self.header_timeout)

    def batch_limit(self, control: bool) -> int:
        return self.max_batch_control if control else self.max_batch

    @classmethod
    def from_settings(cls, settings: Any, *, where: str = f"[plugins.{DIST}.limits]") -> GatewayLimits:
        """Validate the settings table; a LimitsError names the field and the fix."""
        if settings is None:
            return cls()
        if not isinstance(settings, dict):
            raise LimitsError(f"{where} must be a table of limits (max_batch = 32, ...)")
        try:
            return cls.model_validate(settings)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            field = ".".join(str(part) for part in first["loc"])
            fix = "fix it or remove it for the default"
            raise LimitsError(f"{where}: field `{field}`: {first['msg']}; {fix}") from None

    @classmethod
    def from_config(cls, config: Any) -> GatewayLimits:
        source = f"{config.file}: " if getattr(config, "file", None) else ""
        return cls.from_settings(config.plugin_settings(DIST).get("limits"), where=f"{source}[plugins.{DIST}.limits]")


def too_deep(value: Any, limit: int) -> bool:
    """Whether objects/lists in `value` nest deeper than `limit` (iterative: deep values cannot overflow)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return False
