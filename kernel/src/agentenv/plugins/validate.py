"""Validate one registered contribution against its kind."""

from __future__ import annotations

import os
from typing import Any

from agentenv.contracts.bundle import BundleRef
from agentenv.contracts.cli import CliCommand
from agentenv.contracts.ref import ClassRef, load_target
from agentenv.contracts.registry import Kind

STORE_KINDS = ("document", "object", "secret", "image")


def validate_contribution(kind: Kind[Any], item: Any) -> tuple[str, str | None]:
    """(registry key, problem or None). Stores are keyed `kind:name` since kinds share names freely.

    A kind's base class is imported only when a contribution of that kind is validated (bundles and CLI
    commands need no pydantic, which keeps `agentenv --help` fast).
    """
    if kind.name == "bundles":
        if not isinstance(item, BundleRef):
            return repr(item), f"bundle {item!r} is not an agentenv.contracts.BundleRef"
        if not os.path.isfile(os.path.join(item.path, "bundle.toml")):  # os.path: no pathlib for --help
            return item.name, f"bundle {item.name!r}: {item.path}/bundle.toml does not exist"
        return item.name, None
    if kind.name == "cli_commands":
        if not isinstance(item, CliCommand) or ":" not in item.target:
            return repr(item), f"{item!r} is not a CliCommand with a 'module:attribute' target"
        return item.name, None
    if isinstance(item, ClassRef):
        if not (isinstance(item.name, str) and item.name and item.target.count(":") == 1):
            return repr(item), f"{item!r} needs a `name` and a 'module:Class' target"
        name, problem = item.name, None
    else:
        from agentenv.contracts.base import contribution_problem

        problem = contribution_problem(item, load_target(kind.base))
        name = getattr(item, "name", repr(item))
    if problem is None and kind.name == "stores":
        if getattr(item, "kind", None) not in STORE_KINDS:
            return name, f"store {name!r} has no valid `kind` ({', '.join(STORE_KINDS)})"
        return f"{item.kind}:{name}", None
    return name, problem
