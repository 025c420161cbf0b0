"""The gateway's ASGI app: one world behind the card, MCP, REST + OpenAPI and the JSON-RPC data plane.

    GET  /.well-known/agent-env.json   Environment Card (public; the caller's role's tools with a token)
    POST /mcp                          MCP, streamable HTTP (official SDK, low-level server)
    POST /agentenv                     JSON-RPC 2.0 data plane and extensions
    POST /envs/{env}/agentenv          one env's data plane (its child card's url)
    /clock/… /triggers/… /tools/… /trajectory /state /step   the extensions' REST routes (`rest_ext`)
    GET  /rest/tools                   the caller's tools
    POST /rest/tools/{name}            call a tool: body = arguments
    GET  /openapi.json                 OpenAPI 3.1 of the REST surface, one path per tool
    GET  /health                       liveness

A thin outer ASGI layer checks the Host header (token-less servers answer only loopback names, against
DNS rebinding) and refuses cross-site browser requests to a token-less world (`agentenv_runtime.web_guard`: a
foreign Origin, or a body that is not JSON), resolves the bearer token (and a trusted caller's `AgentEnv-Role`
header) to a role and puts it in the request scope, then hands `/mcp` to the SDK's session manager and
everything else to a small Starlette router. A request without a token on a server with tokens may read
only the public card.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from agentenv_runtime import (
    CARD_PATH,
    SAFE_METHODS,
    JsonRefused,
    World,
    cross_site_refusal,
    host_is_local,
    loads_request,
    replay_body,
)

from agentenv_gateway.admission import Admission, Refused
from agentenv_gateway.auth import (
    ANONYMOUS,
    CONTROL_ROLE,
    ROLE_HEADER,
    RoleRefused,
    acting_role,
    role_for,
)
from agentenv_gateway.core import ROLE_SCOPE_KEY, TOKEN_ROLE_SCOPE_KEY, BodyTooLarge, Gateway, dumps
from agentenv_gateway.limits import GatewayLimits
from agentenv_gateway.protocol import CHILD_PREFIX, MCP_PATH, REST_PATH, RPC_PATH, served_card
from agentenv_gateway.upstream import UpstreamConnection, UpstreamEnv, parse_upstream, upstream_env_class

OPENAPI_PATH = "/openapi.json"
STATUS_BY_CODE = {"invalid_arguments": 400, "forbidden": 403, "unknown_tool": 404, "tool_failed": 500}
"""REST status of a failed tool call by error code; every other code is a rule refusal (422)."""


def attach_upstreams(world: World, upstreams: Mapping[str, str] | Iterable[str]) -> list[UpstreamConnection]:
    """Connect each upstream MCP server and add it to `world` as an env (tools prefixed `NAME_` on collision)."""
    pairs = list(upstreams.items()) if isinstance(upstreams, Mapping) else [parse_upstream(s) for s in upstreams]
    connections: list[UpstreamConnection] = []
    try:
        for name, target in pairs:
            if name in world.envs:
                raise ValueError(f"--upstream {name}: the world already has an env named {name!r}; pick another")
            connection = UpstreamConnection(name, target)
            connections.append(connection)
            connection.start()
            env = upstream_env_class(connection, set(world.tools))()
            world.add_env(env)
    except BaseException:
        for connection in connections:
            connection.close()
        raise
    return connections


class GatewayApp:
    """The ASGI app. `gateway.world` is the served world; `close()` ends upstream sessions."""

    def __init__(self, gateway: Gateway, *, url: str | None, json_response: bool, upstreams: list[Any]) -> None:
        from starlette.applications import Starlette
        from starlette.routing import Route

        from agentenv_gateway.mcp_server import build_session_manager
        from agentenv_gateway.rest_ext import routes as extension_routes

        self.gateway = gateway
        self.world = gateway.world
        self.url = url.rstrip("/") if url else None
        self.upstreams = upstreams
        self.admission = Admission(gateway.limits)
        self.session_manager = build_session_manager(gateway, json_response=json_response)
        self._mcp = self.session_manager.handle_request
        self.router = Starlette(
            routes=[
                Route(CARD_PATH, self.card, methods=["GET"]),
                Route(RPC_PATH, self.rpc, methods=["POST"]),
                Route(CHILD_PREFIX + "/{env:str}" + RPC_PATH, self.env_rpc, methods=["POST"]),
                Route(f"{REST_PATH}/tools", self.rest_list, methods=["GET"]),
                Route(REST_PATH + "/tools/{name:str}", self.rest_call, methods=["POST"]),
                Route(OPENAPI_PATH, self.openapi, methods=["GET"]),
                Route("/health", self.health, methods=["GET"]),
                *extension_routes(gateway, lambda request: _read_body(request, gateway.limits.max_body_bytes)),
            ],
            lifespan=self._lifespan,
        )

    # ---- ASGI ----------------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        headers = dict(scope["headers"])
        path = scope["path"]
        if not self.gateway.auth:
            if not host_is_local(headers.get(b"host", b"").decode("latin-1")):
                await _send_json(send, 421, {"error": "this token-less world answers loopback host names only"})
                return
            refusal = cross_site_refusal(scope["method"], _text_headers(headers), has_body=_has_body(headers))
            if refusal is not None:
                await _send_json(send, refusal[0], _error_body(path, -32600, "cross_site", refusal[1]))
                return
        if sum(name == b"authorization" for name, _ in scope["headers"]) > 1:
            message = "more than one Authorization header: send exactly one (Authorization: Bearer TOKEN)"
            await _send_json(send, 400, _error_body(path, -32600, "invalid_request", message))
            return
        token_role = role_for(_authorization(headers) or None, self.gateway.by_token)
        if token_role is None or (token_role == ANONYMOUS and path != CARD_PATH):
            body = _unauthorized_body(path, rejected=token_role is None)
            await _send_json(send, 401, body, {"www-authenticate": 'Bearer realm="agentenv"'})
            return
        named = headers.get(ROLE_HEADER.lower().encode(), b"").decode("latin-1")
        try:
            role = acting_role(token_role, named, auth=self.gateway.auth, control_roles=self.gateway.control_roles,
                               known=self.world.rbac.roles)
        except RoleRefused as exc:
            await _send_json(send, 403, _refused_body(path, str(exc)))
            return
        scope[ROLE_SCOPE_KEY] = role
        scope[TOKEN_ROLE_SCOPE_KEY] = token_role
        is_mcp = path == MCP_PATH or path == MCP_PATH + "/"
        if scope["method"] not in SAFE_METHODS:
            await self._admitted(scope, receive, send, headers, is_mcp)
        elif is_mcp:  # the SSE stream of a session: long-lived, counted by no limit, served to its opener only
            scope["user"] = self._sdk_user(self.admission.principal(token_role, _authorization(headers)))
            await self._mcp(scope, receive, send)
        else:
            await self.router(scope, receive, send)

    async def _admitted(
        self, scope: dict[str, Any], receive: Any, send: Any, headers: dict[bytes, bytes], is_mcp: bool
    ) -> None:
        """Serve a request within the caller's limits (`agentenv_gateway.admission`), its body read first."""
        path = scope["path"]
        principal = self.admission.principal(scope[TOKEN_ROLE_SCOPE_KEY], _authorization(headers))
        raw_session = headers.get(b"mcp-session-id")
        session = raw_session.decode("latin-1") if raw_session else None
        keys = self.admission.keys(principal, session)
        reserved = 0
        try:
            self.admission.enter(keys)
        except Refused as exc:
            await _send_refusal(send, path, exc)
            return
        try:
            if scope["method"] not in SAFE_METHODS:
                length = headers.get(b"content-length")
                declared = int(length) if length is not None and length.strip().isdigit() else None
                try:
                    body, reserved = await self.admission.read_body(receive, principal, declared)
                except Refused as exc:
                    await _send_refusal(send, path, exc)
                    return
                receive = replay_body(body, receive)
            if is_mcp:
                scope["user"] = self._sdk_user(principal)
                await self._mcp(scope, receive, self._watching_sessions(send, principal, session, scope["method"]))
            else:
                await self.router(scope, receive, send)
        finally:
            self.admission.leave(keys)
            self.admission.release(principal, reserved)

    def _sdk_user(self, principal: str) -> Any:
        """The principal as the MCP SDK's authenticated user: the SDK then serves a session only to its opener."""
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        return AuthenticatedUser(AccessToken(token=principal, client_id=principal, scopes=[]))

    def _watching_sessions(self, send: Any, principal: str, session: str | None, method: str) -> Any:
        """`send` that records which principal the SDK opened a session for (and forgets an ended one)."""

        async def watched(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 300:
                if session is None:
                    for name, value in message.get("headers", []):
                        if name.lower() == b"mcp-session-id":
                            self.admission.opened(value.decode("latin-1"), principal)
                elif method == "DELETE":
                    self.admission.closed(session)
            await send(message)

        return watched

    @contextlib.asynccontextmanager
    async def _lifespan(self, _: Any) -> AsyncIterator[None]:
        async with self.session_manager.run():
            try:
                yield
            finally:
                self.close()

    def close(self) -> None:
        for connection in self.upstreams:
            connection.close()
        self.gateway.close()

    # ---- endpoints -----------------------------------------------------------------------------------
    def base_url(self, request: Any) -> str:
        if self.url:
            return self.url
        host = request.headers.get("host") or f"{request.url.hostname}:{request.url.port}"
        return f"{request.url.scheme}://{host}{request.scope.get('root_path', '')}"

    async def card(self, request: Any) -> Any:
        """Public: without a token (tokens on) the card lists no tools; with one, the role's view."""
        role = request.scope[ROLE_SCOPE_KEY]
        document = await self.gateway.run(served_card, self.gateway, None if role == ANONYMOUS else role)
        return _json_response(200, document)

    async def health(self, request: Any) -> Any:
        return _json_response(200, {"ok": True, "world": self.world.name})

    async def rpc(self, request: Any) -> Any:
        from agentenv_gateway.rpc import handle_rpc

        try:
            body = await _read_body(request, self.gateway.limits.max_body_bytes)
        except BodyTooLarge:
            return _json_response(413, _too_large_body(RPC_PATH, self.gateway.limits.max_body_bytes))
        reply = await handle_rpc(self.gateway, body, request.scope[ROLE_SCOPE_KEY])
        return _rpc_reply(reply)

    async def env_rpc(self, request: Any) -> Any:
        from agentenv_gateway.rpc import handle_env_rpc

        name = request.path_params["env"]
        if name not in self.world.envs:
            return _rest_error(404, "unknown_env", f"no env {name!r} here (envs: {', '.join(self.world.envs)})")
        try:
            body = await _read_body(request, self.gateway.limits.max_body_bytes)
        except BodyTooLarge:
            return _json_response(413, _too_large_body(RPC_PATH, self.gateway.limits.max_body_bytes))
        return _rpc_reply(await handle_env_rpc(self.gateway, body, request.scope[ROLE_SCOPE_KEY], name))

    async def rest_list(self, request: Any) -> Any:
        tools = await self.gateway.run(self.world.list_tools, request.scope[ROLE_SCOPE_KEY], inline_key="list")
        return _json_response(200, {"tools": tools})

    async def rest_call(self, request: Any) -> Any:
        try:
            body = await _read_body(request, self.gateway.limits.max_body_bytes)
        except BodyTooLarge:
            return _json_response(413, _too_large_body(REST_PATH, self.gateway.limits.max_body_bytes))
        try:
            arguments = loads_request(body) if body.strip() else {}
        except JsonRefused as exc:
            return _rest_error(400, "invalid_arguments" if "nest" in str(exc) else "invalid_json", f"the body: {exc}")
        if not isinstance(arguments, dict):
            return _rest_error(400, "invalid_arguments", "the body must be a JSON object of the tool's arguments")
        name = request.path_params["name"]
        role = request.scope[ROLE_SCOPE_KEY]
        outcome = await self.gateway.run(self.world.call, name, arguments, role, inline_key=self.gateway.tool_key(name))
        if outcome.error is None:
            return _json_response(200, {"ok": True, "result": outcome.result})
        return _json_response(STATUS_BY_CODE.get(outcome.error.get("code", ""), 422), outcome.to_dict())

    async def openapi(self, request: Any) -> Any:
        from agentenv_gateway.openapi import build_openapi

        tools = await self.gateway.run(self.world.list_tools, request.scope[ROLE_SCOPE_KEY])
        document = build_openapi(
            tools,
            title=f"agentenv world {self.world.name}",
            description=" + ".join(env.description or env.name for env in self.world.envs.values()),
            server_url=self.base_url(request),
            auth=self.gateway.auth,
        )
        return _json_response(200, document)


def build_app(
    world: World,
    tokens: Mapping[str, str] | None = None,
    upstreams: Mapping[str, str] | Sequence[str] | None = None,
    *,
    url: str | None = None,
    control_roles: Iterable[str] = (CONTROL_ROLE,),
    json_response: bool = True,
    reset_to: str = "loaded",
    limits: GatewayLimits | None = None,
) -> GatewayApp:
    """An ASGI app serving `world`.

    `tokens` maps role → bearer token (none: every caller is `default`; serve on loopback only).
    `upstreams` maps name → stdio command or streamable-HTTP URL of MCP servers to front (also accepted as
    `NAME=TARGET` strings); they are connected now, and closed when the app shuts down.
    `url` is the public base URL for the OpenAPI document (default: from each request's Host header); the
    card's URLs are relative. `reset_to` is what `data/reset` without `to` means: `loaded` (back to the last
    load) or `empty` (clear, the reference protocol's meaning).
    `json_response` (default) answers each MCP POST with one JSON body instead of an SSE stream: world tools
    are request/response and never message the client mid-call, and JSON halves the round trip.
    `limits` bound requests, sessions and arguments (default: `GatewayLimits()`, see `agentenv_gateway.limits`).
    The app can be served once: the MCP session manager it holds does not restart.
    """
    connections = attach_upstreams(world, upstreams) if upstreams else []
    try:
        world.check_roles()  # after the upstreams joined: a role may name their tools
    except BaseException:
        for connection in connections:
            connection.close()
        raise
    # An MCP server in the world (fronted here, or an env of agentenv-mcp) answers from another process.
    offload = bool(connections) or any(isinstance(env, UpstreamEnv) for env in world.envs.values())
    gateway = Gateway(
        world, tokens=tokens, control_roles=control_roles, limits=limits, offload=offload, reset_to=reset_to
    )
    return GatewayApp(gateway, url=url, json_response=json_response, upstreams=connections)


# ---- helpers -----------------------------------------------------------------------------------------
async def _read_body(request: Any, limit: int) -> bytes:
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _rpc_reply(reply: Any) -> Any:
    if reply is None:
        from starlette.responses import Response

        return Response(status_code=204)
    return _json_response(200, reply)


def _json_response(status: int, payload: Any) -> Any:
    from starlette.responses import Response

    return Response(dumps(payload), status_code=status, media_type="application/json")


def _rest_error(status: int, code: str, message: str) -> Any:
    return _json_response(status, {"ok": False, "error": {"code": code, "message": message}})


def _unauthorized_body(path: str, *, rejected: bool) -> dict[str, Any]:
    """A request without a token is told to send one; one whose token opens no role is told so (not "missing")."""
    message = (
        "the bearer token was rejected: it opens no role here; send Authorization: Bearer TOKEN with a token of "
        "your role (the server's --token or --role-file names them)"
        if rejected
        else "missing bearer token: send Authorization: Bearer TOKEN for your role"
    )
    return _error_body(path, -32001, "unauthorized", message)


def _refused_body(path: str, message: str) -> dict[str, Any]:
    return _error_body(path, -32003, "forbidden", message)


def _error_body(path: str, rpc_code: int, code: str, message: str) -> dict[str, Any]:
    if path.startswith((MCP_PATH, RPC_PATH)):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": rpc_code, "message": message}}
    return {"ok": False, "error": {"code": code, "message": message}}


def _too_large_body(path: str, limit: int) -> dict[str, Any]:
    message = f"request body larger than {limit} bytes (limits.max_body_bytes)"
    return _error_body(path, -32600, "too_large", message)


def _authorization(headers: dict[bytes, bytes]) -> str:
    return headers.get(b"authorization", b"").decode("latin-1")


def _text_headers(headers: dict[bytes, bytes]) -> dict[str, str]:
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in headers.items()}


def _has_body(headers: dict[bytes, bytes]) -> bool:
    length = headers.get(b"content-length")
    return b"transfer-encoding" in headers or (length is not None and length.strip() not in (b"", b"0"))


async def _send_refusal(send: Any, path: str, refusal: Refused) -> None:
    rpc_code = -32600 if refusal.status in (400, 413) else -32000
    extra = {"connection": "close"}  # its body may be unread: end the connection, drop what it still sends
    if refusal.status == 429:
        extra["retry-after"] = "1"
    await _send_json(send, refusal.status, _error_body(path, rpc_code, refusal.code, refusal.message), extra)


async def _send_json(send: Any, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
    body = dumps(payload)
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})
