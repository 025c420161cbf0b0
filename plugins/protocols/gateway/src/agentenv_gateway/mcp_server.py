"""MCP over streamable HTTP, on the official SDK's low-level server.

The low-level `Server` takes `on_list_tools` / `on_call_tool` handlers, so the tool list is computed per
request for the caller's role instead of being registered once. The SDK hands each handler a
`ServerRequestContext` whose `request` is the Starlette request of the HTTP exchange (both the
handshake era and the 2026-07-28 single-exchange era attach it), and the outer ASGI layer has already
put the caller's role in that request's scope.

A call may also name its role in `_meta["agentenv.io/role"]` (the reference gateway stamps it on every
call it forwards); it is honoured by the `AgentEnv-Role` rules (`auth.acting_role`): only from a control
token or on a token-less loopback server. A refused one answers as a failed call, changing nothing.
"""

from __future__ import annotations

from typing import Any

from agentenv_runtime import DEFAULT_ROLE

from agentenv_gateway import __version__
from agentenv_gateway.auth import acting_role
from agentenv_gateway.core import ROLE_SCOPE_KEY, TOKEN_ROLE_SCOPE_KEY, Gateway, dumps

ROLE_META_KEY = "agentenv.io/role"
"""The reference gateway's per-call role field in an MCP request's `_meta`."""


def _scope(ctx: Any) -> dict[str, Any]:
    return getattr(getattr(ctx, "request", None), "scope", None) or {}


def _role(ctx: Any, params: Any, gw: Gateway) -> str:
    """The request's acting role, or the one the call names in `_meta` when the caller may name one."""
    scope = _scope(ctx)
    role = str(scope.get(ROLE_SCOPE_KEY, DEFAULT_ROLE))
    named = (getattr(params, "meta", None) or {}).get(ROLE_META_KEY)
    if not isinstance(named, str) or not named.strip():
        return role
    token_role = str(scope.get(TOKEN_ROLE_SCOPE_KEY, role))
    return acting_role(token_role, named, auth=gw.auth, control_roles=gw.control_roles, known=gw.world.rbac.roles)


def build_mcp_server(gw: Gateway) -> Any:
    """The low-level MCP server of the gateway's world."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    from agentenv_gateway.auth import RoleRefused

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        cursor = getattr(params, "cursor", None)
        if cursor is not None:  # one page holds every tool: no cursor of ours exists, so this one is invalid
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, f"invalid cursor {cursor[:64]!r}: tools/list has a single page here")
        try:
            role = _role(ctx, params, gw)
        except RoleRefused:  # a listing cannot fail: it shows the request's own role's tools
            role = str(_scope(ctx).get(ROLE_SCOPE_KEY, DEFAULT_ROLE))
        listed = await gw.run(gw.world.list_tools, role, inline_key="list")
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t["name"], description=t.get("description") or None, input_schema=t["inputSchema"])
                for t in listed
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            role = _role(ctx, params, gw)
        except RoleRefused as exc:
            error = {"code": "forbidden", "message": str(exc)}
            text = [types.TextContent(text=dumps(error).decode())]
            return types.CallToolResult(content=text, structured_content={"error": error}, is_error=True)
        arguments = params.arguments or {}
        outcome = await gw.run(gw.world.call, params.name, arguments, role, inline_key=gw.tool_key(params.name))
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
        max_sessions=gw.limits.max_sessions,
        session_idle_timeout=gw.limits.session_idle_timeout,
    )
