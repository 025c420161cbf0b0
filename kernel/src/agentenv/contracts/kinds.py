"""Every kind of contribution a plugin can register, each typed by what its registry holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentenv.contracts.registry import Kind

if TYPE_CHECKING:
    from agentenv.contracts.agent import AgentKind
    from agentenv.contracts.base import Contribution
    from agentenv.contracts.bundle import BundleRef
    from agentenv.contracts.cli import CliCommand
    from agentenv.contracts.env import Environment
    from agentenv.contracts.sandbox import SandboxProvider
    from agentenv.contracts.step import Step
    from agentenv.contracts.store import StoreBackend
    from agentenv.contracts.trigger import TriggerKind

_C = "agentenv.contracts."
ENVS: Kind[type[Environment]] = Kind("envs", _C + "env:Environment")
SANDBOX_PROVIDERS: Kind[type[SandboxProvider]] = Kind("sandbox_providers", _C + "sandbox:SandboxProvider")
STEPS: Kind[type[Step[Any]]] = Kind("steps", _C + "step:Step")
STORES: Kind[type[StoreBackend]] = Kind("stores", _C + "store:StoreBackend")
"""Keyed `kind:name` (`document:sqlite`): the four store kinds share names freely."""
TRIGGER_KINDS: Kind[type[TriggerKind[Any]]] = Kind("trigger_kinds", _C + "trigger:TriggerKind")
AGENT_KINDS: Kind[type[AgentKind[Any]]] = Kind("agent_kinds", _C + "agent:AgentKind")
BUNDLES: Kind[BundleRef] = Kind("bundles")
CLI_COMMANDS: Kind[CliCommand] = Kind("cli_commands")
RUNNERS: Kind[type[Contribution]] = Kind("runners", _C + "base:Contribution")

ALL: tuple[Kind[Any], ...] = (ENVS, SANDBOX_PROVIDERS, STEPS, STORES, TRIGGER_KINDS, AGENT_KINDS, BUNDLES,
                              CLI_COMMANDS, RUNNERS)  # fmt: skip
BY_NAME: dict[str, Kind[Any]] = {kind.name: kind for kind in ALL}
