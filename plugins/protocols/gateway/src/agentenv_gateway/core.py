"""The served world and how requests reach it.

Every transport (MCP, REST, JSON-RPC) goes through one `Gateway`: it owns the world, the token → role
table, the limits, and the rule that world calls never overlap (one lock). Slow work runs on one dedicated
world thread (`limits.world_thread`, the default), so a slow call or a maximal batch never holds the event
loop: `/health` and other sessions are answered meanwhile. A single tool call or listing that took less
than `INLINE_BELOW` seconds on its recent calls runs inline on the loop instead, when the world thread is idle: the
thread hand-off (two wake-ups and interpreter-lock hand-overs) cost about a fifth of a served call's CPU,
far more than such a call holds the loop. With upstream MCP servers every call goes to the world thread
(their tools wait on another process). With `world_thread = false` every call runs inline; what could hold
the loop is then bounded only by the limits and by batches running a chunk at a time.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from agentenv_runtime import World

from agentenv_gateway.auth import CONTROL_ROLE, check_token_roles, invert_tokens
from agentenv_gateway.limits import GatewayLimits

T = TypeVar("T")
ROLE_SCOPE_KEY = "agentenv.role"
"""Where the outer ASGI layer leaves the caller's acting role in the request scope (read by the MCP handlers)."""
TOKEN_ROLE_SCOPE_KEY = "agentenv.token_role"
"""The role the request's token opened (a control caller may act as another role)."""
INLINE_BELOW = 0.001
"""Seconds: a keyed call whose recent cost is below this runs inline on the event loop (the world thread idle)."""


class BodyTooLarge(Exception):
    """A request body over `limits.max_body_bytes` (answered 413)."""


class Gateway:
    def __init__(
        self,
        world: World,
        *,
        tokens: Mapping[str, str] | None = None,
        control_roles: Iterable[str] = (CONTROL_ROLE,),
        limits: GatewayLimits | None = None,
        offload: bool = False,
        reset_to: str = "loaded",
    ) -> None:
        if reset_to not in ("loaded", "empty"):
            raise ValueError(f"reset_to: {reset_to!r} must be `loaded` (back to the last load) or `empty` (clear)")
        self.world = world
        self.reset_to = reset_to
        """What `data/reset` without `to` means: `loaded` (ours) or `empty` (the reference protocol's)."""
        self.by_token = invert_tokens(tokens)
        self.control_roles = frozenset(control_roles)
        check_token_roles(tokens, world.rbac.roles, self.control_roles)
        self.limits = limits or GatewayLimits()
        world.argument_limits = self.limits.arguments
        self.initial_rbac = world.rbac.state()
        self.offload = offload or self.limits.world_thread
        self.inline_allowed = not offload
        """False when the world fronts upstream servers: their calls wait on another process."""
        self._worker: Any = None
        self._world_lock = threading.Lock()
        self._cost: dict[str, float] = {}
        """Recent seconds per call key (a slow call counts for a few later ones: halved at each call)."""

    @property
    def auth(self) -> bool:
        return bool(self.by_token)

    def may_control(self, role: str) -> bool:
        """The data plane changes the world under the agent's feet: with tokens only control roles use it."""
        return not self.auth or role in self.control_roles

    async def run(self, func: Callable[..., T], /, *args: Any, inline_key: str | None = None, **kwargs: Any) -> T:
        """Run `func` against the world, never two at once: on the world thread when offloading, else inline.

        `inline_key` names a call that is usually cheap (a tool call by tool name, a listing). Its first call runs on
        the world thread and is timed; while its recent cost stays under `INLINE_BELOW` and the world thread is
        idle, later ones run inline, skipping the hand-off (a tool that waits on something stays on the thread).
        Data-plane work and batches pass no key: they always go to the world thread."""
        if not self.offload:
            return func(*args, **kwargs)
        if (
            inline_key is not None
            and self.inline_allowed
            and self._cost.get(inline_key, INLINE_BELOW) < INLINE_BELOW
            and self._world_lock.acquire(blocking=False)
        ):
            try:
                return self._timed(inline_key, func, args, kwargs)
            finally:
                self._world_lock.release()
        import asyncio

        if self._worker is None:
            from concurrent.futures import ThreadPoolExecutor

            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentenv-world")
        job = functools.partial(self._on_world_thread, inline_key, func, args, kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._worker, job)

    def tool_key(self, name: str) -> str:
        """The `inline_key` of a call to tool `name` (unknown names share one key, so the table stays bounded)."""
        return "call:" + (name if name in self.world.tools else "?")

    def _on_world_thread(self, key: str | None, func: Callable[..., T], args: Any, kwargs: Any) -> T:
        with self._world_lock:
            return func(*args, **kwargs) if key is None else self._timed(key, func, args, kwargs)

    def _timed(self, key: str, func: Callable[..., T], args: Any, kwargs: Any) -> T:
        started = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            self._cost[key] = max(time.perf_counter() - started, self._cost.get(key, 0.0) / 2)

    def close(self) -> None:
        """Let the world thread finish what it runs and end."""
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None


def dumps(value: Any) -> bytes:
    """Compact JSON; anything unexpected (a datetime slipping through) becomes its string. Text that is not
    valid Unicode (a lone surrogate) is sent as its JSON escape instead of failing the response."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), default=str).encode()
