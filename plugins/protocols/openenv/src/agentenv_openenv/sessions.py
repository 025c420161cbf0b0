"""Sessions of an OpenEnv server: each one an episode forked from the task's start, so sessions never share state.

A base episode per seed holds the start point (the task's setup ran once for that seed); a session's episode is
a copy-on-write fork of it, and a reset with another seed swaps the session onto a fork of that seed's base.
Payloads follow OpenEnv: `{"observation": {...}, "reward": float | None, "done": bool}`.

`Session.answer` turns one WebSocket message into its reply, on the spot when the episode can answer at once (a
reset to a seed already set up, a tool call, the state) and as a coroutine to await otherwise (grading a final
answer, running the setup of a new seed), so a server can answer most messages in the call that received them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, Protocol

from agentenv_rl.api import Episode, EpisodeError, StepResult, Template
from agentenv_runtime import JsonRefused, loads_request

CLOSE_TIMEOUT = 10.0
"""Seconds to wait for the client: its reply to our close frame, or its first message after a capacity refusal."""
Reply = dict[str, Any] | str | None
"""A message to send back (a dict, or its JSON text when already encoded), or None: the client asked to close."""
Answer = Reply | Coroutine[Any, Any, Reply]
"""A reply now, or a coroutine that gives it."""


class McpActions(Protocol):
    """OpenEnv's MCP mode as sessions reach it (implemented by `agentenv_openenv.mcp.McpEndpoint`)."""

    def answer_step(self, session: Session, action: dict[str, Any]) -> Answer: ...

    def astep(self, session: Session, action: dict[str, Any]) -> Coroutine[Any, Any, dict[str, Any]]: ...

    def handle(self, request: Any, own: Session | None = None) -> Coroutine[Any, Any, dict[str, Any]]: ...


class CapacityError(RuntimeError):
    """Every session slot is taken (`--max-sessions`)."""

    def __init__(self, active: int, maximum: int) -> None:
        super().__init__(
            f"all {maximum} sessions are in use; close one, or start the server with a larger --max-sessions"
        )
        self.active, self.maximum = active, maximum

    def reply(self) -> dict[str, Any]:
        """The refusal as openenv-core's own server sends it: code CAPACITY_REACHED, with the session counts."""
        return error(str(self), "CAPACITY_REACHED", active_sessions=self.active, max_sessions=self.maximum)


def error(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code, **extra}}


def _refusal(exc: EpisodeError) -> dict[str, Any]:
    return error(str(exc), "VALIDATION_ERROR" if "bad action" in str(exc) else "EXECUTION_ERROR")


def _seed_of(data: dict[str, Any]) -> int | None:
    seed = data.get("seed")
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise EpisodeError(f"bad action: `seed` must be an integer, not {seed!r}")
    try:
        return int(seed)
    except ValueError:
        raise EpisodeError(f"bad action: `seed` must be an integer, not {seed!r}") from None


def _observed(result: StepResult) -> dict[str, Any]:
    observation = {**result.observation, "truncated": result.truncated, "info": result.info}
    return {"observation": observation, "reward": result.reward, "done": result.terminated or result.truncated}


class Session:
    def __init__(self, pool: SessionPool, episode: Episode) -> None:
        self.pool, self.episode = pool, episode

    # ---- WebSocket messages ------------------------------------------------------------------------------
    def answer(self, raw: str) -> Answer:
        """The reply to one raw message (see the module docstring); errors are replies, never exceptions."""
        try:  # strict: NaN, Infinity and lone surrogates would be echoed back as JSON no strict client reads
            message = loads_request(raw, strict=True)
        except JsonRefused as exc:
            return error(f"Invalid JSON: {exc}", "INVALID_JSON")
        if not isinstance(message, dict):
            message = {}
        kind, data = message.get("type"), message.get("data")
        try:
            if kind == "reset":
                options = data if isinstance(data, dict) else {}
                ready = self.reset_now(options)
                if ready is None:
                    return self.later(self.reset(options), "observation")
                return self.pool.encode_reset(ready)
            if kind == "step":
                if not isinstance(data, dict):
                    return error('a step message needs "data": the action object', "VALIDATION_ERROR")
                if data.get("type") is not None:  # OpenEnv's MCP actions (list_tools, call_tool)
                    return self.pool.mcp_actions().answer_step(self, data)
                stepped = self.episode.step_now(data)
                if stepped is None:
                    return self.later(self.step(data), "observation")
                return {"type": "observation", "data": _observed(stepped)}
            if kind == "state":
                return {"type": "state", "data": self.state()}
            if kind == "mcp":  # JSON-RPC on this connection's own session
                return self.later(self.pool.mcp_actions().handle(data, self), "mcp")
            if kind == "close":
                return None
            return error(f"Unknown message type: {kind}", "UNKNOWN_TYPE")
        except EpisodeError as exc:
            return _refusal(exc)

    async def later(self, pending: Coroutine[Any, Any, dict[str, Any]], kind: str) -> Reply:
        """The reply `{"type": kind, "data": …}` once `pending` is done; a refusal becomes an error reply."""
        try:
            return {"type": kind, "data": await pending}
        except EpisodeError as exc:
            return _refusal(exc)

    # ---- episode operations (also the HTTP endpoints') -----------------------------------------------------
    def reset_now(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """Reset at once; None (nothing done) when the seed asked for has not been set up yet."""
        seed = _seed_of(data)
        if seed is not None and seed != self.episode.seed:
            base = self.pool.bases.get(seed)
            if base is None:
                return None
            self.episode = base.fork()
        observation, info = self.episode.reset()
        if data.get("episode_id"):
            self.episode.episode_id = str(data["episode_id"])[:255]
            info["episode_id"] = self.episode.episode_id
        return {"observation": {**observation, "info": info}, "reward": None, "done": False}

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        seed = _seed_of(data)
        if seed is not None:
            await self.pool.base(seed)  # the setup of a new seed runs in a thread
        ready = self.reset_now(data)
        assert ready is not None
        return ready

    async def step(self, action: dict[str, Any]) -> dict[str, Any]:
        if action.get("type") is not None:  # OpenEnv's MCP actions (list_tools, call_tool)
            return await self.pool.mcp_actions().astep(self, action)
        return _observed(await self.episode.astep(action))

    def state(self) -> dict[str, Any]:
        return self.episode.state()


class SessionPool:
    def __init__(self, template: Template, max_sessions: int) -> None:
        self.template, self.max_sessions = template, max_sessions
        self.bases: dict[int, Episode] = {}
        self.active = 0
        self._setup = asyncio.Lock()
        self._encoded_tools: dict[int, tuple[list[Any], str]] = {}
        """id of a start's tool list → (the list, kept so the id stays its own; its JSON text)."""
        self.mcp: McpActions | None = None
        """OpenEnv's MCP mode over this pool's sessions (`agentenv_openenv.mcp.McpEndpoint`, set by the app)."""

    def prepare(self) -> None:
        """Run the setup for the default seed before the server says it is healthy."""
        seed = self.template.default_seed()
        self.bases[seed] = Episode(self.template, seed)

    async def base(self, seed: int) -> Episode:
        if seed not in self.bases:
            async with self._setup:  # the task's setup runs in a thread, one seed at a time
                if seed not in self.bases:
                    self.bases[seed] = await asyncio.to_thread(Episode, self.template, seed)
        return self.bases[seed]

    def encode_reset(self, payload: dict[str, Any]) -> str:
        """The reset reply as JSON text. Its observation lists the role's tools with their schemas (50 tools,
        30 KB for support-refund): encoding them took 0.5 ms, more than the reset itself, so each start's list is
        encoded once and spliced in."""
        observation = dict(payload["observation"])
        tools = observation.pop("tools", None)
        rest = json.dumps({**payload, "observation": observation})
        if not isinstance(tools, list):
            return '{"type":"observation","data":' + rest + "}"
        cached = self._encoded_tools.get(id(tools))
        if cached is None or cached[0] is not tools:  # keyed by identity: every fork of a start shares its list
            cached = self._encoded_tools[id(tools)] = (tools, json.dumps(tools))
        head, marker, tail = rest.partition('"observation": {')  # the payload's first key: the first match
        assert marker, rest
        members = '"tools": ' + cached[1] + ("" if tail.startswith("}") else ", ")
        return '{"type":"observation","data":' + head + marker + members + tail + "}"

    def mcp_actions(self) -> McpActions:
        if self.mcp is None:
            raise EpisodeError("bad action: this server has no MCP mode (list_tools, call_tool, mcp messages)")
        return self.mcp

    def open(self) -> Session:
        """A new session on a fork of the default seed's start (prepared before the server answers)."""
        if self.active >= self.max_sessions:
            raise CapacityError(self.active, self.max_sessions)
        self.active += 1
        return Session(self, self.bases[self.template.default_seed()].fork())

    def close(self, session: Session) -> None:
        self.active -= 1

    def shutdown(self) -> None:
        self.template.close()


__all__ = ["Answer", "CapacityError", "EpisodeError", "McpActions", "Reply", "Session", "SessionPool", "error"]
