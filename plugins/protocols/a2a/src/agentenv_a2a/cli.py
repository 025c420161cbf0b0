"""`agentenv a2a-serve`: build a world, make an agent act in it, and serve that agent as an A2A agent.

Imported only when the command runs (see `CliCommand`), so typer, uvicorn and the SDK stay off the
path of `agentenv --help`.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from agentenv import fail
from agentenv.contracts import kinds
from agentenv_runtime import is_loopback

app = typer.Typer(add_completion=False, help="Serve an agent acting in a world as an A2A agent.")
def parse_settings(raw: str) -> dict[str, Any]:
    """`--agent-settings`: a JSON object, or `@FILE` naming a JSON file."""
    source = "--agent-settings"
    if raw.startswith("@"):
        path = Path(raw[1:])
        source = f"--agent-settings file {path}"
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{source}: cannot read it ({exc.strerror}); give an existing JSON file") from exc
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f'{source}: not valid JSON ({exc}); give an object such as \'{{"policy": "p.json"}}\''
        ) from exc
    if not isinstance(value, dict):
        raise ValueError(f"{source}: must be a JSON object, not {type(value).__name__}")
    return value


def build_served_agent(
    *,
    env: str,
    artifacts: list[str],
    role: str,
    agent_kind: str,
    agent_settings: dict[str, Any],
    name: str | None,
    description: str | None,
    url: str | None,
    plugin_host: Any = None,
) -> tuple[Any, Any]:
    """(ASGI app, world) for the command; errors are `ValueError`/`LookupError` naming the option to fix."""
    from agentenv import get_host
    from agentenv_runtime import WorldToolAccess, build_world
    from pydantic import ValidationError

    from agentenv_a2a.server import build_a2a_app

    plugin_host = plugin_host or get_host()
    world = build_world(env, artifacts=artifacts, host=plugin_host)
    if role not in world.rbac.roles:
        raise ValueError(f"--role: world {world.name!r} has no role {role!r} (roles: {', '.join(world.rbac.roles)})")
    try:
        kind_cls = plugin_host.get(kinds.AGENT_KINDS, agent_kind)
    except LookupError as exc:
        raise LookupError(f"--agent-kind: {exc}") from exc
    try:
        settings = kind_cls.Settings.model_validate(agent_settings)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"--agent-settings for agent kind {agent_kind!r}: {problems}") from exc
    agent = kind_cls(settings)
    served = build_a2a_app(
        agent,
        WorldToolAccess(world, role),
        name=name or f"{agent_kind} in {world.name}",
        description=description or f"agentenv agent of kind {agent_kind!r} acting in world {world.name!r} as {role!r}",
        url=url,
    )
    return served, world


@app.command()
def serve(
    env: Annotated[str, typer.Option("--env", help="Env names joined by commas (helpdesk,email).")],
    agent_kind: Annotated[str, typer.Option("--agent-kind", help="Installed agent kind (agentenv plugin list).")],
    artifact: Annotated[list[str], typer.Option("--artifact", "-a", help="NAME or ENV=NAME_OR_PATH; repeatable.")] = [],  # noqa: B006
    role: Annotated[str, typer.Option(help="Role the agent acts as in the world.")] = "default",
    agent_settings: Annotated[
        str, typer.Option("--agent-settings", help="Agent settings: a JSON object or @FILE.")
    ] = "{}",
    host: Annotated[str, typer.Option(help="Address to bind (loopback unless --allow-remote).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to bind; 0 picks a free one.")] = 8000,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Allow binding a non-loopback address (no auth!).")
    ] = False,
    name: Annotated[str | None, typer.Option(help="Agent name on the card.")] = None,
    description: Annotated[str | None, typer.Option(help="Agent description on the card.")] = None,
    public_url: Annotated[
        str | None, typer.Option("--public-url", help="Base URL the card advertises (default: as requested).")
    ] = None,
    max_tasks: Annotated[
        int, typer.Option("--max-tasks", help="Tasks kept for GetTask; past it the oldest finished go (default 1000).")
    ] = 1000,
    task_ttl: Annotated[
        float, typer.Option("--task-ttl", help="Seconds a finished task is kept (default 3600).")
    ] = 3600.0,
) -> None:
    """Serve an agent acting in a world as an A2A agent until Ctrl-C."""
    from agentenv_a2a.retention import check_limits

    try:
        check_limits(max_tasks, task_ttl)
    except ValueError as exc:
        fail(str(exc))
    if not is_loopback(host) and not allow_remote:
        fail(
            f"--host {host} is not a loopback address; the A2A endpoint has no authentication and drives a "
            "world, so bind 127.0.0.1, or pass --allow-remote if you really mean to expose it"
        )
    from agentenv_runtime import ArtifactError, WorldError

    from agentenv_a2a.server import A2aServeError, serve_a2a

    try:
        served, world = build_served_agent(
            env=env,
            artifacts=artifact,
            role=role,
            agent_kind=agent_kind,
            agent_settings=parse_settings(agent_settings),
            name=name,
            description=description,
            url=public_url,
        )
    except (WorldError, ArtifactError, ValueError, LookupError) as exc:
        fail(str(exc))
        return
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with serve_a2a(served, host=host, port=port, max_tasks=max_tasks, task_ttl=task_ttl) as url:
            print(f"A2A agent serving world {world.name!r} at {url}", flush=True)
            print(f"  card: {url}/.well-known/agent-card.json  (Ctrl-C to stop)", flush=True)
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:
        pass
    except A2aServeError as exc:
        fail(str(exc))
    print(f"stopped; the world recorded {len(world.trajectory.events)} trajectory events", file=sys.stderr)
