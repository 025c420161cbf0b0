"""The world's tools as an MCP server for a harness: the served world's `/mcp`, with the role's own token.

An agent kind receives a `ToolAccess`. When that is already a served world's MCP client (`McpToolAccess`:
the world runs behind a gateway), the harness gets the same URL and bearer token. When the world runs in
this process (`WorldToolAccess`), it is served here through the gateway on a loopback port with a fresh
token for the agent's role only, so the harness sees exactly the role's tools, its calls are checked by
RBAC and land in the world trajectory with the role, as for any agent.
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass
from typing import Any

from agentenv.contracts import ToolAccess

from agentenv_harness.errors import HarnessError


@dataclass(frozen=True)
class McpEndpoint:
    """Where the harness reaches the world: the streamable-HTTP MCP URL, headers to send, the role."""

    url: str
    headers: dict[str, str]
    role: str


class WorldServer:
    """Serves the world behind one `ToolAccess` for as long as the agent lives (`close()` stops it)."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._endpoint: McpEndpoint | None = None

    def endpoint(self, tools: ToolAccess) -> McpEndpoint:
        if self._endpoint is None:
            self._endpoint = self._open(tools)
        return self._endpoint

    def _open(self, tools: ToolAccess) -> McpEndpoint:
        served: Any = tools
        role = str(getattr(served, "role", "default"))
        connection = getattr(served, "connection", None)
        if hasattr(served, "url") and connection is not None:  # a served world's MCP client
            return McpEndpoint(str(connection.target), dict(getattr(served, "headers", {})), role)
        world = getattr(served, "world", None)
        if world is None:
            raise HarnessError(
                f"the world's tools came as a {type(tools).__name__}, which this harness cannot serve over MCP; "
                "deploy the world with deploy_env (in process or served)"
            )
        from agentenv_gateway.api import build_app, serve_in_thread

        token = secrets.token_urlsafe(24)
        app = build_app(world, tokens={role: token})
        url = self._stack.enter_context(serve_in_thread(app))
        return McpEndpoint(f"{url}/mcp", {"Authorization": f"Bearer {token}"}, role)

    def close(self) -> None:
        self._endpoint = None
        self._stack.close()
