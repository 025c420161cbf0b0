"""Entry module of `agentenv-rl`: adds `agentenv runs export` to the runtime's `runs` group.

Nothing heavy is imported here: the episode API, gymnasium and pyarrow load only when used.
"""

from __future__ import annotations

from agentenv.contracts import CliCommand
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands() -> list[CliCommand]:
    return [
        CliCommand(
            "runs export",
            "Export stored runs for trainers: chat-format JSON lines or Parquet, one trajectory per row.",
            "agentenv_rl.export_cmd:export",
        ),
    ]
