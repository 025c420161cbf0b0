"""`agentenv openenv serve BUNDLE[:TASK] [--host H] [--port P] [--max-sessions N]` (argparse: cold start counts)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentenv_rl.api import Template


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(prog="agentenv openenv", description="Serve tasks on the OpenEnv wire format.")
    commands = parse.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve", help="Serve one task: HTTP /reset /step /state /health /schema /metadata, /ws."
    )
    serve.add_argument("target", metavar="BUNDLE[:TASK]", help="A bundle (and task), a bundle folder or a task file.")
    serve.add_argument("--host", default="127.0.0.1", help="Address to bind (default 127.0.0.1; loopback unless "
                       "--allow-remote).")
    serve.add_argument("--allow-remote", action="store_true", help="Allow a non-loopback --host (no auth!).")
    serve.add_argument("--port", type=int, default=8000, help="Port (default 8000; 0 picks a free one).")
    serve.add_argument("--max-sessions", type=int, default=64, help="Concurrent WebSocket sessions (default 64).")
    serve.add_argument("--max-steps", type=int, default=100, help="Tool calls before an episode is truncated.")
    serve.add_argument("--header-timeout", type=float, default=10.0, help="Seconds a connection may take to send "
                       "its request head before it is closed (default 10; slow or stalled clients).")
    return parse


def main(argv: Sequence[str]) -> int:
    options = parser().parse_args(list(argv))
    if options.max_sessions < 1 or options.max_steps < 1:
        print("agentenv openenv serve: --max-sessions and --max-steps must be at least 1", file=sys.stderr)
        return 2
    if not options.header_timeout > 0:
        print("agentenv openenv serve: --header-timeout must be more than 0 seconds", file=sys.stderr)
        return 2
    from agentenv_runtime import is_loopback

    if not is_loopback(options.host) and not options.allow_remote:
        print(
            f"agentenv openenv serve: --host {options.host} is not a loopback address; OpenEnv sessions have no "
            "authentication and drive a world, so bind 127.0.0.1, or pass --allow-remote if you mean to expose it",
            file=sys.stderr,
        )
        return 2
    from agentenv.config import ConfigError
    from agentenv_rl.api import EpisodeError, Template
    from agentenv_runtime import TaskError

    try:
        template = Template(options.target, max_steps=options.max_steps)
    except (TaskError, EpisodeError, ConfigError, LookupError) as exc:
        print(f"agentenv openenv serve: {exc}", file=sys.stderr)
        return 2
    return serve(template, options.host, options.port, options.max_sessions, header_timeout=options.header_timeout)


def serve(template: Template, host: str, port: int, max_sessions: int, *, header_timeout: float = 10.0) -> int:
    """Serve until interrupted; prints the URL once the port is bound and the task's start state is ready."""
    import asyncio

    import uvicorn
    from agentenv_runtime import HeaderWaits, server_settings
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from agentenv_openenv.app import build_app
    from agentenv_openenv.socket import session_socket

    app = build_app(template, max_sessions)
    from agentenv import collect_garbage_again

    collect_garbage_again()  # start-up is over (the task's setup ran): without it, closed sessions were never freed
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        ws=session_socket(app.pool),  # `/ws` answered on the connection (see agentenv_openenv.socket)
        **server_settings(H11Protocol, HeaderWaits(header_timeout=header_timeout)),  # slow heads cut off
    )
    server = uvicorn.Server(config)
    bound_startup = server.startup

    async def startup(sockets: Any = None) -> None:
        await bound_startup(sockets=sockets)
        bound = [sock.getsockname()[1] for srv in server.servers for sock in srv.sockets]
        print(
            f"serving on http://{host}:{bound[0] if bound else port} (OpenEnv: /reset /step /state /health /schema "
            "/metadata /ws)",
            flush=True,
        )

    server.startup = startup  # type: ignore[method-assign]
    asyncio.run(server.serve())
    return 0 if server.started else 1
