"""The JSON-RPC 2.0 data plane at `POST /agentenv`.

Methods: `data/reset`, `data/add`, `data/get`; the extensions named after their URIs' short names
(`clock/*`, `triggers/*`, `access/*`, `trajectory/get`, `state/*`); and `tools/list` / `tools/call`
for clients that speak only JSON-RPC. Errors are strict JSON-RPC: -32700 parse error, -32600 invalid
request, -32601 method not found, -32602 invalid params (with `data.field`), -32603 internal error;
-32003 when a non-control role asks for a data-plane method. A failing method changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentenv_runtime import GET_TIME, JsonRefused, WorldError, loads_request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentenv_gateway.core import Gateway
from agentenv_gateway.limits import too_deep
from agentenv_gateway.parts import Part, PartError, fetch_uris, load_parts

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNAUTHORIZED = -32001
FORBIDDEN = -32003
BATCH_CHUNK = 16
"""Batch requests run this many at a time, so `/health` and other sessions' calls interleave with a batch."""
TRAJECTORY_PAGE = 10_000
"""Most events one `trajectory/get` returns; `next` says where the following page starts."""


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid(field: str, message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"invalid params: {field}: {message}", {"field": field})


# ---- params --------------------------------------------------------------------------------------
class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoParams(_Params):
    pass


class AddParams(_Params):
    env: str | None = Field(None, description="The env of every part (else metadata.env, the artifact, the only env).")
    parts: list[Part] = Field(min_length=1)


class GetParams(_Params):
    env: str | None = None


class ResetParams(_Params):
    env: str | None = Field(None, description="Reset only this env (default: the whole world).")
    to: Literal["loaded", "empty"] | None = Field(
        None, description="`loaded`: back to the last load; `empty`: clear, ready for data/add (server default)."
    )


class ClockSetParams(_Params):
    start: str | None = None
    mode: Literal["scaled", "frozen", "event"] | None = None
    rate: float | None = None
    timezone: str | None = None


class ClockAdvanceParams(_Params):
    seconds: float = Field(gt=0, allow_inf_nan=False)


class ClockRunParams(_Params):
    until: str | None = Field(None, description="Stop at this virtual time (ISO 8601); absent = when no event is left.")
    max_events: int = Field(1_000_000, gt=0)


class TriggersRegisterParams(_Params):
    triggers: list[dict[str, Any]] = Field(min_length=1)


class TriggerRemoveParams(_Params):
    id: str


class AccessSetParams(_Params):
    role: str = Field(min_length=1)
    enable: list[str] = Field(default_factory=list)
    disable: list[str] = Field(default_factory=list)


class TrajectoryParams(_Params):
    since: int = Field(0, ge=0)
    limit: int | None = Field(None, gt=0)


class RestoreParams(_Params):
    snapshot: str = Field(description="Base64 of a `state/snapshot` result.")


class ToolsCallParams(_Params):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


# ---- methods -------------------------------------------------------------------------------------
def data_reset(gw: Gateway, params: ResetParams, role: str) -> dict[str, Any]:
    """`to=loaded`: every env back to its last load; `to=empty`: every env cleared, its loads forgotten (the
    reference protocol's meaning: reset, then data/add). The whole world also drops triggers and trajectory
    and gets its served roles back; one env (`env`) changes nothing else."""
    to = params.to or gw.reset_to
    envs = [_env(gw, params.env, "env")] if params.env else list(gw.world.envs.values())
    if params.env is None:
        gw.world.reset()
        gw.world.rbac.load_state(gw.initial_rbac)
    for env in envs:
        env.clear() if to == "empty" else env.reset()
    return {"reset": True, "to": to, "envs": [env.name for env in envs]}


def data_add(gw: Gateway, params: AddParams, role: str) -> dict[str, Any]:
    """Load the parts, all or none; each part goes to `env`, its `metadata.env`, its artifact's env, or the
    only env. The loaded state becomes what `data/reset` (to `loaded`) returns to."""
    try:
        return {"loaded": load_parts(gw.world, params.env, params.parts, local_files=not gw.auth)}
    except PartError as exc:
        raise invalid(exc.field, exc.message) from None


def data_get(gw: Gateway, params: GetParams, role: str) -> dict[str, Any]:
    """`{"parts": [one data part per env]}`: each part's data is the env's tables, its metadata names the env."""
    envs = [_env(gw, params.env, "env")] if params.env else list(gw.world.envs.values())
    return {"parts": [{"kind": "data", "data": env.export(), "metadata": {"env": env.name}} for env in envs]}


def _env(gw: Gateway, name: str | None, field: str) -> Any:
    if name not in gw.world.envs:
        raise invalid(field, f"no env {name!r} (envs: {', '.join(gw.world.envs)})")
    return gw.world.envs[name]


def _clock_state(gw: Gateway) -> dict[str, Any]:
    clock = gw.world.clock
    state = clock.state()
    if clock.armed:
        state["local"] = clock.local().isoformat()
    return state


def clock_set(gw: Gateway, params: ClockSetParams, role: str) -> dict[str, Any]:
    try:
        gw.world.set_clock(params.start, mode=params.mode, rate=params.rate, timezone=params.timezone)
    except ValueError as exc:
        field = str(exc).split(":", 1)[0] if ":" in str(exc) else "start"
        raise invalid(field, str(exc).split(": ", 1)[-1]) from None
    return _clock_state(gw)


def clock_get(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    return _clock_state(gw)


def clock_clear(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    gw.world.clock.clear()
    return _clock_state(gw)


def clock_advance(gw: Gateway, params: ClockAdvanceParams, role: str) -> dict[str, Any]:
    if not gw.world.clock.armed:
        raise invalid("seconds", "the clock is not set; call clock/set first")
    try:
        fired = gw.world.advance(params.seconds)
    except ValueError as exc:  # a jump past year 9999
        raise invalid("seconds", str(exc).split(": ", 1)[-1]) from None
    return _clock_state(gw) | {"fired": fired}


def clock_run_until_idle(gw: Gateway, params: ClockRunParams, role: str) -> dict[str, Any]:
    """Event-driven time: jump from one scheduled trigger to the next until none is left (or `until`)."""
    if not gw.world.clock.armed:
        raise invalid("until", "the clock is not set; call clock/set first")
    try:
        fired = gw.world.run_until_idle(params.until, max_events=params.max_events)
    except ValueError as exc:
        raise invalid("until", str(exc).split(": ", 1)[-1]) from None
    return _clock_state(gw) | {"fired": fired}


def triggers_register(gw: Gateway, params: TriggersRegisterParams, role: str) -> dict[str, Any]:
    """Arm every trigger or none."""
    added: list[str] = []
    for index, definition in enumerate(params.triggers):
        try:
            gw.world.add_trigger(definition)
        except WorldError as exc:
            for trigger_id in added:
                gw.world.remove_trigger(trigger_id)
            raise invalid(f"triggers.{index}", str(exc)) from None
        added.append(str(definition["id"]))
    return {"registered": added, "added": added, "all": list(gw.world.triggers)}  # ours, then the reference's


def triggers_remove(gw: Gateway, params: TriggerRemoveParams, role: str) -> dict[str, Any]:
    if not gw.world.remove_trigger(params.id):
        raise invalid("id", f"no trigger {params.id!r} (registered: {', '.join(gw.world.triggers) or 'none'})")
    return {"removed": params.id}


def triggers_state(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    gw.world.fire_due()  # a time trigger the clock has passed fires when anyone looks, not only at the next call
    return {
        "triggers": [
            {
                "id": trigger_id,
                "kind": armed.definition.kind,
                "fired": armed.fired,
                "status": armed.status,
                **({"error": armed.last_error} if armed.last_error is not None else {}),
                "enabled": armed.enabled,
                "spent": armed.spent,
                "next_at": armed.next_at.isoformat() if armed.next_at else None,
                "definition": armed.definition.model_dump(),
            }
            for trigger_id, armed in gw.world.triggers.items()
        ]
    }


def access_set(gw: Gateway, params: AccessSetParams, role: str) -> dict[str, Any]:
    if (problem := gw.world.rbac.unknown(params.role)) is not None:
        raise invalid("role", problem)  # never a new role with no tools (the reference would serve it all)
    known = set(gw.world.tools) | {GET_TIME}
    for key in ("enable", "disable"):
        for index, tool in enumerate(getattr(params, key)):
            if tool not in known:
                raise invalid(f"{key}.{index}", f"no tool {tool!r} in world {gw.world.name!r}")
    world = gw.world
    world.rbac.change(params.role, enable=params.enable, disable=params.disable)
    world.trajectory.record(
        "access", world.clock.now().isoformat(), role=params.role, enable=params.enable, disable=params.disable
    )
    return {"role": params.role, "access": world.rbac.state()[params.role]}


def access_get(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    return {"roles": gw.world.rbac.state()}


def trajectory_get(gw: Gateway, params: TrajectoryParams, role: str) -> dict[str, Any]:
    events = gw.world.trajectory.events
    end = min(len(events), params.since + min(params.limit or TRAJECTORY_PAGE, TRAJECTORY_PAGE))
    return {"events": events[params.since : end], "next": end, "total": len(events)}


def state_snapshot(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    data = gw.world.snapshot()
    return {"snapshot": base64.b64encode(data).decode(), "size": len(data)}


def state_restore(gw: Gateway, params: RestoreParams, role: str) -> dict[str, Any]:
    try:
        data = base64.b64decode(params.snapshot, validate=True)
    except (binascii.Error, ValueError):
        raise invalid("snapshot", "not valid base64") from None
    before = gw.world.snapshot()
    try:
        gw.world.restore(data)
    except Exception as exc:  # a truncated or foreign blob: put the world back as it was
        gw.world.restore(before)
        raise invalid("snapshot", f"cannot restore: {exc}") from None
    return {"restored": True, "size": len(data)}


def tools_list(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    return {"tools": gw.world.list_tools(role)}


def tools_call(gw: Gateway, params: ToolsCallParams, role: str) -> dict[str, Any]:
    return gw.world.call(params.name, params.arguments, role).to_dict()


async def fetch_part_uris(params: AddParams) -> AddParams:
    try:
        return params.model_copy(update={"parts": await fetch_uris(params.parts)})
    except PartError as exc:
        raise invalid(exc.field, exc.message) from None


@dataclass(frozen=True)
class Method:
    params: type[BaseModel]
    run: Callable[[Gateway, Any, str], Any]
    control: bool = True
    """Only control roles may call it when tokens are configured."""
    prepare: Callable[[Any], Awaitable[Any]] | None = None
    """Awaited on the event loop before `run` (network input, such as files by URL), outside the world lock."""


METHODS: dict[str, Method] = {
    "data/reset": Method(ResetParams, data_reset),
    "data/add": Method(AddParams, data_add, prepare=fetch_part_uris),
    "data/get": Method(GetParams, data_get),
    "clock/set": Method(ClockSetParams, clock_set),
    "clock/get": Method(NoParams, clock_get),
    "clock/clear": Method(NoParams, clock_clear),
    "clock/advance": Method(ClockAdvanceParams, clock_advance),
    "clock/run_until_idle": Method(ClockRunParams, clock_run_until_idle),
    "triggers/register": Method(TriggersRegisterParams, triggers_register),
    "triggers/remove": Method(TriggerRemoveParams, triggers_remove),
    "triggers/state": Method(NoParams, triggers_state),
    "access/set": Method(AccessSetParams, access_set),
    "access/get": Method(NoParams, access_get),
    "trajectory/get": Method(TrajectoryParams, trajectory_get),
    "state/snapshot": Method(NoParams, state_snapshot),
    "state/restore": Method(RestoreParams, state_restore),
    "tools/list": Method(NoParams, tools_list, control=False),
    "tools/call": Method(ToolsCallParams, tools_call, control=False),
}


# ---- envelope ------------------------------------------------------------------------------------
def _response(request_id: Any, *, result: Any = None, error: RpcError | None = None) -> dict[str, Any]:
    if error is not None:
        return {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _params_error(exc: ValidationError) -> RpcError:
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"]) or "params"
    return invalid(field, first["msg"])


def _one(gw: Gateway, message: Any, role: str) -> dict[str, Any] | None:
    """Answer one request object (None for a notification); runs in the gateway's world thread."""
    if not isinstance(message, dict):
        return _response(None, error=RpcError(INVALID_REQUEST, "invalid request: expected a JSON-RPC object"))
    request_id = message.get("id")
    if not _valid_id(request_id):
        return _response(None, error=RpcError(INVALID_REQUEST, "invalid request: id must be a string, integer or null"))
    notification = "id" not in message
    if message.get("jsonrpc") != "2.0":
        return _response(request_id, error=RpcError(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"'))
    method_name = message.get("method")
    if not isinstance(method_name, str):
        return _response(request_id, error=RpcError(INVALID_REQUEST, 'invalid request: "method" must be a string'))
    extra = set(message) - {"jsonrpc", "id", "method", "params"}
    if extra:
        return _response(
            request_id, error=RpcError(INVALID_REQUEST, f"invalid request: unknown members {sorted(extra)}")
        )
    try:
        result = _dispatch(gw, method_name, message.get("params"), role)
    except RpcError as exc:
        return None if notification else _response(request_id, error=exc)
    except Exception as exc:  # never a 500: a bug in a method is an internal JSON-RPC error
        error = RpcError(INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")
        return None if notification else _response(request_id, error=error)
    return None if notification else _response(request_id, result=result)


def _dispatch(gw: Gateway, method_name: str, raw_params: Any, role: str) -> Any:
    method = METHODS.get(method_name)
    if method is None:
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method_name!r} (methods: {', '.join(METHODS)})")
    if method.control and not gw.may_control(role):
        raise RpcError(FORBIDDEN, f"role {role!r} may not call {method_name}; the data plane needs a control token")
    if isinstance(raw_params, Prepared):  # validated and fetched on the event loop (see `_prepare`)
        return method.run(gw, raw_params.params, role)
    if raw_params is None:
        raw_params = {}
    if not isinstance(raw_params, dict):
        raise invalid("params", "must be an object of named parameters")
    try:
        params = method.params.model_validate(raw_params)
    except ValidationError as exc:
        raise _params_error(exc) from None
    return method.run(gw, params, role)


@dataclass
class Prepared:
    """Params a method's `prepare` step already validated and completed (`data/add`'s files fetched by URI)."""

    params: BaseModel


async def _prepare(gw: Gateway, message: Any, role: str) -> Any:
    """Run the `prepare` step of a request's method on the event loop, before the world thread takes the request:
    fetching a URI must not hold the world. Only for a role that may call the method (a refused caller never
    makes the server fetch); a request that does not validate passes through for `_dispatch` to refuse."""
    method = METHODS.get(str(message.get("method"))) if isinstance(message, dict) else None
    raw = message.get("params") if method is not None and method.prepare is not None else None
    if method is None or method.prepare is None or not isinstance(raw, dict):
        return message
    if method.control and not gw.may_control(role):
        return message
    try:
        params = method.params.model_validate(raw)
    except ValidationError:
        return message
    try:
        return {**message, "params": Prepared(await method.prepare(params))}
    except RpcError as exc:
        request_id = message.get("id")
        return _Refused(_response(request_id if _valid_id(request_id) else None, error=exc), "id" not in message)


@dataclass
class _Refused:
    """A request its `prepare` step refused: the reply is ready (None for a notification)."""

    reply: dict[str, Any]
    notification: bool


async def _run_one(gw: Gateway, message: Any, role: str) -> dict[str, Any] | None:
    prepared = await _prepare(gw, message, role)
    if isinstance(prepared, _Refused):
        return None if prepared.notification else prepared.reply
    return await gw.run(_one, gw, prepared, role, inline_key=_inline_key(gw, prepared))


def _inline_key(gw: Gateway, message: Any) -> str | None:
    """Tool calls and listings may run inline (see `Gateway.run`); the data plane and the extensions never do."""
    if not isinstance(message, dict):
        return None
    method, params = message.get("method"), message.get("params")
    if method == "tools/list":
        return "list"
    if method == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str):
        return gw.tool_key(params["name"])
    return None


async def call_method(gw: Gateway, method_name: str, params: dict[str, Any] | None, role: str) -> Any:
    """One method by name, checked like a JSON-RPC call (role, params); raises `RpcError`. For the REST routes."""
    prepared = await _prepare(gw, {"method": method_name, "params": params}, role)
    if isinstance(prepared, _Refused):
        raise RpcError(prepared.reply["error"]["code"], prepared.reply["error"]["message"])
    return await gw.run(_dispatch, gw, method_name, prepared["params"], role)


DATA_METHODS = frozenset({"data/reset", "data/add", "data/get"})


async def handle_env_rpc(gw: Gateway, body: bytes, role: str, env: str) -> Any:
    """JSON-RPC at one env's child URL: only the data plane, scoped to `env` (a different `env` is refused)."""
    try:
        message = loads_request(body)
    except JsonRefused as exc:
        return _response(None, error=RpcError(PARSE_ERROR, f"parse error: {exc}"))
    if not isinstance(message, dict):
        return _response(None, error=RpcError(INVALID_REQUEST, "invalid request: expected one JSON-RPC object"))
    request_id = message.get("id") if _valid_id(message.get("id")) else None
    method_name, params = message.get("method"), message.get("params")
    if method_name not in DATA_METHODS:
        methods = ", ".join(sorted(DATA_METHODS))
        error = RpcError(METHOD_NOT_FOUND, f"method not found at this env's URL: {method_name!r} (methods: {methods})")
        return _response(request_id, error=error)
    if isinstance(params, dict) and params.get("env", env) != env:
        return _response(request_id, error=invalid("env", f"this URL serves env {env!r}; drop `env` or use /agentenv"))
    scoped = {**params, "env": env} if isinstance(params, dict) else ({"env": env} if params is None else params)
    return await _run_one(gw, {**message, "params": scoped}, role)


async def handle_rpc(gw: Gateway, body: bytes, role: str) -> Any:
    """The JSON-RPC reply to a request body: an object, a list (batch), or None (only notifications)."""
    limits = gw.limits
    try:
        message = loads_request(body)
    except JsonRefused as exc:
        return _response(None, error=RpcError(PARSE_ERROR, f"parse error: {exc}"))
    if too_deep(message, limits.request_depth):
        deep = f"invalid request: nested deeper than {limits.request_depth} (limits.max_depth)"
        error = RpcError(INVALID_REQUEST, deep)
        return _response(None, error=error)
    if isinstance(message, list):
        if not message:
            return _response(None, error=RpcError(INVALID_REQUEST, "invalid request: empty batch"))
        most = limits.batch_limit(gw.may_control(role))
        if len(message) > most:
            error = RpcError(
                INVALID_REQUEST,
                f"invalid request: a batch of {len(message)} requests; role {role!r} may send at most {most} "
                "per request (limits.max_batch); split it",
            )
            return _response(None, error=error)
        replies, ready = [], [await _prepare(gw, item, role) for item in message]
        for start in range(0, len(ready), BATCH_CHUNK):  # a chunk at a time, the event loop free in between
            replies += await gw.run(_batch, gw, ready[start : start + BATCH_CHUNK], role)
            await asyncio.sleep(0)
        return replies or None
    return await _run_one(gw, message, role)


def _batch(gw: Gateway, messages: list[Any], role: str) -> list[dict[str, Any]]:
    replies = []
    for item in messages:
        reply = (None if item.notification else item.reply) if isinstance(item, _Refused) else _one(gw, item, role)
        if reply is not None:
            replies.append(reply)
        if gw.offload:
            time.sleep(0)  # on the world thread: hand the interpreter lock to the event loop if it waits
    return replies
