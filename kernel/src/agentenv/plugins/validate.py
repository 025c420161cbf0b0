"""Validate one registered contribution against the base class of its kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentenv.contracts import (
    AgentKind,
    BundleRef,
    CliCommand,
    Runner,
    SandboxProvider,
    Step,
    StoreBackend,
    TriggerKind,
    contribution_problem,
)
from agentenv.env import Env

BASES: dict[str, type] = {
    "envs": Env,
    "sandbox_providers": SandboxProvider,
    "steps": Step,
    "stores": StoreBackend,
    "trigger_kinds": TriggerKind,
    "agent_kinds": AgentKind,
    "runners": Runner,
}


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
    problem = contribution_problem(item, BASES[kind])
    name = getattr(item, "name", repr(item))
    if problem is None and kind == "stores":
        if getattr(item, "kind", None) not in ("document", "object", "secret", "image"):
            return name, f"store {name!r} has no valid `kind` (document, object, secret or image)"
        return f"{item.kind}:{name}", None
    return name, problem
