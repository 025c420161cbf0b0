"""Entry module of `agentenv-model-standin`: the `agentenv model stand-in` command (imported when run)."""

from __future__ import annotations

from agentenv.contracts import CliCommand
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands() -> list[CliCommand]:
    return [
        CliCommand(
            "model",
            "Model endpoints for offline use: `model stand-in` serves a scripted model on loopback.",
            "agentenv_model_standin.cli:app",
        )
    ]
