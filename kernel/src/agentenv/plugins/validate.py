"""Validate one registered contribution against the base class of its kind."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from agentenv.contracts.bundle import BundleRef
from agentenv.contracts.cli import CliCommand
from agentenv.contracts.ref import ClassRef

STORE_KINDS = ("document", "object", "secret", "image")
BASES: dict[str, tuple[str, str]] = {
    "envs": ("agentenv.env", "Env"),
    "sandbox_providers": ("agentenv.contracts.sandbox", "SandboxProvider"),
    "steps": ("agentenv.contracts.step", "Step"),
    "stores": ("agentenv.contracts.store", "StoreBackend"),
    "trigger_kinds": ("agentenv.contracts.trigger", "TriggerKind"),
    "agent_kinds": ("agentenv.contracts.agent", "AgentKind"),
    "runners": ("agentenv.contracts.runner", "Runner"),
}
"""Base class per kind, imported only when a contribution of that kind is validated (bundles and CLI
commands need no pydantic, which keeps `agentenv --help` fast)."""


def validate_contribution(kind: str, item: Any) -> tuple[str, str | None]:
    """(registry key, problem or None). Stores are keyed `kind:name` since kinds share names freely."""
    if kind == "bundles":
        if not isinstance(item, BundleRef):
            return repr(item), f"bundle {item!r} is not an agentenv.contracts.BundleRef"
        if not (Path(item.path) / "bundle.toml").is_file():
            return item.name, f"bundle {item.name!r}: {item.path}/bundle.toml does not exist"
        return item.name, None
    if kind == "cli_commands":
        if not isinstance(item, CliCommand) or ":" not in item.target:
            return repr(item), f"{item!r} is not a CliCommand with a 'module:attribute' target"
        return item.name, None
    if isinstance(item, ClassRef):
        if not (isinstance(item.name, str) and item.name and item.target.count(":") == 1):
            return repr(item), f"{item!r} needs a `name` and a 'module:Class' target"
        name, problem = item.name, None
    else:
        from agentenv.contracts.base import contribution_problem

        module, attr = BASES[kind]
        problem = contribution_problem(item, getattr(importlib.import_module(module), attr))
        name = getattr(item, "name", repr(item))
    if problem is None and kind == "stores":
        if getattr(item, "kind", None) not in STORE_KINDS:
            return name, f"store {name!r} has no valid `kind` ({', '.join(STORE_KINDS)})"
        return f"{item.kind}:{name}", None
    return name, problem
