"""What a validator checks: a world a `deploy_env` step deployed (served in-thread, as a copy) or a URL.

A deployed world is forked before it is served, so the checks (which load and reset data) never touch the
world the task's other steps use.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agentenv.contracts import StepContext, StepFailed, kinds
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field

from agentenv_validators.client import DEFAULT_TIMEOUT, ProbeError, WorldClient


class TargetSettings(BaseModel):
    """Fields every env validator shares: which world to check."""

    model_config = ConfigDict(extra="forbid")

    env: str | None = Field(
        None, description="Id of the deploy_env step whose world to check (a copy is served on loopback)."
    )
    url: str | None = Field(None, description="Base URL of a served world to check instead of `env`.")
    token: str | None = Field(None, description="Bearer token for `url`: the literal token or env:NAME.")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, description="Seconds each request to the world may take.")


def target_problems(settings: TargetSettings, step_ids: list[str], *, required: bool = True) -> list[tuple[str, str]]:
    """Preflight problems of the target fields."""
    if settings.env is not None and settings.url is not None:
        return [("env", "give either `env` (a deploy_env step id) or `url` (a served world), not both")]
    if settings.env is None and settings.url is None:
        if required:
            return [("env", "name the deploy_env step to check in `env`, or give the `url` of a served world")]
        return []
    if settings.env is not None and settings.env not in step_ids:
        return [
            ("env", f"no step {settings.env!r} in this task; name a deploy_env step (steps: {', '.join(step_ids)})")
        ]
    if settings.url is not None and not settings.url.startswith(("http://", "https://")):
        return [("url", f"{settings.url!r} is not an http(s) URL; give the served world's base URL")]
    if settings.token is not None and settings.url is None:
        return [("token", "a token is only sent to a `url`; a deployed world is served without one")]
    return []


@dataclass
class Target:
    client: WorldClient
    world: Any = None
    """The deployed World (the original, not the served copy), or None for a URL."""

    @property
    def label(self) -> str:
        return f"world {self.world.name}" if self.world is not None else self.client.base


@contextmanager
def serve_world(world: Any, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[WorldClient]:
    """Serve `world` with the gateway on a free loopback port for the duration of the block."""
    from agentenv_gateway.api import ServeError, build_app, serve_in_thread

    app = build_app(world)
    try:
        with serve_in_thread(app, "127.0.0.1", 0) as url:
            yield WorldClient(url, timeout=timeout)
    except ServeError as exc:
        raise StepFailed(f"could not serve the world on loopback to check it: {exc}") from None


@contextmanager
def open_target(settings: TargetSettings, ctx: StepContext) -> Iterator[Target]:
    """The world to check, reachable over HTTP for the length of the block."""
    if settings.env is not None:
        try:
            world = ctx.resource(settings.env, World)
        except StepFailed as exc:
            raise StepFailed(f"field `env`: {exc}") from None
        with serve_world(world.fork(), timeout=settings.timeout) as client:
            yield Target(client, world)
        return
    if settings.url is None:
        raise StepFailed("field `env`: name a deploy_env step, or give `url`")
    try:
        yield Target(WorldClient(settings.url, token=settings.token, timeout=settings.timeout))
    except ProbeError as exc:
        raise StepFailed(str(exc)) from None


def env_classes(world: Any) -> dict[str, tuple[type, Any]]:
    """name → (env class, its settings) of a World's envs."""
    return {name: (type(env), env.settings) for name, env in world.envs.items()}


def installed_classes(names: list[str], host: Any) -> dict[str, tuple[type, Any]]:
    """name → (installed env class, default settings); StepFailed naming what is not installed."""
    found = {}
    for name in names:
        try:
            found[name] = (host.get(kinds.ENVS, name), None)
        except LookupError as exc:
            raise StepFailed(f"env {name!r} is not installed here: {exc}") from None
    return found
