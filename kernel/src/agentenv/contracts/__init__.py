"""Contracts for every kind of contribution a plugin can register.

Names are imported on first use (PEP 562), so `from agentenv.contracts import CliCommand` in a plugin's
hook stays as light as the one module it needs: `agentenv --help` must not pay for pydantic. The kinds of
contribution (`kinds.STEPS`, …) are in `agentenv.contracts.kinds`.

This package is a leaf: it imports only the standard library, pydantic (and its typing_extensions) and
`agentenv.config`.
"""

from __future__ import annotations

from agentenv.contracts.lazy import lazy_getattr

TYPE_CHECKING = False  # not `typing`'s: `agentenv --help` imports this package, and must not import `typing`

if TYPE_CHECKING:  # for type checkers (exported through __all__); at run time __getattr__ imports them
    from agentenv.contracts import kinds
    from agentenv.contracts.agent import AgentKind, AgentResponse, ToolAccess
    from agentenv.contracts.base import Configured, Contribution, NoSettings, SettingsT, contribution_problem
    from agentenv.contracts.bundle import BundleRef
    from agentenv.contracts.cli import CliCommand
    from agentenv.contracts.env import Environment
    from agentenv.contracts.ref import ClassRef
    from agentenv.contracts.registry import Kind, Registered, Registries
    from agentenv.contracts.sandbox import ExecResult, NetworkPolicy, Sandbox, SandboxProvider, SandboxSpec, SpecRefused
    from agentenv.contracts.step import Step, StepContext, StepFailed
    from agentenv.contracts.store import DocumentStore, ImageStore, ObjectStore, SecretStore, StoreBackend, StoreKind
    from agentenv.contracts.trigger import Message, ToolCallEvent, TriggerKind, WorldView

__all__ = ["AgentKind", "AgentResponse", "BundleRef", "ClassRef", "CliCommand", "Configured", "Contribution"]
__all__ += ["DocumentStore", "SettingsT"]
__all__ += ["Environment", "ExecResult", "ImageStore", "Kind", "Message", "NetworkPolicy", "NoSettings", "ObjectStore"]
__all__ += ["Registered", "Registries", "Sandbox", "SandboxProvider", "SandboxSpec", "SecretStore", "SpecRefused"]
__all__ += ["Step", "StepContext", "StepFailed", "StoreBackend", "StoreKind", "ToolAccess", "ToolCallEvent"]
__all__ += ["TriggerKind", "WorldView", "contribution_problem", "kinds"]
_HOMES = {  # module -> the public names it holds
    "agent": "AgentKind AgentResponse ToolAccess",
    "base": "Configured Contribution NoSettings SettingsT contribution_problem", "bundle": "BundleRef",
    "cli": "CliCommand", "env": "Environment", "ref": "ClassRef", "registry": "Kind Registered Registries",
    "sandbox": "ExecResult NetworkPolicy Sandbox SandboxProvider SandboxSpec SpecRefused",
    "step": "Step StepContext StepFailed",
    "store": "DocumentStore ImageStore ObjectStore SecretStore StoreBackend StoreKind",
    "trigger": "Message ToolCallEvent TriggerKind WorldView",
}
__getattr__ = lazy_getattr(__name__, _HOMES)
