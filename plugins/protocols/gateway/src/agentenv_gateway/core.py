"""The served world and how requests reach it.

Every transport (MCP, REST, JSON-RPC) goes through one `Gateway`: it owns the world, the token → role
table, the limits, and the rule that world calls never overlap. World calls run on one dedicated world
thread (`limits.world_thread`, the default, and always when the world fronts upstream MCP servers), so a
slow call or a maximal batch never holds the event loop: `/health` and other sessions are answered
meanwhile. With `world_thread = false` they run inline on the loop, which skips the thread hand-off; what
could hold the loop is then bounded only by the limits and by batches running a chunk at a time.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from agentenv_runtime.world.world import World

from agentenv_gateway.auth import CONTROL_ROLE, invert_tokens
from agentenv_gateway.limits import GatewayLimits

T = TypeVar("T")
ROLE_SCOPE_KEY = "agentenv.role"
"""Where the outer ASGI layer leaves the caller's acting role in the request scope (read by the MCP handlers)."""
TOKEN_ROLE_SCOPE_KEY = "agentenv.token_role"
"""The role the request's token opened (a control caller may act as another role)."""


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
        self.limits = limits or GatewayLimits()
        world.argument_limits = self.limits.arguments
        self.initial_rbac = world.rbac.state()
        self.offload = offload or self.limits.world_thread
        self._worker: Any = None

    @property
    def auth(self) -> bool:
        return bool(self.by_token)

    def may_control(self, role: str) -> bool:
        """The data plane changes the world under the agent's feet: with tokens only control roles use it."""
        return not self.auth or role in self.control_roles

    async def run(self, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run `func` against the world, never two at once: inline, or on the world thread when offloading (one
        worker thread serialises the calls)."""
        if not self.offload:
            return func(*args, **kwargs)
        import asyncio

        if self._worker is None:
            from concurrent.futures import ThreadPoolExecutor

            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentenv-world")
        return await asyncio.get_running_loop().run_in_executor(self._worker, functools.partial(func, *args, **kwargs))

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
