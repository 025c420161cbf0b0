"""Contracts for every kind of contribution a plugin can register."""

from agentenv.contracts.agent import AgentKind, AgentResponse, ToolAccess
from agentenv.contracts.base import Contribution, NoSettings, contribution_problem
from agentenv.contracts.bundle import BundleRef
from agentenv.contracts.cli import CliCommand
from agentenv.contracts.runner import Runner
from agentenv.contracts.sandbox import (
    ExecResult,
    NetworkPolicy,
    Sandbox,
    SandboxProvider,
    SandboxSpec,
    SpecRefused,
)
from agentenv.contracts.step import Step, StepContext, StepFailed
from agentenv.contracts.store import (
    DocumentStore,
    ImageStore,
    ObjectStore,
    SecretStore,
    StoreBackend,
    StoreKind,
)
from agentenv.contracts.trigger import Message, ToolCallEvent, TriggerKind

__all__ = [
    "AgentKind",
    "AgentResponse",
    "BundleRef",
    "CliCommand",
    "Contribution",
    "DocumentStore",
    "ExecResult",
    "ImageStore",
    "Message",
    "NetworkPolicy",
    "NoSettings",
    "ObjectStore",
    "Runner",
    "Sandbox",
    "SandboxProvider",
    "SandboxSpec",
    "SecretStore",
    "SpecRefused",
    "Step",
    "StepContext",
    "StepFailed",
    "StoreBackend",
    "StoreKind",
    "ToolAccess",
    "ToolCallEvent",
    "TriggerKind",
    "contribution_problem",
]
