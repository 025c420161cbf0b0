"""MCP over streamable HTTP, on the official SDK's low-level server.

The low-level `Server` takes `on_list_tools` / `on_call_tool` handlers, so the tool list is computed per
request for the caller's role instead of being registered once. The SDK hands each handler a
`ServerRequestContext` whose `request` is the Starlette request of the HTTP exchange (both the
handshake era and the 2026-07-28 single-exchange era attach it), and the outer ASGI layer has already
put the caller's role in that request's scope.
"""

from __future__ import annotations

from typing import Any

from agentenv_runtime.world.rbac import DEFAULT_ROLE

from agentenv_gateway import __version__
from agentenv_gateway.core import ROLE_SCOPE_KEY, Gateway, dumps


def _role(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None) or {}
    return str(scope.get(ROLE_SCOPE_KEY, DEFAULT_ROLE))


def build_mcp_server(gw: Gateway) -> Any:
    """The low-level MCP server of the gateway's world."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        listed = await gw.run(gw.world.list_tools, _role(ctx))
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t["name"], description=t.get("description") or None, input_schema=t["inputSchema"])
                for t in listed
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        outcome = await gw.run(gw.world.call, params.name, params.arguments or {}, _role(ctx))
        if outcome.error is not None:
            return types.CallToolResult(
                content=[types.TextContent(text=dumps(outcome.error).decode())],
                structured_content={"error": outcome.error},
                is_error=True,
            )
        result = outcome.result
        return types.CallToolResult(
            content=[types.TextContent(text=dumps(result).decode())],
            # Before 2026-07-28 structured content must be an object; other values are wrapped.
            structured_content=result if isinstance(result, dict) else {"result": result},
        )

    return Server(
        gw.world.name,
        version=__version__,
        description=f"agentenv world {gw.world.name}",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def build_session_manager(gw: Gateway, *, json_response: bool = True) -> Any:
    """The SDK's streamable HTTP session manager; its `run()` must wrap the app's lifespan."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    return StreamableHTTPSessionManager(
        app=build_mcp_server(gw),
        json_response=json_response,
        max_request_body_size=gw.limits.max_body_bytes,
    )
