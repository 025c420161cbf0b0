"""Entry module of `agentenv-gateway`: the `agentenv serve` and `agentenv tools` commands.

Kept light: the MCP SDK, Starlette and uvicorn are imported only when a command runs.
"""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    from agentenv.contracts import CliCommand

    return [
        CliCommand(
            name="serve",
            help="Serve a world over HTTP: Environment Card, MCP, REST + OpenAPI, JSON-RPC data plane.",
            target="agentenv_gateway.cli:serve_app",
        ),
        CliCommand(
            name="tools",
            help="List or call the tools of a served world, with options generated from each tool's schema.",
            target="agentenv_gateway.cli:tools_app",
        ),
    ]
