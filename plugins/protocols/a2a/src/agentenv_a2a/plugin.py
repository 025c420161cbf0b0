"""Entry module of `agentenv-a2a`: the `a2a` agent kind and the `agentenv a2a-serve` command.

Kept light: the a2a SDK is imported only by the code that talks A2A, never at registration.
"""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_agent_kinds() -> list[Any]:
    """`a2a` drives a remote A2A agent by URL."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("a2a", "agentenv_a2a.agent:A2aAgent"),
    ]


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    """`agentenv a2a-serve` serves a world's agent as an A2A agent (typer app, imported when run)."""
    from agentenv.contracts import CliCommand

    return [
        CliCommand(
            name="a2a-serve",
            help="Serve an agent acting in a world as an A2A agent (card, SendMessage, GetTask).",
            target="agentenv_a2a.cli:app",
        )
    ]
