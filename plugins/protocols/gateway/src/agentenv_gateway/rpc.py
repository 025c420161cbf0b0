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
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from agentenv_runtime.env.artifact import Artifact, ArtifactError
from agentenv_runtime.world.world import GET_TIME, WorldError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentenv_gateway.core import Gateway
from agentenv_gateway.limits import too_deep

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


class TextPart(_Params):
    kind: Literal["text"]
    text: str = Field(description="JSON text: an artifact document or {table: rows}.")
    metadata: dict[str, Any] | None = None


class FileContent(_Params):
    bytes: str = Field(description="Base64 of an artifact file (.json or .json.gz).")
    name: str | None = None
    mimeType: str | None = None


class FilePart(_Params):
    kind: Literal["file"]
    file: FileContent
    metadata: dict[str, Any] | None = None


class DataPart(_Params):
    kind: Literal["data"]
    data: dict[str, Any] = Field(description="An artifact document or {table: [row, …]}.")
    metadata: dict[str, Any] | None = None


Part = Annotated[TextPart | FilePart | DataPart, Field(discriminator="kind")]


class AddParams(_Params):
    env: str
    parts: list[Part] = Field(min_length=1)


class GetParams(_Params):
    env: str | None = None


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
def data_reset(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    """Every env back to its loaded state; triggers and trajectory cleared; roles as served."""
    gw.world.reset()
    gw.world.rbac.load_state(gw.initial_rbac)
    return {"reset": True, "envs": list(gw.world.envs)}


def _part_document(index: int, part: TextPart | FilePart | DataPart) -> tuple[Any, str]:
    """(the JSON document a part carries, the field path it came from)."""
    where = f"parts.{index}"
    if isinstance(part, DataPart):
        return part.data, f"{where}.data"
    if isinstance(part, TextPart):
        try:
            return json.loads(part.text), f"{where}.text"
        except json.JSONDecodeError as exc:
            raise invalid(f"{where}.text", f"not valid JSON ({exc.msg} at position {exc.pos})") from None
    try:
        raw = base64.b64decode(part.file.bytes, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(f"{where}.file.bytes", "not valid base64") from None
    try:
        artifact = Artifact.from_bytes(raw, source=part.file.name or where)
    except ArtifactError as exc:
        raise invalid(f"{where}.file.bytes", str(exc)) from None
    return artifact, f"{where}.file"


def _part_artifact(env_name: str, tables: list[str], index: int, part: TextPart | FilePart | DataPart) -> Artifact:
    document, where = _part_document(index, part)
    tables_at = f"{where}.data"
    if isinstance(document, Artifact):
        artifact = document
    elif not isinstance(document, dict):
        raise invalid(where, "must be an artifact document or an object of table name → list of rows")
    elif {"name", "env", "version", "data"} <= set(document):
        try:
            artifact = Artifact.from_bytes(json.dumps(document).encode(), source=where)
        except ArtifactError as exc:
            raise invalid(where, str(exc)) from None
    else:
        for table, rows in document.items():
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise invalid(f"{where}.{table}", "must be a list of row objects")
        artifact = Artifact.build(name="inline", env=env_name, version="0", data=document)
        tables_at = where
    if artifact.env != env_name:
        raise invalid(f"{where}.env", f"the artifact is for env {artifact.env!r}, not {env_name!r}")
    for table in artifact.data:
        if table not in tables:
            raise invalid(f"{tables_at}.{table}", f"{env_name} has no table {table!r} (tables: {', '.join(tables)})")
    return artifact


def data_add(gw: Gateway, params: AddParams, role: str) -> dict[str, Any]:
    """Load each part into the env, all parts or none; the loaded state becomes what `data/reset` returns to."""
    if params.env not in gw.world.envs:
        raise invalid("env", f"no env {params.env!r} (envs: {', '.join(gw.world.envs)})")
    env = gw.world.envs[params.env]
    tables = env.table_names()
    artifacts = [_part_artifact(params.env, tables, i, part) for i, part in enumerate(params.parts)]
    try:
        env.load_many(artifacts)
    except ArtifactError as exc:
        raise invalid(f"parts.{exc.index}", str(exc)) from None
    return {"env": params.env, "loaded": [artifact.ref for artifact in artifacts]}


def data_get(gw: Gateway, params: GetParams, role: str) -> dict[str, Any]:
    if params.env is None:
        return gw.world.export()
    if params.env not in gw.world.envs:
        raise invalid("env", f"no env {params.env!r} (envs: {', '.join(gw.world.envs)})")
    return {params.env: gw.world.envs[params.env].export()}


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
    fired = gw.world.advance(params.seconds)
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
    return {"registered": added}


def triggers_remove(gw: Gateway, params: TriggerRemoveParams, role: str) -> dict[str, Any]:
    if not gw.world.remove_trigger(params.id):
        raise invalid("id", f"no trigger {params.id!r} (registered: {', '.join(gw.world.triggers) or 'none'})")
    return {"removed": params.id}


def triggers_state(gw: Gateway, _: NoParams, role: str) -> dict[str, Any]:
    return {
        "triggers": [
            {
                "id": trigger_id,
                "kind": armed.definition.kind,
                "fired": armed.fired,
                "enabled": armed.enabled,
                "spent": armed.spent,
                "next_at": armed.next_at.isoformat() if armed.next_at else None,
                "definition": armed.definition.model_dump(),
            }
            for trigger_id, armed in gw.world.triggers.items()
        ]
    }


def access_set(gw: Gateway, params: AccessSetParams, role: str) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Method:
    params: type[BaseModel]
    run: Callable[[Gateway, Any, str], Any]
    control: bool = True
    """Only control roles may call it when tokens are configured."""


METHODS: dict[str, Method] = {
    "data/reset": Method(NoParams, data_reset),
    "data/add": Method(AddParams, data_add),
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
    if raw_params is None:
        raw_params = {}
    if not isinstance(raw_params, dict):
        raise invalid("params", "must be an object of named parameters")
    try:
        params = method.params.model_validate(raw_params)
    except ValidationError as exc:
        raise _params_error(exc) from None
    return method.run(gw, params, role)


async def handle_rpc(gw: Gateway, body: bytes, role: str) -> Any:
    """The JSON-RPC reply to a request body: an object, a list (batch), or None (only notifications)."""
    limits = gw.limits
    try:
        message = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _response(None, error=RpcError(PARSE_ERROR, f"parse error: {exc}"))
    except RecursionError:
        return _response(None, error=RpcError(PARSE_ERROR, f"parse error: nested deeper than {limits.request_depth}"))
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
        replies = []
        for start in range(0, len(message), BATCH_CHUNK):  # a chunk at a time, the event loop free in between
            replies += await gw.run(_batch, gw, message[start : start + BATCH_CHUNK], role)
            await asyncio.sleep(0)
        return replies or None
    return await gw.run(_one, gw, message, role)


def _batch(gw: Gateway, messages: list[Any], role: str) -> list[dict[str, Any]]:
    replies = []
    for item in messages:
        reply = _one(gw, item, role)
        if reply is not None:
            replies.append(reply)
        if gw.offload:
            time.sleep(0)  # on the world thread: hand the interpreter lock to the event loop if it waits
    return replies
