"""The OpenEnv wire format over an agentenv task.

HTTP (Starlette): `POST /reset`, `POST /step` (`{"action": {...}}`), `GET /state` act on one shared HTTP session
(OpenEnv's own HTTP endpoints are meant for quick checks too); `GET /health`, `/schema`, `/metadata`. WebSocket
`/ws`: one session per connection, messages `{"type": "reset"|"step"|"state"|"close", "data": {...}}`, answered
with `{"type": "observation"|"state"|"error", "data": {...}}`, as OpenEnv's clients expect.

OpenEnv's MCP mode (`agentenv_openenv.mcp`): `list_tools` / `call_tool` actions on any session, `POST /mcp`
(JSON-RPC) and `{"type": "mcp"}` messages on `/ws`. `GET /openapi.json` describes the HTTP routes, which is how
`openenv validate --url` tells the server's mode.

`agentenv openenv serve` answers `/ws` on the connection itself (`agentenv_openenv.socket`); this app's own
`/ws`, on plain ASGI messages, is what another ASGI server would use. Both answer through `Session.answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Coroutine
from contextlib import asynccontextmanager
from typing import Any

from agentenv_rl.api import Action, EpisodeError, Template
from agentenv_runtime import JsonRefused, loads_request, origin_refusal
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentenv_openenv import __version__
from agentenv_openenv.mcp import PARSE_ERROR, McpEndpoint
from agentenv_openenv.sessions import CLOSE_TIMEOUT, CapacityError, Session, SessionPool, error

OBSERVATION_SCHEMA = {
    "type": "object",
    "description": "prompt (after reset: the task's prompt and the role's tools), tool_result (ok, result or "
    "error) or final (the answer; info holds score, passed, verifiers and trajectory_digest)",
    "properties": {
        "type": {"enum": ["prompt", "tool_result", "final"]},
        "prompt": {"type": "string"},
        "tools": {"type": "array", "items": {"type": "object"}},
        "tool": {"type": "string"},
        "ok": {"type": "boolean"},
        "result": {},
        "error": {"type": "object"},
        "answer": {"type": "string"},
        "truncated": {"type": "boolean"},
        "info": {"type": "object"},
    },
    "required": ["type"],
}
STATE_SCHEMA = {
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer", "minimum": 0},
        "done": {"type": "boolean"},
        "seed": {"type": "integer"},
        "task": {"type": "string"},
        "state_digest": {"type": "string"},
    },
}


OPENENV_HTTP_VERSION = "1.0.0"
"""The OpenEnv HTTP API these routes implement (`openenv validate` reads profile `openenv-http/1.x` from it)."""
ROUTES = {
    "/reset": ("post", "Start a new episode (body: seed?, episode_id?) on the shared HTTP session"),
    "/step": ("post", 'Step the shared HTTP session: {"action": ACTION}'),
    "/state": ("get", "The shared HTTP session's state"),
    "/health": ("get", "Healthy once the task's start state is ready"),
    "/schema": ("get", "JSON Schemas of the action, observation and state"),
    "/metadata": ("get", "Name, description and version of the environment"),
    "/mcp": ("post", "MCP JSON-RPC: tools/list, tools/call, openenv/session/create, openenv/session/close"),
}


def openapi_document(template: Template) -> dict[str, Any]:
    """A small OpenAPI 3.1 document of the HTTP routes (`/ws` is a WebSocket, outside OpenAPI)."""
    paths = {
        path: {method: {"summary": summary, "responses": {"200": {"description": "OK"}}}}
        for path, (method, summary) in ROUTES.items()
    }
    title = f"{template.bundle}:{template.task.name}" if template.bundle else template.task.name
    info = {"title": title, "version": OPENENV_HTTP_VERSION, "x-agentenv-openenv-version": __version__}
    return {"openapi": "3.1.0", "info": info, "paths": paths}


def build_app(template: Template, max_sessions: int) -> OpenEnvApp:
    """The app; the task's setup for its default seed runs before it answers healthy."""
    pool = SessionPool(template, max_sessions)
    pool.mcp = McpEndpoint(pool)
    pool.prepare()
    shared: list[Session] = []

    async def http_session() -> Session:
        if not shared:
            shared.append(Session(pool, (await pool.base(template.default_seed())).fork()))
        return shared[0]

    async def body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        data = loads_request(raw) if raw.strip() else {}
        if not isinstance(data, dict):
            raise EpisodeError("the request body is a JSON object")
        return data

    async def reset(request: Request) -> JSONResponse:
        try:
            return JSONResponse(await (await http_session()).reset(await body(request)))
        except (ValueError, EpisodeError) as exc:
            return JSONResponse({"detail": str(exc)}, status_code=422)

    async def step(request: Request) -> JSONResponse:
        try:
            data = await body(request)
            if not isinstance(data.get("action"), dict):
                raise EpisodeError('the body needs an "action" object: {"tool", "arguments"} or {"answer"}')
            return JSONResponse(await (await http_session()).step(data["action"]))
        except (ValueError, EpisodeError) as exc:
            return JSONResponse({"detail": str(exc)}, status_code=422)

    async def state(request: Request) -> JSONResponse:
        return JSONResponse((await http_session()).state())

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    async def schema(request: Request) -> JSONResponse:
        return JSONResponse(
            {"action": Action.model_json_schema(), "observation": OBSERVATION_SCHEMA, "state": STATE_SCHEMA}
        )

    async def mcp(request: Request) -> JSONResponse:
        try:
            message = loads_request(await request.body(), strict=True)
        except JsonRefused as exc:  # deep nesting, huge integers, NaN, bad UTF-8: a parse error, never a 500
            return JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": f"parse error: {exc}"}}
            )
        return JSONResponse(await pool.mcp_actions().handle(message))

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(template))

    async def metadata(request: Request) -> JSONResponse:
        task = template.task
        return JSONResponse(
            {
                "name": f"{template.bundle}:{task.name}" if template.bundle else task.name,
                "description": task.description or task.name,
                "readme_content": None,
                "version": __version__,
                "author": None,
                "documentation_url": None,
            }
        )

    async def ws(scope: dict[str, Any], receive: Any, send: Any) -> None:
        """One WebSocket session on plain ASGI messages: accept, answer each text message in turn, close.
        An opening from another site's page is refused (403): the server has no tokens."""
        if (await receive())["type"] != "websocket.connect":
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        if origin_refusal(headers) is not None:
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "websocket.accept"})
        try:
            session = pool.open()
        except CapacityError as exc:  # as `socket.SessionSocket._refuse`: the close follows the client's message
            await send({"type": "websocket.send", "text": json.dumps(exc.reply())})
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT):
                    if (await receive())["type"] == "websocket.disconnect":
                        return
            await send({"type": "websocket.close", "code": 1000})
            return
        try:
            while True:
                event = await receive()
                if event["type"] != "websocket.receive":
                    return  # websocket.disconnect: the client went away
                raw = event.get("text")  # a text frame's UTF-8 the server checked (invalid: it closes with 1007)
                if raw is None:
                    try:
                        raw = (event.get("bytes") or b"").decode("utf-8")
                    except UnicodeDecodeError as exc:  # refused, never read with U+FFFD in place of its bytes
                        message = f"Invalid JSON: the binary message is not UTF-8 text (byte {exc.start})"
                        await send({"type": "websocket.send", "text": json.dumps(error(message, "INVALID_JSON"))})
                        continue
                reply = session.answer(raw)
                if isinstance(reply, Coroutine):
                    reply = await reply
                if reply is None:
                    await send({"type": "websocket.close", "code": 1000})
                    return
                await send({"type": "websocket.send", "text": reply if isinstance(reply, str) else json.dumps(reply)})
        finally:
            pool.close(session)

    async def gone(request: Request, exc: Exception) -> Response:
        """A client that went away mid-body (`ClientDisconnect` from `request.body()`): nobody reads the answer,
        and nothing is logged (it was a traceback per request). 400, as the gateway's admission layer answers."""
        return Response(status_code=400)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        try:
            yield
        finally:
            pool.shutdown()

    routes = [
        Route("/reset", reset, methods=["POST"]),
        Route("/step", step, methods=["POST"]),
        Route("/state", state, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/schema", schema, methods=["GET"]),
        Route("/metadata", metadata, methods=["GET"]),
        Route("/mcp", mcp, methods=["POST"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    http = Starlette(routes=routes, lifespan=lifespan, exception_handlers={ClientDisconnect: gone})
    return OpenEnvApp(pool, http, ws)


class OpenEnvApp:
    """The ASGI app: `/ws` sessions on plain ASGI messages, everything else (HTTP, lifespan) on Starlette.
    `pool` is its session pool, which `agentenv_openenv.socket` serves `/ws` from too."""

    def __init__(self, pool: SessionPool, http_app: Any, ws: Any) -> None:
        self.pool, self._http, self._ws = pool, http_app, ws

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            await self._ws(scope, receive, send)
        else:
            await self._http(scope, receive, send)  # HTTP, lifespan, and other WebSocket paths (refused there)
