"""Using a served world from another process as if it were in process: `RemoteWorld` and `McpToolAccess`.

A task that serves its world from a sandbox still wants the `World` interface: steps set the clock, arm
triggers, change tool access, snapshot, and verifiers query env databases and read the trajectory. A
`RemoteWorld` is a `World` whose every operation goes to the gateway instead — tool calls over REST with
the role's token, world rules over the JSON-RPC data plane with the `control` token — while agents get an
MCP client (`tool_access(role)`), so they reach the world the way any outside agent would.

It is built with a local *mirror*: the same envs, empty, never called. `env(name)` pulls the served
world's snapshot into the mirror and returns the mirror env, so SQL checks on `env.db` see the served
state. An artifact loaded into a mirror env (`world.env(name).load(artifact)`) is sent to the server
first (`data/add`). The trajectory is the server's, pulled on every read and kept in order with events
recorded locally (an agent's turns), so digests match the in-process run.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from agentenv.contracts import ToolAccess
from agentenv_runtime import (
    DEFAULT_ROLE,
    Artifact,
    ClockMode,
    Env,
    ToolOutcome,
    Trajectory,
    TriggerDef,
    World,
    WorldError,
    argument_problem,
    safe_text,
)

from agentenv_gateway.auth import CONTROL_ROLE
from agentenv_gateway.protocol import REST_PATH, RPC_PATH

CARD = "/.well-known/agent-env.json"
HTTP_TIMEOUT = 60.0


class RemoteUnavailable(WorldError):
    """The served world did not answer (gone, or not up yet); the message names the URL."""


def _jsonable_time(value: str | datetime | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


class McpToolAccess:
    """`ToolAccess` over MCP (streamable HTTP, official client) with one role's bearer token.

    The client session stays open on a background event-loop thread (the gateway's upstream machinery),
    so `list_tools` / `call_tool` are plain synchronous calls, like `WorldToolAccess`. The tool list is
    fetched on every `list_tools`, since a world's tool access can change mid-run.
    """

    def __init__(self, url: str, token: str | None, *, role: str = DEFAULT_ROLE, mcp_url: str | None = None) -> None:
        from agentenv_gateway.upstream import UpstreamConnection

        self.url = url.rstrip("/")
        self.role = role
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.connection = UpstreamConnection(f"world-{role}", mcp_url or f"{self.url}/mcp", headers=self.headers)
        self._started = False

    def _session(self) -> Any:
        if not self._started:
            self.connection.start()
            self._started = True
        return self.connection

    def list_tools(self) -> list[dict[str, Any]]:
        tools = self._session().list_tools()
        return [
            {"name": t.name, "description": t.description or "", "inputSchema": dict(t.input_schema)} for t in tools
        ]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`{"ok": true, "result": …}` or `{"ok": false, "error": {"code", "message", …}}` — never raises.

        Arguments the MCP client cannot encode (a lone surrogate) go over REST with escaped JSON instead, so
        the server refuses and records them as in process and the MCP session is never broken by them. A
        session that failed is reconnected on the next call rather than failing every later one."""
        if argument_problem(arguments) is not None:
            return self._call_over_rest(name, arguments)
        try:
            result = self._session().call(name, arguments)
        except Exception as exc:
            self.close()
            message = f"the served world at {self.url} did not answer: {type(exc).__name__}: {exc}"
            return {"ok": False, "error": {"code": "unreachable", "message": message}}
        return mcp_outcome(result).to_dict()

    def _call_over_rest(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        import urllib.parse

        import httpx

        body = json_body(arguments)
        path = f"{self.url}{REST_PATH}/tools/{urllib.parse.quote(safe_text(name), safe='')}"
        try:
            response = httpx.post(path, content=body["content"], headers=self.headers | body["headers"], timeout=60)
        except httpx.HTTPError as exc:
            message = f"the served world at {self.url} did not answer: {type(exc).__name__}: {exc}"
            return {"ok": False, "error": {"code": "unreachable", "message": message}}
        return rest_outcome(response, self.url).to_dict()

    def close(self) -> None:
        if self._started:
            self.connection.close()
            self._started = False


def export_of(answer: Any, leaf: str = "") -> dict[str, Any]:
    """`{env: {table: rows}}` from a `data/get` answer: the protocol's `{"parts": [...]}` (each data part
    naming its env in `metadata.env`; a part without one is `leaf`'s, the card name of a one-env server), or
    the bare export older servers answered."""
    if not isinstance(answer, dict) or not isinstance(answer.get("parts"), list):
        return answer if isinstance(answer, dict) else {}
    exported: dict[str, Any] = {}
    for part in answer["parts"]:
        if isinstance(part, dict) and part.get("kind") == "data" and isinstance(part.get("data"), dict):
            name = str((part.get("metadata") or {}).get("env") or leaf)
            exported.setdefault(name, {}).update(part["data"])
    return exported


def json_body(value: Any) -> dict[str, Any]:
    """Request keywords for a JSON body with every non-ASCII character escaped: a lone surrogate (which
    UTF-8 cannot carry) then reaches the server, which refuses and records it like any bad argument."""
    return {"content": json.dumps(value).encode(), "headers": {"content-type": "application/json"}}


def rest_outcome(response: Any, url: str) -> ToolOutcome:
    """A REST tool-call response as a `ToolOutcome` (a non-JSON answer becomes an `http_<status>` error)."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or "ok" not in payload:
        message = f"HTTP {response.status_code} from {url}: {response.text[:300]}"
        return ToolOutcome(None, {"code": f"http_{response.status_code}", "message": message})
    if payload["ok"]:
        return ToolOutcome(payload.get("result"), None)
    return ToolOutcome(None, payload.get("error") or {"code": "tool_failed", "message": "no error given"})


def mcp_outcome(result: Any) -> ToolOutcome:
    """A gateway `CallToolResult` as a `ToolOutcome`: the text content is the JSON of the result (or error)."""
    text = "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    try:
        value: Any = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        value = result.structured_content if result.structured_content is not None else text
    if result.is_error:
        error = (result.structured_content or {}).get("error") if isinstance(result.structured_content, dict) else None
        if not isinstance(error, dict):
            error = value if isinstance(value, dict) else {"code": "tool_failed", "message": str(value)}
        return ToolOutcome(None, error)
    return ToolOutcome(value, None)


class _MirrorLoad:
    """Replaces a mirror env's `load`: the artifact goes to the server first, then into the mirror."""

    def __init__(self, world: RemoteWorld, env: Env) -> None:
        self.world, self.env_name, self.local = world, env.name, env.load

    def __call__(self, artifact: Artifact) -> None:
        self.world.add_data(self.env_name, artifact)
        self.local(artifact)


class RemoteWorld(World):
    """A served world behind the `World` interface (see the module docstring).

    `tokens` maps role → bearer token and must include `control` (the data plane). Roles, trigger kinds and
    env settings should be those the server was started with, so the mirror's names and checks agree.
    """

    def __init__(
        self,
        envs: Iterable[Env],
        *,
        url: str,
        tokens: Mapping[str, str],
        name: str | None = None,
        roles: Mapping[str, Any] | None = None,
        trigger_kinds: Mapping[str, Any] | None = None,
        seed: int = 0,
        timeout: float = HTTP_TIMEOUT,
    ) -> None:
        if CONTROL_ROLE not in tokens:
            raise WorldError(
                f"a RemoteWorld needs a {CONTROL_ROLE!r} token for the data plane (tokens for: {sorted(tokens)})"
            )
        self._mirror = Trajectory()
        self._synced = 0
        super().__init__(envs, name=name, roles=roles, trigger_kinds=trigger_kinds, seed=seed)
        import httpx

        self.url = url.rstrip("/")
        self.tokens = dict(tokens)
        self._http = httpx.Client(base_url=self.url, timeout=timeout)
        self._ids = itertools.count(1)
        self._accesses: list[McpToolAccess] = []
        for env in self.envs.values():
            env.load = _MirrorLoad(self, env)  # type: ignore[method-assign]

    def __repr__(self) -> str:
        return f"<RemoteWorld {self.name} at {self.url}>"

    # ---- transport ---------------------------------------------------------------------------------
    def _headers(self, role: str) -> dict[str, str]:
        token = self.tokens.get(role)
        if token is None:
            raise WorldError(
                f"served world {self.name!r} has no token for role {role!r} (roles with tokens: {sorted(self.tokens)})"
            )
        return {"authorization": f"Bearer {token}"}

    def _request(self, method: str, path: str, role: str, **kwargs: Any) -> Any:
        import httpx

        headers = self._headers(role) | kwargs.pop("headers", {})
        try:
            return self._http.request(method, path, headers=headers, **kwargs)
        except httpx.HTTPError as exc:
            raise RemoteUnavailable(
                f"the served world at {self.url} did not answer {method} {path}: {type(exc).__name__}: {exc}"
            ) from None

    def rpc(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Call a data-plane method as `control`; a JSON-RPC error becomes a WorldError with its message."""
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": dict(params or {})}
        response = self._request("POST", RPC_PATH, CONTROL_ROLE, json=body)
        try:
            reply = response.json()
        except ValueError:
            raise WorldError(f"{method}: HTTP {response.status_code} from {self.url}: {response.text[:300]}") from None
        if "error" in reply:
            raise WorldError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return reply["result"]

    # ---- tools -------------------------------------------------------------------------------------
    def tool_names(self, role: str = DEFAULT_ROLE) -> list[str]:
        return [tool["name"] for tool in self.list_tools(role)]

    def list_tools(self, role: str = DEFAULT_ROLE) -> list[dict[str, Any]]:
        response = self._request("GET", f"{REST_PATH}/tools", role)
        if response.status_code != 200:
            raise WorldError(f"listing tools as {role!r}: HTTP {response.status_code}: {response.text[:300]}")
        tools: list[dict[str, Any]] = response.json()["tools"]
        return tools

    def call(self, tool: str, arguments: dict[str, Any] | None = None, role: str = DEFAULT_ROLE) -> ToolOutcome:
        """A tool call over REST as `role`; refusals come back as the same structured errors as in process."""
        response = self._request("POST", f"{REST_PATH}/tools/{tool}", role, **json_body(arguments or {}))
        return rest_outcome(response, self.url)

    def tool_access(self, role: str = DEFAULT_ROLE) -> ToolAccess:
        """An MCP client acting as `role` (closed by `close()`)."""
        access = McpToolAccess(self.url, self._headers(role)["authorization"].split(" ", 1)[1], role=role)
        self._accesses.append(access)
        return access

    # ---- rules -------------------------------------------------------------------------------------
    def set_clock(
        self,
        start: str | datetime | None = None,
        *,
        mode: ClockMode | None = None,
        rate: float | None = None,
        timezone: str | None = None,
    ) -> None:
        wanted = {"start": _jsonable_time(start), "mode": mode, "rate": rate, "timezone": timezone}
        state = self.rpc("clock/set", {k: v for k, v in wanted.items() if v is not None})
        super().set_clock(state["now"], mode=state["mode"], rate=state["rate"], timezone=state["timezone"])

    def advance(self, seconds: float) -> int:
        fired = int(self.rpc("clock/advance", {"seconds": seconds})["fired"])
        self.pull()
        return fired

    def run_until_idle(self, until: datetime | str | None = None, max_events: int = 1_000_000) -> int:
        params: dict[str, Any] = {"max_events": max_events}
        if until is not None:
            params["until"] = _jsonable_time(until)
        fired = int(self.rpc("clock/run_until_idle", params)["fired"])
        self.pull()
        return fired

    def add_trigger(self, definition: TriggerDef | dict[str, Any]) -> None:
        """Checked by the mirror first (the same errors as in process), then armed on the server."""
        super().add_trigger(definition)
        trigger = definition if isinstance(definition, TriggerDef) else TriggerDef.model_validate(definition)
        try:
            self.rpc("triggers/register", {"triggers": [trigger.model_dump(mode="json")]})
        except WorldError:
            super().remove_trigger(trigger.id)
            raise

    def remove_trigger(self, trigger_id: str) -> bool:
        super().remove_trigger(trigger_id)
        try:
            self.rpc("triggers/remove", {"id": trigger_id})
        except RemoteUnavailable:
            raise
        except WorldError:
            return False
        return True

    def set_tool_access(
        self, role: str, *, enable: Iterable[str] = (), disable: Iterable[str] = (), by: str | None = None
    ) -> None:
        """Changed on the server (which records it in the trajectory), then in the mirror."""
        enable, disable = list(enable), list(disable)
        self.rpc("access/set", {"role": role, "enable": enable, "disable": disable})
        self.rbac.change(role, enable=enable, disable=disable)

    # ---- data and state ----------------------------------------------------------------------------
    def add_data(self, env: str, artifact: Artifact) -> None:
        """Load `artifact` into served env `env` (`data/add`): it becomes what `reset()` returns to."""
        part = {"kind": "file", "file": {"bytes": base64.b64encode(artifact.to_bytes()).decode(), "name": artifact.ref}}
        self.rpc("data/add", {"env": env, "parts": [part]})

    def snapshot(self) -> bytes:
        return base64.b64decode(self.rpc("state/snapshot")["snapshot"])

    def restore(self, data: bytes) -> None:
        self.rpc("state/restore", {"snapshot": base64.b64encode(data).decode()})
        super().restore(data)

    def pull(self) -> None:
        """Copy the served world's state (envs, clock, roles, triggers) into the mirror."""
        super().restore(self.snapshot())

    def reset(self) -> None:
        self.rpc("data/reset", {"to": "loaded"})
        super().reset()
        self._synced = 0
        self.pull()

    def export(self) -> dict[str, Any]:
        return export_of(self.rpc("data/get"))

    def env(self, name: str) -> Env:
        """The mirror env holding the served env's current state (a copy: writes to it stay local)."""
        if name not in self.envs:
            return super().env(name)  # the same error as in process
        self.pull()
        return super().env(name)

    def fork(self) -> World:
        raise WorldError(
            f"world {self.name!r} is served from a sandbox and cannot be forked in process; snapshot() it and "
            "restore() the bytes into another world, or deploy with sandbox = 'inline'"
        )

    # ---- trajectory --------------------------------------------------------------------------------
    @property
    def trajectory(self) -> Trajectory:
        """The served world's trajectory, pulled now, in order with events recorded here (an agent's turns)."""
        with contextlib.suppress(RemoteUnavailable):  # gone (torn down): what was pulled last is all there is
            self.sync_trajectory()
        return self._mirror

    @trajectory.setter
    def trajectory(self, value: Trajectory) -> None:
        self._mirror = value

    def sync_trajectory(self) -> int:
        """Append the server's new events to the local trajectory; returns how many came."""
        added = 0
        while True:
            page = self.rpc("trajectory/get", {"since": self._synced})
            for event in page["events"]:
                event = dict(event, seq=len(self._mirror.events))
                self._mirror.events.append(event)
                for subscriber in self._mirror.subscribers:
                    subscriber(event)
            added += len(page["events"])
            self._synced = page["next"]
            if self._synced >= page["total"] or not page["events"]:
                return added

    # ---- lifetime ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Close every MCP session handed out and the HTTP client (the server itself is the sandbox's)."""
        for access in self._accesses:
            access.close()
        self._accesses.clear()
        self._http.close()


def wait_for_card(
    url: str,
    token: str | None,
    *,
    timeout: float = 60.0,
    alive: Callable[[], bool] | None = None,
    interval: float = 0.05,
) -> dict[str, Any]:
    """Poll `GET /.well-known/agent-env.json` until the world answers; returns the card. For callers with no
    event loop running (`await_card` is the one to await).

    Raises TimeoutError after `timeout` seconds, or RuntimeError as soon as `alive()` says the server died.
    """
    import asyncio

    return asyncio.run(await_card(url, token, timeout=timeout, alive=alive, interval=interval))


async def await_card(
    url: str,
    token: str | None,
    *,
    timeout: float = 60.0,
    alive: Callable[[], bool] | None = None,
    interval: float = 0.05,
) -> dict[str, Any]:
    """Poll the card without blocking the event loop (and so can be cancelled); see `wait_for_card`."""
    import asyncio

    import httpx

    headers = {"authorization": f"Bearer {token}"} if token else {}
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    async with httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=5.0) as client:
        while True:
            try:
                response = await client.get(CARD)
                if response.status_code == 200:
                    card: dict[str, Any] = response.json()
                    return card
                last = f"HTTP {response.status_code}: {response.text[:200]}"
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            if alive is not None and not alive():
                raise RuntimeError(f"the world server exited before serving its card at {url} ({last})")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no Environment Card at {url}{CARD} after {timeout:.0f}s ({last})")
            await asyncio.sleep(interval)
