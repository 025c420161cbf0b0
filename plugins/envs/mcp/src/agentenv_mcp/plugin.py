"""Entry module of agentenv-mcp: the `agentenv mcp` command. Kept light: the MCP SDK loads only when it runs."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    from agentenv.contracts import CliCommand

    return [
        CliCommand(
            name="mcp",
            help="Try an MCP server as an env: start it, list its tools as a world would, stop it.",
            target="agentenv_mcp.cli:mcp_app",
        )
    ]
