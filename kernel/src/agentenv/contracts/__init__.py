"""Contracts for every kind of contribution a plugin can register.

Names are imported on first use (PEP 562), so `from agentenv.contracts import CliCommand` in a plugin's
hook stays as light as the one module it needs: `agentenv --help` must not pay for pydantic. The kinds of
contribution (`kinds.STEPS`, …) are in `agentenv.contracts.kinds`.

This package is a leaf: it imports only the standard library, pydantic and `agentenv.config`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # explicit re-exports for type checkers; at run time __getattr__ imports them
    from agentenv.contracts.agent import AgentKind as AgentKind
    from agentenv.contracts.agent import AgentResponse as AgentResponse
    from agentenv.contracts.agent import ToolAccess as ToolAccess
    from agentenv.contracts.base import Contribution as Contribution
    from agentenv.contracts.base import NoSettings as NoSettings
    from agentenv.contracts.base import contribution_problem as contribution_problem
    from agentenv.contracts.bundle import BundleRef as BundleRef
    from agentenv.contracts.cli import CliCommand as CliCommand
    from agentenv.contracts.env import Environment as Environment
    from agentenv.contracts.ref import ClassRef as ClassRef
    from agentenv.contracts.registry import Kind as Kind
    from agentenv.contracts.registry import Registered as Registered
    from agentenv.contracts.registry import Registries as Registries
    from agentenv.contracts.sandbox import ExecResult as ExecResult
    from agentenv.contracts.sandbox import NetworkPolicy as NetworkPolicy
    from agentenv.contracts.sandbox import Sandbox as Sandbox
    from agentenv.contracts.sandbox import SandboxProvider as SandboxProvider
    from agentenv.contracts.sandbox import SandboxSpec as SandboxSpec
    from agentenv.contracts.sandbox import SpecRefused as SpecRefused
    from agentenv.contracts.step import Step as Step
    from agentenv.contracts.step import StepContext as StepContext
    from agentenv.contracts.step import StepFailed as StepFailed
    from agentenv.contracts.store import DocumentStore as DocumentStore
    from agentenv.contracts.store import ImageStore as ImageStore
    from agentenv.contracts.store import ObjectStore as ObjectStore
    from agentenv.contracts.store import SecretStore as SecretStore
    from agentenv.contracts.store import StoreBackend as StoreBackend
    from agentenv.contracts.store import StoreKind as StoreKind
    from agentenv.contracts.trigger import Message as Message
    from agentenv.contracts.trigger import ToolCallEvent as ToolCallEvent
    from agentenv.contracts.trigger import TriggerKind as TriggerKind
    from agentenv.contracts.trigger import WorldView as WorldView

_HOMES = {
    "agent": "AgentKind AgentResponse ToolAccess",
    "base": "Contribution NoSettings contribution_problem",
    "bundle": "BundleRef",
    "cli": "CliCommand",
    "env": "Environment",
    "ref": "ClassRef",
    "registry": "Kind Registered Registries",
    "sandbox": "ExecResult NetworkPolicy Sandbox SandboxProvider SandboxSpec SpecRefused",
    "step": "Step StepContext StepFailed",
    "store": "DocumentStore ImageStore ObjectStore SecretStore StoreBackend StoreKind",
    "trigger": "Message ToolCallEvent TriggerKind WorldView",
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names.split()}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'agentenv.contracts' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agentenv.contracts.{module}"), name)
    globals()[name] = value
    return value
