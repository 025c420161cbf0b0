"""Entry module of `agentenv-openenv`: the `agentenv openenv` command (imports nothing else until it runs)."""

from __future__ import annotations

from agentenv.contracts import CliCommand
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands() -> list[CliCommand]:
    return [
        CliCommand(
            "openenv",
            "Serve a task on the OpenEnv wire format (HTTP and WebSocket), one forked episode per session.",
            "agentenv_openenv.cli:main",
            argv=True,
        )
    ]
