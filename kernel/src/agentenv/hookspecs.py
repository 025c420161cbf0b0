"""Hook specifications of the `agentenv` plugin project.

Every plugin is a module named by an entry point in the `agentenv.plugins` group. It implements
some of the hooks below with `@hookimpl`. Registration hooks hand the kernel *classes* (each with a
`name`), or `ClassRef(name, "module:Class")` so the class is imported only when a run uses it; the kernel
validates them and keeps them in typed registries (one per kind in `agentenv.contracts.kinds`), so hot paths
call objects and never hooks. Observer hooks are told when runs and steps start and finish, and when a tool is called.

pluggy always calls hooks with keyword arguments; the kernel's typed façade
(`agentenv.plugins.host.PluginHost`) is the only caller. Implementations may accept any subset of a
hook's arguments. Keep plugin modules light: import heavy SDKs inside the functions that use them,
and register classes by `ClassRef` (or import them inside the registration hook bodies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agentenv.contracts import (
        AgentKind,
        BundleRef,
        CliCommand,
        Contribution,
        Environment,
        SandboxProvider,
        Step,
        StoreBackend,
        TriggerKind,
    )
    from agentenv.plugins.problems import Problem

PROJECT = "agentenv"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class AgentenvSpecs:
    """The hooks a plugin may implement. Each registration hook returns a list."""

    @hookspec
    def agentenv_register_envs(self) -> list[type[Environment]]:
        """Simulated apps (subclasses of `agentenv_runtime.Env`), each with a unique `name`."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_sandbox_providers(self) -> list[type[SandboxProvider]]:
        """Sandbox providers (`inline`, `process`, `docker`, …) that run served worlds and agents."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_steps(self) -> list[type[Step[Any]]]:
        """Step types a task can use; `name` is the task file's `type` field."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_stores(self) -> list[type[StoreBackend]]:
        """Store backends; each declares its `kind`: document, object, secret or image."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_trigger_kinds(self) -> list[type[TriggerKind[Any]]]:
        """Trigger kinds (`time`, `tool_call`, `state`, `persona`, …) that world rules can use."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_agent_kinds(self) -> list[type[AgentKind[Any]]]:
        """Agent kinds (`scripted`, `llm`, `a2a`, harnesses) that act in a world through its tools."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_bundles(self) -> list[BundleRef]:
        """Bundles shipped inside the plugin's package: a name and the folder holding `bundle.toml`."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_cli_commands(self) -> list[CliCommand]:
        """Extra `agentenv` sub-commands, loaded only when invoked (see `CliCommand`). Return the same list for the
        same code and `AGENTENV_*` settings: the root help is cached until one of those changes."""
        raise NotImplementedError

    @hookspec
    def agentenv_register_runners(self) -> list[type[Contribution]]:
        """Rollout runners for `agentenv run --runner NAME` (the runtime defines what a runner class does)."""
        raise NotImplementedError

    @hookspec
    def agentenv_check_install(self, without: str | None) -> list[Problem]:
        """Problems a run would meet beyond ranges (`plugin check`); with `without`, what removing it would break."""
        raise NotImplementedError

    @hookspec
    def agentenv_command_hints(self) -> dict[str, str]:
        """Commands that may not be installed → the distribution that brings each, for `no such command` errors."""
        raise NotImplementedError

    @hookspec
    def agentenv_run_started(self, run: dict[str, Any]) -> None:
        """Observer: a run began. `run` holds its id, task name, seed and plugin versions."""

    @hookspec
    def agentenv_run_finished(self, run: dict[str, Any]) -> None:
        """Observer: a run ended; `run` adds status, score and trajectory digest."""

    @hookspec
    def agentenv_step_started(self, run_id: str, step: dict[str, Any]) -> None:
        """Observer: a step of a run began (`step` has its id and type)."""

    @hookspec
    def agentenv_step_finished(self, run_id: str, step: dict[str, Any]) -> None:
        """Observer: a step ended; `step` adds status, timing and output."""

    @hookspec
    def agentenv_tool_called(self, event: dict[str, Any]) -> None:
        """Observer: a world recorded a tool call (the trajectory event as a dict). Worlds call it only when
        some plugin implements it, so it costs nothing otherwise."""

    @hookspec
    def agentenv_config_layer(self, values: dict[str, Any], sources: dict[str, str],
                              environ: Mapping[str, str]) -> None:  # fmt: skip
        """A config layer over the file: change `values` in place and name each changed key's source."""
