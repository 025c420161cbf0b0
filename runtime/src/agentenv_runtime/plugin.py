"""The runtime's contributions, registered through the same hooks as any plugin's: the four built-in trigger
kinds and the commands that build, run and inspect worlds and tasks."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentenv.contracts import ClassRef, CliCommand
from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv import Problem
    from agentenv.contracts import TriggerKind

_TRIGGERS = "agentenv_runtime.world.triggers"
_CLI = "agentenv_runtime.cli"
_CONFIG = f"{_CLI}.config_cmds"


@hookimpl
def agentenv_register_trigger_kinds() -> list[ClassRef | type[TriggerKind[Any]]]:
    return [
        ClassRef("time", f"{_TRIGGERS}:TimeTrigger"),
        ClassRef("tool_call", f"{_TRIGGERS}:ToolCallTrigger"),
        ClassRef("state", f"{_TRIGGERS}:StateTrigger"),
        ClassRef("persona", f"{_TRIGGERS}:PersonaTrigger"),
    ]


@hookimpl
def agentenv_register_cli_commands() -> list[CliCommand]:
    return [
        CliCommand("run", "Run a bundle's tasks or a task file, and grade them.", f"{_CLI}.run_cmd:main", argv=True),
        CliCommand("runs", "List stored runs, show one, print its trajectory.", f"{_CLI}.runs_cmd:app"),
        CliCommand("env", "List installed envs and print Environment Cards.", f"{_CLI}.env_cmd:app"),
        CliCommand("steps", "List installed step types; show one's fields.", f"{_CLI}.steps_cmd:app"),
        CliCommand("sandbox", "List sandboxes that runs started; prune leftovers.", f"{_CLI}.sandbox_cmd:app"),
        CliCommand("task", "Task file tools (the JSON Schema for editors).", f"{_CLI}.task_cmd:app"),
        CliCommand(
            "bundle",
            "Bundle tools: export a self-contained copy; the schema of bundle.toml and evals.",
            f"{_CLI}.bundle_cmd:app",
        ),
        CliCommand(
            "registry", "Push, pull and list bundles, tasks, artifacts, agents, envs.", f"{_CLI}.registry_cmd:app"
        ),
        CliCommand("config explain", "What a key does, its type, default, source and reader.", f"{_CONFIG}:explain"),
        CliCommand("config sources", "Every config layer in order, with what each found.", f"{_CONFIG}:sources"),
        CliCommand("config debug", "Everything config loading saw, keys no plugin reads.", f"{_CONFIG}:debug"),
        CliCommand(
            "plugin new",
            "Scaffold a plugin distribution (env, step, sandbox, store, trigger, agent) that passes its own tests.",
            f"{_CLI}.plugin_new:app",
        ),
    ]


@hookimpl
def agentenv_check_install(without: str | None) -> list[Problem]:
    from agentenv import get_host

    from agentenv_runtime.install_check import install_problems

    return install_problems(get_host(), without)


@hookimpl
def agentenv_command_hints() -> dict[str, str]:
    """The first-party plugins' commands (kept in `commands.json`), so a missing one names what to add."""
    import json
    from importlib.resources import files

    return dict(json.loads(files("agentenv_runtime").joinpath("commands.json").read_text(encoding="utf-8")))


if os.environ.get("AGENTENV_EVENTS"):  # the event log's observers exist only when it is asked for (see live.py)
    from agentenv_runtime.events import (  # noqa: F401 - pluggy registers what this module holds
        agentenv_run_finished,
        agentenv_run_started,
        agentenv_step_finished,
        agentenv_step_started,
        agentenv_tool_called,
    )


@hookimpl
def agentenv_config_layer(values: dict[str, Any], sources: dict[str, str], environ: Mapping[str, str]) -> None:
    """`AGENTENV_<TABLE>__<KEY>` variables over the config file (see `config/env_layer.py`)."""
    if any("__" in name and name.upper().startswith("AGENTENV_") for name in environ):
        from agentenv_runtime.config.env_layer import apply

        apply(values, sources, environ)
