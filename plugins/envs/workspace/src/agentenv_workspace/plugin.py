"""Entry-point module: registers the workspace env and the code-test verifier step."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("workspace", "agentenv_workspace.env:WorkspaceEnv")]


@hookimpl
def agentenv_register_steps() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("tests_verifier", "agentenv_workspace.verifier:CodeTestsVerifier")]


@hookimpl
def agentenv_register_cli_commands() -> list[Any]:
    from agentenv.contracts import CliCommand

    cli = "agentenv_workspace.cli"
    return [
        CliCommand("workspace", "Workspaces: import Harbor / SWE tasks, prune leftovers.", f"{cli}:app"),
        CliCommand("task import harbor", "A Harbor task folder as a bundle.", f"{cli}:import_harbor"),
        CliCommand("task import swe", "SWE-bench instances as a bundle.", f"{cli}:import_swe"),
    ]
