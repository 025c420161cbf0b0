"""What an agent validator checks, and the helpers it serves while checking.

- The target: an A2A agent `url`, or a `deploy_agent` step's agent. A deployed agent is checked on a
  **fresh instance** of its kind and settings, acting in a **fork** of its world, served on loopback
  with agentenv-a2a's `build_a2a_app` for the length of the check — so probing never changes the agent
  or the world the task's other steps use.
- A probe world (one tiny env, `a2a_probe`, tool `probe_ping`) served with the gateway: an MCP server
  whose trajectory shows whether the agent really called a tool.
- A peer agent served in-thread that answers every message with a secret token.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from agentenv.contracts import AgentKind, AgentResponse, StepContext, StepFailed, ToolAccess
from agentenv_runtime import Env, tool
from pydantic import BaseModel, ConfigDict, Field

from agentenv_validators.agent_probe import AgentProbe

PROBE_TOOL = "probe_ping"


class AgentTargetSettings(BaseModel):
    """Fields every agent validator shares: which agent to check."""

    model_config = ConfigDict(extra="forbid")

    agent: str | None = Field(
        None, description="Id of the deploy_agent step whose agent to check (a fresh copy is served on loopback)."
    )
    url: str | None = Field(None, description="Base URL of an A2A agent to check instead of `agent`.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers sent to `url` (e.g. Authorization)."
    )
    timeout: float = Field(60.0, gt=0, description="Seconds each request or message may take.")


def agent_target_problems(settings: AgentTargetSettings, step_ids: list[str]) -> list[tuple[str, str]]:
    if settings.agent is not None and settings.url is not None:
        return [("agent", "give either `agent` (a deploy_agent step id) or `url` (an A2A agent), not both")]
    if settings.agent is None and settings.url is None:
        return [("agent", "name the deploy_agent step to check in `agent`, or give the `url` of an A2A agent")]
    if settings.agent is not None and settings.agent not in step_ids:
        return [
            (
                "agent",
                f"no step {settings.agent!r} in this task; name a deploy_agent step (steps: {', '.join(step_ids)})",
            )
        ]
    if settings.url is not None and not settings.url.startswith(("http://", "https://")):
        return [("url", f"{settings.url!r} is not an http(s) URL; give the A2A agent's base URL")]
    if settings.headers and settings.url is None:
        return [("headers", "headers are only sent to a `url`; a deployed agent is served without them")]
    return []


@dataclass
class AgentTarget:
    probe: AgentProbe
    label: str
    deployed: Any = None
    """The deploy_agent resource when the target is a deployed agent (for a second instance)."""
    seed: int = 0

    def token(self, purpose: str) -> str:
        """A deterministic marker for one check (same seed, same token)."""
        digest = hashlib.sha256(f"{self.seed}:{self.label}:{purpose}".encode()).hexdigest()[:8].upper()
        return f"{purpose.upper()}-{digest}"

    @asynccontextmanager
    async def second(self) -> AsyncIterator[AgentProbe | None]:
        """Another instance of the same agent (only for a deployed agent; None for a URL)."""
        if self.deployed is None:
            yield None
            return
        with serve_deployed(self.deployed, self.label, timeout=self.probe.timeout) as probe:
            yield probe


@contextmanager
def serve_deployed(deployed: Any, label: str, *, timeout: float) -> Iterator[AgentProbe]:
    """A fresh instance of a deployed agent, in a fork of its world, served over A2A on loopback."""
    from agentenv_a2a.api import A2aServeError, build_a2a_app, serve_a2a

    agent = deployed.agent
    kind_cls = type(agent)

    def make() -> Any:
        return kind_cls(agent.settings)

    try:
        world = deployed.world.fork()
        tools = world.tool_access(deployed.role)
    except Exception:  # a world served from a sandbox cannot fork: act in it, as the deployed agent does
        tools = deployed.tools
    app = build_a2a_app(
        make(),
        tools,
        name=f"{deployed.kind} agent ({label})",
        description=f"agentenv {deployed.kind!r} agent deployed by step {label!r}, acting as {deployed.role!r}",
        make_agent=make,
    )
    try:
        with serve_a2a(app, host="127.0.0.1", port=0) as url:
            yield AgentProbe(url, timeout=timeout)
    except A2aServeError as exc:
        raise StepFailed(f"could not serve the agent on loopback to check it: {exc}") from None


@asynccontextmanager
async def open_agent_target(
    settings: AgentTargetSettings, ctx: StepContext, step_id: str
) -> AsyncIterator[AgentTarget]:
    seed = int(getattr(ctx, "seed", 0) or 0)
    if settings.agent is not None:
        deployed = ctx.resource(settings.agent, object)
        if not all(hasattr(deployed, field) for field in ("agent", "world", "role", "kind")):
            raise StepFailed(
                f"field `agent`: step {settings.agent!r} did not deploy an agent (it made a "
                f"{type(deployed).__name__}); name a deploy_agent step"
            )
        with serve_deployed(deployed, settings.agent, timeout=settings.timeout) as probe:
            yield AgentTarget(probe, settings.agent, deployed, seed)
        return
    assert settings.url is not None
    yield AgentTarget(
        AgentProbe(settings.url, timeout=settings.timeout, headers=settings.headers), settings.url, None, seed
    )


# ---- the probe world (an MCP server with a tool whose calls are recorded) -----------------------------
class A2aProbeEnv(Env):
    """One table of pings; the validators' MCP server for agents under test."""

    name: ClassVar[str] = "a2a_probe"
    schema: ClassVar[str] = "CREATE TABLE pings (id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL);"

    @tool
    def probe_ping(self, token: str) -> dict[str, Any]:
        """Record a ping from the agent under test and echo its token back.

        Args:
            token: The token the validator asked the agent to send.
        """
        cursor = self.db.execute("INSERT INTO pings (token) VALUES (?)", (token,))
        return {"ping": cursor.lastrowid, "token": token}


@dataclass
class ProbeWorld:
    world: Any
    url: str

    def pings(self) -> list[dict[str, Any]]:
        """The probe tool's calls the world recorded (tool_call events)."""
        return [
            {"args": e.get("args"), "ok": e.get("error") is None}
            for e in self.world.trajectory.events
            if e.get("kind") == "tool_call" and str(e.get("tool", "")).endswith(PROBE_TOOL)
        ]


@contextmanager
def serve_probe_world() -> Iterator[ProbeWorld]:
    from agentenv_gateway.api import ServeError, build_app, serve_in_thread
    from agentenv_runtime import World

    world = World([A2aProbeEnv()], name="a2a-probe")
    try:
        with serve_in_thread(build_app(world), "127.0.0.1", 0) as url:
            yield ProbeWorld(world, url)
    except ServeError as exc:
        raise StepFailed(f"could not serve the probe world on loopback: {exc}") from None


# ---- the peer agent ----------------------------------------------------------------------------------
class _NoTools:
    def list_tools(self) -> list[dict[str, Any]]:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "error": {"code": "unknown_tool", "message": "the peer has no tools"}}


class _PeerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TokenPeer(AgentKind[Any]):
    """Answers every message with its secret token."""

    name: ClassVar[str] = "a2a-validator-peer"
    description: ClassVar[str] = "Tells whoever asks its secret token."

    def __init__(self, token: str) -> None:
        super().__init__(_PeerSettings())
        self.token = token
        self.asked: list[str] = []

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        self.asked.append(prompt)
        return AgentResponse(text=f"The secret token is {self.token}.")


@contextmanager
def serve_peer(token: str) -> Iterator[tuple[str, TokenPeer]]:
    from agentenv_a2a.api import build_a2a_app, serve_a2a

    peer = TokenPeer(token)
    app = build_a2a_app(peer, _NoTools(), name="oracle", description="Knows the secret token.")
    with serve_a2a(app, host="127.0.0.1", port=0) as url:
        yield url, peer
