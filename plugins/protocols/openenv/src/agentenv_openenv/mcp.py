"""OpenEnv's MCP action mode: `list_tools` and `call_tool` actions on a session, and JSON-RPC on `/mcp`.

OpenEnv's `MCPToolClient` steps a session with `{"type": "list_tools"}` and `{"type": "call_tool", "tool_name",
"arguments"}` and reads `{"tools": [...]}` or `{"tool_name", "result", "error"}` observations back; its production
mode posts JSON-RPC (`tools/list`, `tools/call`, `openenv/session/create|close`) to `/mcp`. Both are the same
episode as the plain actions: a call is a tool call as the task's agent role, and the final answer is the
`submit_answer` tool this mode adds to the list (graded by the task's verifiers; its reward is their score).
Tool discovery needs no reset, as OpenEnv's MCP types say.

Errors the world reports (bad arguments, an unknown or forbidden tool, a tool that failed) come back as the
observation's `error` (`{"error_type", "message"}`, OpenEnv's `ToolError`), which `MCPToolClient.call_tool`
raises; over JSON-RPC they are error responses whose `data` holds the world's error object.
"""

from __future__ import annotations

import uuid
from typing import Any

from agentenv_rl.api import Episode, EpisodeError, StepResult

from agentenv_openenv.sessions import Answer, CapacityError, Session, SessionPool

SUBMIT = "submit_answer"
MCP_ACTIONS = frozenset({"list_tools", "call_tool"})
SUBMIT_TOOL = {
    "name": SUBMIT,
    "description": "Give your final answer: it ends the episode and is graded.",
    "inputSchema": {
        "type": "object",
        "properties": {"answer": {"type": "string", "description": "Your final answer to the task."}},
        "required": ["answer"],
        "additionalProperties": False,
    },
}
ERROR_TYPES = {"invalid_arguments": "invalid_args", "unknown_tool": "tool_not_found", "forbidden": "tool_not_found"}
"""The world's error codes as OpenEnv's `ToolErrorType`; any other code is an `execution_error`."""

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, SERVER_ERROR = -32700, -32600, -32601, -32602, -32000


def tools_of(episode: Episode) -> list[dict[str, Any]]:
    """The episode's tools plus `submit_answer` (left out when the world has a tool of that name)."""
    tools = episode.tools()
    return tools if any(t["name"] == SUBMIT for t in tools) else [*tools, SUBMIT_TOOL]


def _plain(name: Any, arguments: Any, episode: Episode) -> dict[str, Any]:
    """A call as a plain episode action (`{"tool", "arguments"}` or `{"answer"}`); bad shapes are refused."""
    if not isinstance(name, str) or not name:
        raise EpisodeError("bad action: a call_tool action needs `tool_name`, a non-empty string")
    if not isinstance(arguments, dict):
        raise EpisodeError(f"bad action: `arguments` of {name!r} must be an object, not {arguments!r}")
    if name == SUBMIT and SUBMIT_TOOL in tools_of(episode):
        if set(arguments) != {"answer"} or not isinstance(arguments["answer"], str):
            raise EpisodeError(f'bad action: {SUBMIT} takes {{"answer": TEXT}}, not {arguments!r}')
        return {"answer": arguments["answer"]}
    return {"tool": name, "arguments": arguments}


def _called(name: str, stepped: StepResult) -> dict[str, Any]:
    """A step's result as OpenEnv's `CallToolObservation` payload."""
    observation = stepped.observation
    error = observation.get("error")
    done = stepped.terminated or stepped.truncated
    if observation.get("type") == "final":
        result: Any = {"data": {"score": stepped.info.get("score"), "passed": stepped.info.get("passed")}}
    else:
        result = {"data": observation.get("result")} if error is None else None
    tool_error = None
    if error is not None:
        code = str(error.get("code", ""))
        tool_error = {
            "error_type": ERROR_TYPES.get(code, "execution_error"),
            "message": f"{code}: {error.get('message')}",
        }
    body = {"tool_name": name, "result": result, "error": tool_error, "done": done, "reward": stepped.reward}
    body["metadata"] = {"truncated": stepped.truncated, "info": stepped.info, "world_error": error}
    return {"observation": body, "reward": stepped.reward, "done": done}


def listed(episode: Episode) -> dict[str, Any]:
    """OpenEnv's `ListToolsObservation` payload (discovery does not act on the episode)."""
    return {"observation": {"tools": tools_of(episode), "metadata": {}}, "reward": None, "done": False}


def step_now(session: Session, action: dict[str, Any]) -> dict[str, Any] | None:
    """The payload of an MCP action at once, or None (nothing done) when it must be awaited with `astep`."""
    kind = action.get("type")
    if kind not in MCP_ACTIONS:
        raise EpisodeError(f"bad action: `type` is list_tools or call_tool (OpenEnv's MCP actions), not {kind!r}")
    if kind == "list_tools":
        return listed(session.episode)
    name = action.get("tool_name")
    stepped = session.episode.step_now(_plain(name, action.get("arguments", {}), session.episode))
    return None if stepped is None else _called(str(name), stepped)


async def astep(session: Session, action: dict[str, Any]) -> dict[str, Any]:
    ready = step_now(session, action)
    if ready is not None:
        return ready
    name = action.get("tool_name")
    return _called(str(name), await session.episode.astep(_plain(name, action.get("arguments", {}), session.episode)))


def answer_step(session: Session, action: dict[str, Any]) -> Answer:
    """The WebSocket reply to an MCP action: now, or a coroutine giving it (grading a final answer)."""
    ready = step_now(session, action)
    if ready is not None:
        return {"type": "observation", "data": ready}
    return session.later(astep(session, action), "observation")


class McpEndpoint:
    """JSON-RPC 2.0 as OpenEnv's `/mcp` speaks it, over the server's session pool.

    A request names a session (`params.session_id`, made by `openenv/session/create`) or runs in a fresh fork of
    the task's start, reset, used once and dropped, as OpenEnv's stateless MCP requests run in a new env. On
    `/ws`, a `{"type": "mcp"}` message acts on that connection's own session."""

    def __init__(self, pool: SessionPool) -> None:
        self.pool = pool
        self.sessions: dict[str, Session] = {}

    def answer_step(self, session: Session, action: dict[str, Any]) -> Answer:
        return answer_step(session, action)

    async def astep(self, session: Session, action: dict[str, Any]) -> dict[str, Any]:
        return await astep(session, action)

    async def handle(self, request: Any, own: Session | None = None) -> dict[str, Any]:
        if (
            not isinstance(request, dict)
            or request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
        ):
            return _failure(None, INVALID_REQUEST, 'a JSON-RPC 2.0 request object: {"jsonrpc": "2.0", "method", ...}')
        rid, method, params = request.get("id"), request["method"], request.get("params", {})
        if not isinstance(params, dict):
            return _failure(rid, INVALID_PARAMS, "params must be an object")
        try:
            return {"jsonrpc": "2.0", "id": rid, "result": await self._result(method, params, own)}
        except _RpcError as exc:
            return _failure(rid, exc.code, exc.message, exc.data)
        except CapacityError as exc:
            return _failure(rid, SERVER_ERROR, str(exc))
        except EpisodeError as exc:
            return _failure(rid, INVALID_PARAMS, str(exc))

    async def _result(self, method: str, params: dict[str, Any], own: Session | None) -> Any:
        if method == "openenv/session/create":
            if own is not None:
                return {"session_id": own.episode.episode_id or "ws"}
            session = self.pool.open()
            session.reset_now({})  # production mode has no reset: a session starts ready to call tools
            session_id = uuid.uuid4().hex
            self.sessions[session_id] = session
            return {"session_id": session_id}
        if method == "openenv/session/close":
            closed = self.sessions.pop(self._session_id(params), None)
            if closed is None:
                raise _RpcError(INVALID_PARAMS, f"unknown session_id {params.get('session_id')!r}")
            self.pool.close(closed)
            return {"session_id": params["session_id"], "closed": True}
        if method == "tools/list":
            listing = own or self._named(params)
            episode = listing.episode if listing else await self.pool.base(self.pool.template.default_seed())
            return {"tools": tools_of(episode)}
        if method == "tools/call":
            return await self._call(params, own or self._named(params))
        raise _RpcError(
            METHOD_NOT_FOUND,
            f"method not found: {method} (tools/list, tools/call, openenv/session/create, openenv/session/close)",
        )

    async def _call(self, params: dict[str, Any], session: Session | None) -> dict[str, Any]:
        if session is None:
            session = Session(self.pool, (await self.pool.base(self.pool.template.default_seed())).fork())
            session.reset_now({})
        name = params.get("name")
        payload = await astep(
            session, {"type": "call_tool", "tool_name": name, "arguments": params.get("arguments", {})}
        )
        observation = payload["observation"]
        if observation["error"] is not None:
            raise _RpcError(
                SERVER_ERROR,
                f"tool {name!r} failed: {observation['error']['message']}",
                observation["metadata"]["world_error"],
            )
        data = observation["result"]["data"]
        return {
            "data": data,
            "structuredContent": {"result": data},
            "isError": False,
            "reward": payload["reward"],
            "done": payload["done"],
        }

    def _session_id(self, params: dict[str, Any]) -> str:
        session_id = params.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            raise _RpcError(INVALID_PARAMS, "params need `session_id` (from openenv/session/create)")
        return session_id

    def _named(self, params: dict[str, Any]) -> Session | None:
        if params.get("session_id") is None:
            return None
        session = self.sessions.get(self._session_id(params))
        if session is None:
            raise _RpcError(INVALID_PARAMS, f"unknown session_id {params['session_id']!r}")
        return session


class _RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _failure(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}
