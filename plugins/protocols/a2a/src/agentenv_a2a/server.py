"""Serve any agentenv agent as an A2A agent: agent card, SendMessage / SendStreamingMessage, GetTask —
and the same agent to A2A 0.3 clients: the 0.3 card at `/.well-known/agent.json` (with its `url`) and
`message/send`, `tasks/get`, … at `/a2a` (and at `/`, beside 1.0), through the SDK's 0.3 compatibility layer.

`build_a2a_app` wires an `AgentKind` and the `ToolAccess` it acts through into the a2a-sdk server
pieces (`DefaultRequestHandler`, `create_agent_card_routes`, `create_jsonrpc_routes`) on a Starlette
app. Each incoming message becomes one task: the agent's `respond(text, tools)` runs, its answer is
the task's `response` artifact (a text part, plus a data part when the answer is structured) and the
task completes; an exception in the agent fails the task with the error as the status message.

`serve_a2a` runs such an app with uvicorn in a background thread, for tests and for the CLI.

The SDK, Starlette and uvicorn are imported inside the functions that use them.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from agentenv.contracts import AgentKind, ToolAccess

from agentenv_a2a.config import EXTENSION_PATH, EXTENSION_URI, METHODS

if TYPE_CHECKING:
    from a2a.server.agent_execution import AgentExecutor
    from a2a.types.a2a_pb2 import AgentCard

    from agentenv_a2a.served import ServedAgent

RPC_PATH = "/"
CARD_PATH = "/.well-known/agent-card.json"
PROTOCOL_VERSION = "1.0"
LEGACY_RPC_PATH = "/a2a"
"""Where A2A 0.3 clients find JSON-RPC (`message/send`, `tasks/get`): the reference implementation's path."""
LEGACY_CARD_PATH = "/.well-known/agent.json"
LEGACY_PROTOCOL_VERSION = "0.3.0"
IO_MODES = ["text/plain", "application/json"]

# The base URL a request came in on; lets the card name the right address when the app was built
# without a public `url` (typical with port 0, where the port is known only once the server is bound).
_request_base: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentenv_a2a_request_base", default=None)


class A2aServeError(RuntimeError):
    """The A2A server could not start (port in use, bad host, app failed at start-up)."""


def build_a2a_app(
    agent: AgentKind[Any],
    tools: ToolAccess,
    *,
    name: str,
    description: str,
    url: str | None = None,
    version: str = "0.1.0",
    install: dict[str, Any] | None = None,
    make_agent: Callable[[], AgentKind[Any]] | None = None,
    max_tasks: int | None = None,
    task_ttl: float | None = None,
) -> Any:
    """An ASGI app serving `agent` over A2A (JSON-RPC binding, protocol 1.0, streaming), with the
    agentenv agent-config extension (`urn:agentenv:agent-config/v1`) at `/agentenv`.

    `url` is the public base URL the card advertises (JSON-RPC lives at its root); leave it None to
    advertise whatever address each card request came in on. `install` is the install declaration the
    card carries (default: the agent's spec file and a check, see `served.default_install`);
    `make_agent` makes a fresh instance of the agent for `state/load` and `state/reset` (default: the
    agent's class with its settings). The `ServedAgent` is available as `app.state.served`.

    Tasks are kept in a `retention.BoundedTaskStore` (`app.state.task_store`): at most `max_tasks` (default
    1000), a finished one for `task_ttl` seconds (default 3600); `serve_a2a` can set both too.
    """
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    from agentenv_a2a.retention import BoundedTaskStore
    from agentenv_a2a.served import ServedAgent

    served = ServedAgent(agent, tools, name=name, description=description, make_agent=make_agent, install=install)
    tasks = BoundedTaskStore()
    limit_tasks(tasks, served, max_tasks=max_tasks, task_ttl=task_ttl)
    card = agent_card(agent, name=name, description=description, url=url or "http://localhost/", version=version)
    handler = DefaultRequestHandler(
        agent_executor=make_executor(served),
        task_store=tasks,
        agent_card=card,
    )

    async def current_card(served_card: AgentCard) -> AgentCard:
        """The card as configured now: name, description, skills, and addresses for this request."""
        from a2a.types.a2a_pb2 import AgentCard as CardType

        base = url or _request_base.get() or "http://localhost/"
        fitted = CardType()
        fitted.CopyFrom(served_card)
        if url is None and _request_base.get() is not None:
            for interface in fitted.supported_interfaces:
                legacy = interface.protocol_version == LEGACY_PROTOCOL_VERSION
                interface.url = base.rstrip("/") + LEGACY_RPC_PATH if legacy else base
        apply_config(fitted, served, endpoint=EXTENSION_PATH)  # a path: the reference's clients append it to the base
        return fitted

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        await handler.aclose()  # drain running tasks so shutdown leaves nothing behind
        served.close()

    async def legacy_card(request: Any) -> Any:
        """The 0.3 card (top-level `url`, `protocolVersion` 0.3.0), converted by the SDK from the 1.0 one."""
        from a2a.compat.v0_3.conversions import to_compat_agent_card
        from starlette.responses import JSONResponse

        compat = to_compat_agent_card(await current_card(card))
        return JSONResponse(compat.model_dump(mode="json", by_alias=True, exclude_none=True))

    routes = [
        *create_agent_card_routes(card, card_modifier=current_card, card_url=CARD_PATH),
        Route(LEGACY_CARD_PATH, legacy_card, methods=["GET"]),
        Route(EXTENSION_PATH, extension_endpoint(served), methods=["GET", "POST"]),
        *create_jsonrpc_routes(handler, rpc_url=LEGACY_RPC_PATH, enable_v0_3_compat=True),
        *create_jsonrpc_routes(handler, rpc_url=RPC_PATH, enable_v0_3_compat=True),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(_RequestBase)], lifespan=lifespan)
    app.state.served = served
    app.state.task_store = tasks
    return app


def limit_tasks(store: Any, served: Any, *, max_tasks: int | None, task_ttl: float | None) -> None:
    """Apply the retention limits given (None keeps the current one) to the task store and the served agent's
    task records (`trajectory/get`), which follow the same cap; ValueError names a limit that cannot work."""
    store.limit(max_tasks=max_tasks, task_ttl=task_ttl)
    served.max_records = store.max_tasks


def apply_config(card: AgentCard, served: ServedAgent, *, endpoint: str) -> None:
    """Put the served agent's current configuration on `card`: identity, configured skills, the extension."""
    from a2a.types.a2a_pb2 import AgentExtension, AgentSkill
    from google.protobuf.struct_pb2 import Struct

    config = served.config
    card.name = config.name
    card.description = config.description
    for skill in config.skills:
        card.skills.append(
            AgentSkill(
                id=f"skill:{skill.name}",
                name=skill.name,
                description=skill.description or skill.text or skill.name,
                tags=["agentenv", "configured"],
            )
        )
    params = Struct()
    params.update(served.extension_params(endpoint))
    card.capabilities.extensions.append(
        AgentExtension(
            uri=EXTENSION_URI,
            description="agentenv agent configuration at params.endpoint: JSON-RPC 2.0 (params.rpc: config/get|set, "
            "state/save|load|reset, trajectory/get) and REST set/get (params.methods); params.install is the "
            "install declaration.",
            required=False,
            params=params,
        )
    )


def extension_endpoint(served: ServedAgent) -> Callable[[Any], Awaitable[Any]]:
    """The Starlette endpoint answering the extension's JSON-RPC 2.0 methods, and the reference implementation's
    REST `set` / `get` (a body without a JSON-RPC envelope, or a GET) that its `prompt_agent` step sends."""
    from agentenv_runtime import JsonRefused, loads_request
    from starlette.responses import JSONResponse

    from agentenv_a2a.served import ConfigRefused

    def reply(request_id: Any, *, result: Any = None, code: int = 0, message: str = "") -> Any:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if code:
            body["error"] = {"code": code, "message": message}
        else:
            body["result"] = result
        return JSONResponse(body)

    async def rest(request: Any, call: Any) -> Any:
        """The reference's REST operations: `GET` reads the config back, `POST` a fields object sets it."""
        try:
            if request.method == "GET":
                return JSONResponse(await asyncio.to_thread(served.rest_get))
            return JSONResponse(await asyncio.to_thread(served.rest_set, call))
        except ConfigRefused as exc:
            return JSONResponse({"detail": str(exc)}, status_code=400)

    async def endpoint(request: Any) -> Any:
        if request.method == "GET":
            return await rest(request, None)
        try:
            call = loads_request(await request.body())
        except JsonRefused as exc:
            return reply(None, code=-32700, message=f"parse error: {exc}")
        if isinstance(call, dict) and "jsonrpc" not in call and "method" not in call:
            return await rest(request, call)  # no JSON-RPC envelope: the reference's `set`
        if not isinstance(call, dict) or not isinstance(call.get("method"), str):
            return reply(None, code=-32600, message="invalid request: send a JSON-RPC 2.0 object with `method`")
        request_id, params = call.get("id"), call.get("params") or {}
        if not isinstance(params, dict):
            return reply(request_id, code=-32602, message="params must be an object")
        try:
            result = await asyncio.to_thread(served.handle, call["method"], params)
        except LookupError:
            known = ", ".join(METHODS)
            return reply(request_id, code=-32601, message=f"method not found: {call['method']!r} (methods: {known})")
        except ConfigRefused as exc:
            return reply(request_id, code=-32602, message=str(exc))
        return reply(request_id, result=result)

    return endpoint


def agent_card(agent: AgentKind[Any], *, name: str, description: str, url: str, version: str = "0.1.0") -> AgentCard:
    """The A2A card of a served agentenv agent: JSON-RPC (1.0 at `url`, 0.3 at `url`/a2a), streaming, one skill."""
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    return AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION),
            AgentInterface(
                url=url.rstrip("/") + LEGACY_RPC_PATH,
                protocol_binding="JSONRPC",
                protocol_version=LEGACY_PROTOCOL_VERSION,
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=IO_MODES,
        default_output_modes=IO_MODES,
        skills=[
            AgentSkill(
                id=agent.name or "agent",
                name=name,
                description=description or agent.description or f"agentenv agent of kind {agent.name!r}",
                tags=["agentenv", agent.name],
                input_modes=IO_MODES,
                output_modes=IO_MODES,
            )
        ],
    )


def make_executor(served: ServedAgent) -> AgentExecutor:
    """An a2a-sdk `AgentExecutor` running the served agent once per incoming message.

    Prompts are answered one at a time (the served agent's lock), because an agent instance and the
    world it acts in are one conversation, not a pool; each runs in a worker thread.
    """
    from a2a.helpers import new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater

    from agentenv_a2a.parts import parts_from_response

    class AgentenvExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            task = context.current_task
            if task is None:
                assert context.message is not None
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            prompt = _prompt_text(context)
            try:
                response = await asyncio.to_thread(served.respond, prompt, task_id=task.id, context_id=task.context_id)
            except Exception as exc:  # the agent's failure is the task's failure, reported to the caller
                detail = f"agent {served.agent.name!r} failed: {type(exc).__name__}: {exc}"
                await updater.failed(updater.new_agent_message([new_text_part(detail)]))
                return
            parts = parts_from_response(response)
            await updater.add_artifact(parts, name="response")
            await updater.complete(updater.new_agent_message(parts))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            if context.task_id and context.context_id:
                await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    return AgentenvExecutor()


def _prompt_text(context: Any) -> str:
    """The user's text parts, then data parts as JSON lines, then a line per file part (agents take one
    prompt string): `[attached file NAME (MEDIA TYPE, N bytes)]`, or `… at URL` for a file by reference."""
    from google.protobuf.json_format import MessageToDict

    lines = [str(context.get_user_input())]
    for part in context.message.parts if context.message else []:
        if part.HasField("data"):
            lines.append(json.dumps(MessageToDict(part.data), sort_keys=True))
        elif part.HasField("raw"):
            media = part.media_type or "application/octet-stream"
            lines.append(f"[attached file {part.filename or 'unnamed'} ({media}, {len(part.raw)} bytes)]")
        elif part.HasField("url"):
            media = part.media_type or "unknown type"
            lines.append(f"[attached file {part.filename or 'unnamed'} ({media}) at {part.url}]")
    return "\n".join(line for line in lines if line) if len(lines) > 1 else lines[0]


class _RequestBase:
    """ASGI middleware: remember the base URL of the current HTTP request (see `_request_base`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request

        refusal = await _refusal(scope, receive)
        if isinstance(refusal, tuple):
            status, message = refusal
            from starlette.responses import JSONResponse

            body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600 if status != 400 else -32700,
                                                             "message": message}}
            await JSONResponse(body, status_code=status, headers={"connection": "close"})(scope, receive, send)
            return
        if refusal is not None:
            from agentenv_runtime import replay_body

            receive = replay_body(refusal, receive)
        token = _request_base.set(str(Request(scope).base_url))
        try:
            await self.app(scope, receive, send)
        finally:
            _request_base.reset(token)


MAX_BODY_BYTES = 1024 * 1024
"""The largest request body the A2A server reads (a message and its parts); larger → 413."""


async def _refusal(scope: Any, receive: Any) -> tuple[int, str] | bytes | None:
    """Why a request must be refused (status, message); else its body, read and checked as JSON (None: a GET).

    The A2A endpoint has no tokens, so the token-less rules hold: no other site's page, JSON bodies only; and
    bodies are bounded, and parsed once here so that none can crash the SDK's parser."""
    from agentenv_runtime import JsonRefused, cross_site_refusal, loads_request, read_body

    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
    has_body = "transfer-encoding" in headers or headers.get("content-length", "0").strip() not in ("", "0")
    refused = cross_site_refusal(scope["method"], headers, has_body=has_body)
    if refused is not None or scope["method"] in ("GET", "HEAD", "OPTIONS"):
        return refused
    body = await read_body(receive, MAX_BODY_BYTES)
    if body is None:
        return 413, f"request body larger than {MAX_BODY_BYTES} bytes"
    if body.strip():
        try:
            loads_request(body, strict=True)
        except JsonRefused as exc:
            return 400, f"parse error: {exc}"
    return body


@contextmanager
def serve_a2a(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    startup_timeout: float = 15.0,
    header_timeout: float = 10.0,
    max_tasks: int | None = None,
    task_ttl: float | None = None,
) -> Iterator[str]:
    """Run `app` with uvicorn in a background thread; yield its base URL once it accepts connections.

    Port 0 picks a free port. Leaving the block stops the server and waits for the thread to end. A connection
    that has not sent its request head within `header_timeout` seconds is closed (`agentenv_runtime.slow_clients`).
    `max_tasks` / `task_ttl` set the task retention of an app from `build_a2a_app` (see there); None keeps the
    app's. A limit that cannot work raises ValueError before anything starts.
    """
    import uvicorn
    from agentenv_runtime import HeaderWaits, server_settings
    from uvicorn.protocols.http.h11_impl import H11Protocol

    if max_tasks is not None or task_ttl is not None:
        state: Any = getattr(app, "state", None)
        if getattr(state, "task_store", None) is None:
            raise ValueError("max_tasks / task_ttl: the app was not made by build_a2a_app; it has no task store")
        limit_tasks(state.task_store, state.served, max_tasks=max_tasks, task_ttl=task_ttl)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", access_log=False,
        **server_settings(H11Protocol, HeaderWaits(header_timeout=header_timeout)),
    )
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run()
        except BaseException as exc:  # SystemExit from a failed bind included: report it to the caller
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"a2a-server-{host}:{port}", daemon=True)
    thread.start()
    waited = 0.0
    while not server.started:
        if not thread.is_alive() or failure:
            reason = f": {failure[0]!r}" if failure else " (see the log above)"
            raise A2aServeError(f"A2A server on {host}:{port} did not start{reason}; is the port free?")
        if waited >= startup_timeout:
            server.should_exit = True
            thread.join(startup_timeout)
            raise A2aServeError(f"A2A server on {host}:{port} did not start within {startup_timeout:g} s")
        thread.join(0.01)
        waited += 0.01
    bound = server.servers[0].sockets[0].getsockname()
    shown_host = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    try:
        yield f"http://{shown_host}:{bound[1]}"
    finally:
        server.should_exit = True
        thread.join(startup_timeout)
