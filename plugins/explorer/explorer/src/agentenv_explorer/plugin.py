"""Entry module of `agentenv-explorer`: the `agentenv up` command.

Kept light: Starlette and uvicorn are imported only when the command runs.
"""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    from agentenv.contracts import CliCommand

    return [
        CliCommand(
            "up",
            "Serve the explorer: an HTTP API and a web UI over stored runs, bundles, envs and plugins.",
            "agentenv_explorer.cli:main",
            argv=True,
        )
    ]
