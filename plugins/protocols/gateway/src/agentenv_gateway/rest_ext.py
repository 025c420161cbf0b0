"""The clock, trigger, trajectory, state, tool-access and step extensions as REST routes.

These are the routes and shapes of the reference AgentEnv gateway (`PUT /clock/set-time`, `GET /state`,
`POST /tools/disable`, …), served beside our JSON-RPC methods. Each route translates its body into the
JSON-RPC method of the same extension and runs it through `call_method`, so the role check (control only,
with tokens), parameter validation and all-or-none behaviour are the JSON-RPC ones. Errors answer
`{"ok": false, "error": {code, message, field?}}`: 400 bad input, 403 not a control caller, 404 unarmed clock,
413 a body over 1 MiB.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentenv_runtime import GET_TIME, JsonRefused, loads_request

from agentenv_gateway.core import ROLE_SCOPE_KEY, BodyTooLarge, Gateway, dumps
from agentenv_gateway.rpc import FORBIDDEN, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError, call_method

Handler = Callable[[Gateway, dict[str, Any], str], Awaitable[tuple[int, Any]]]
WILDCARD = "*"
_CODES = {FORBIDDEN: (403, "forbidden"), INVALID_PARAMS: (400, "invalid_params"), METHOD_NOT_FOUND: (404, "not_found")}


def _iso_z(value: str | None) -> str | None:
    return value.replace("+00:00", "Z") if value else value


def _clock_view(state: dict[str, Any]) -> dict[str, Any]:
    """Our clock state with the reference fields beside ours (`virtual_time`, `virtual_seconds_per_real_second`)."""
    if not state.get("armed"):
        return {"armed": False} | state
    return state | {"virtual_time": _iso_z(state.get("now")), "virtual_seconds_per_real_second": state.get("rate")}


async def clock_set_time(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    if not isinstance(body.get("virtual_time"), str):
        raise RpcError(INVALID_PARAMS, "virtual_time: required, an RFC 3339 time", {"field": "virtual_time"})
    params: dict[str, Any] = {"start": body["virtual_time"], "mode": "scaled"}
    if body.get("virtual_seconds_per_real_second") is not None:
        params["rate"] = body["virtual_seconds_per_real_second"]
    return 200, _clock_view(await call_method(gw, "clock/set", params, role))


async def clock_clear(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    await call_method(gw, "clock/clear", {}, role)
    return 200, {"ok": True, "armed": False}


async def clock_time(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    state = await call_method(gw, "clock/get", {}, role)
    if not state.get("armed"):
        return 404, {"ok": False, "error": {"code": "clock_not_armed", "message": "clock not armed: set it first"}}
    return 200, {"virtual_time": _iso_z(state["now"])}


async def clock_state(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    return 200, _clock_view(await call_method(gw, "clock/get", {}, role))


async def triggers_register(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    """Ours, or the reference's trigger language where it translates exactly (else 400 naming the field)."""
    from agentenv_runtime import is_reference_trigger
    from agentenv_runtime import translate_reference_trigger as translate

    triggers = body.get("triggers")
    if isinstance(triggers, list):
        for index, trigger in enumerate(list(triggers)):
            if is_reference_trigger(trigger):
                translated, problems = translate(trigger, where=f"triggers.{index}")
                if translated is None:
                    field = problems[0].split(":", 1)[0]
                    raise RpcError(INVALID_PARAMS, "; ".join(problems), {"field": field})
                triggers[index] = translated
    result = await call_method(gw, "triggers/register", {"triggers": triggers}, role)
    return 200, {"ok": True} | result


async def triggers_remove(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    ids = body.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise RpcError(INVALID_PARAMS, "ids: required, a list of trigger ids", {"field": "ids"})
    unknown = [i for i in ids if i not in gw.world.triggers]
    if unknown:
        raise RpcError(INVALID_PARAMS, f"ids: no trigger {unknown[0]!r}; nothing removed", {"field": "ids"})
    for trigger_id in ids:
        await call_method(gw, "triggers/remove", {"id": trigger_id}, role)
    return 200, {"ok": True, "removed": ids}


async def triggers_clear(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    ids = [t["id"] for t in (await call_method(gw, "triggers/state", {}, role))["triggers"]]
    for trigger_id in ids:
        await call_method(gw, "triggers/remove", {"id": trigger_id}, role)
    return 200, {"ok": True, "removed": ids}


async def triggers_state(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    return 200, await call_method(gw, "triggers/state", {}, role)


async def trajectory(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    """JSONL, one event per line, as the reference serves its trajectory file."""
    events = (await call_method(gw, "trajectory/get", {}, role))["events"]
    return 200, b"".join(dumps(event) + b"\n" for event in events)


def _tool_view(tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool["name"], "description": tool.get("description") or "", "parameters": tool["inputSchema"]}


def _rules(gw: Gateway, role: str) -> dict[str, list[str]]:
    """A role's access in the reference shape: the tools it may not use, and those it may."""
    names = [*gw.world.tools, GET_TIME]
    return {
        "disabled": sorted(n for n in names if not gw.world.rbac.permits(role, n)),
        "allowed": sorted(n for n in names if gw.world.rbac.permits(role, n)),
    }


async def state(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    await call_method(gw, "access/get", {}, role)  # the control check
    servers = [
        {"name": env.name, "tools": [_tool_view(gw.world.describe_tool(public))
                                     for public, (owner, _) in gw.world.tools.items() if owner is env]}
        for env in gw.world.envs.values()
    ]
    roles = {name: _rules(gw, name) for name in gw.world.rbac.roles}
    return 200, {"mcp_servers": servers, "changelog_id": None, "roles": roles, "tool_name_clashes": {}}


def _tool_access(action: str) -> Handler:
    async def change(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
        target, tools = body.get("role"), body.get("tools")
        if not isinstance(target, str) or not target:
            raise RpcError(INVALID_PARAMS, "role: required, the role to change", {"field": "role"})
        if tools == WILDCARD:
            tools = [*gw.world.tools, GET_TIME]
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise RpcError(INVALID_PARAMS, "tools: a list of tool names or the string '*'", {"field": "tools"})
        await call_method(gw, "access/set", {"role": target, action: tools}, role)
        return 200, {"role": target} | _rules(gw, target)

    return change


async def step(gw: Gateway, body: dict[str, Any], role: str) -> tuple[int, Any]:
    """`list_tools` / `call_tool` as the caller's role; a call answers in MCP's CallToolResult shape."""
    action = body.get("action")
    if action == "list_tools":
        return 200, {"tools": [_tool_view(t) for t in (await call_method(gw, "tools/list", {}, role))["tools"]]}
    if action != "call_tool":
        raise RpcError(INVALID_PARAMS, f"action: {action!r}; expected 'list_tools' or 'call_tool'", {"field": "action"})
    name, arguments = body.get("tool_name"), body.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise RpcError(INVALID_PARAMS, "tool_name: required for call_tool", {"field": "tool_name"})
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "arguments: must be a JSON object", {"field": "arguments"})
    outcome = await call_method(gw, "tools/call", {"name": name, "arguments": arguments}, role)
    value = outcome["result"] if outcome["ok"] else {"error": outcome["error"]}
    structured = value if isinstance(value, dict) else {"result": value}
    text = dumps(value).decode()
    content = [{"type": "text", "text": text}]
    return 200, {"content": content, "structuredContent": structured, "isError": not outcome["ok"]}


ROUTES: list[tuple[str, str, str, str, Handler]] = [
    # (extension, method name on the card, HTTP verb, path, handler)
    ("clock", "get_time", "GET", "/clock/time", clock_time),
    ("clock", "set_time", "PUT", "/clock/set-time", clock_set_time),
    ("clock", "clear", "POST", "/clock/clear", clock_clear),
    ("clock", "state", "GET", "/clock/state", clock_state),
    ("triggers", "register", "POST", "/triggers/register", triggers_register),
    ("triggers", "remove", "POST", "/triggers/remove", triggers_remove),
    ("triggers", "clear", "POST", "/triggers/clear", triggers_clear),
    ("triggers", "state", "GET", "/triggers/state", triggers_state),
    ("tool-access", "disable", "POST", "/tools/disable", _tool_access("disable")),
    ("tool-access", "enable", "POST", "/tools/enable", _tool_access("enable")),
    ("trajectory", "get", "GET", "/trajectory", trajectory),
    ("state", "get", "GET", "/state", state),
    ("step", "step", "POST", "/step", step),
]
"""Every REST route of the extensions; the card's advertisement (`protocol.EXTENSIONS`) is made from it."""


def routes(gw: Gateway, read_body: Callable[[Any], Awaitable[bytes]]) -> list[Any]:
    """Starlette routes for `ROUTES`, bound to `gw`."""
    from starlette.responses import Response
    from starlette.routing import Route

    def endpoint(handler: Handler) -> Callable[[Any], Awaitable[Any]]:
        async def run(request: Any) -> Any:
            body: Any = {}
            if request.method != "GET":
                try:
                    raw = await read_body(request)
                except BodyTooLarge:
                    limit = gw.limits.max_body_bytes
                    return _error(413, "too_large", f"request body larger than {limit} bytes (limits.max_body_bytes)")
                try:
                    body = loads_request(raw) if raw.strip() else {}
                except JsonRefused:
                    body = None
                if not isinstance(body, dict):
                    return _error(400, "invalid_json", "the body must be a JSON object")
            try:
                status, payload = await handler(gw, body, request.scope[ROLE_SCOPE_KEY])
            except RpcError as exc:
                code_status, code = _CODES.get(exc.code, (500, "internal_error"))
                extra = {"field": exc.data["field"]} if isinstance(exc.data, dict) and "field" in exc.data else {}
                return _error(code_status, code, exc.message, **extra)
            if isinstance(payload, bytes):
                return Response(payload, status_code=status, media_type="application/jsonl")
            return Response(dumps(payload), status_code=status, media_type="application/json")

        return run

    return [Route(path, endpoint(handler), methods=[verb]) for _, _, verb, path, handler in ROUTES]


def _error(status: int, code: str, message: str, **fields: Any) -> Any:
    from starlette.responses import Response

    return Response(dumps({"ok": False, "error": {"code": code, "message": message, **fields}}), status_code=status,
                    media_type="application/json")
