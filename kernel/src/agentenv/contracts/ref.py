"""Contributions registered by name, so a plugin's classes are imported only when a run uses them."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClassRef:
    """A contribution named `name`, found at `target` (`"package.module:Class"`).

    A registration hook may return these instead of classes. The kernel lists and checks the name at once
    and imports the class on first use, so `agentenv run hello` pays only for the step types and envs the
    task names, not for every one installed. The class is validated when imported; if its own `name` differs
    from the one registered, or the import fails, the contribution is reported as broken then (and
    `agentenv plugin check` imports every one to find such problems ahead of time). A store also names its
    `kind` (document, object, secret or image), which must match the class's.
    """

    name: str
    target: str
    kind: str = ""

    def load(self) -> Any:
        """Import and return what `target` names (unvalidated: the kernel checks it against its kind)."""
        return load_target(self.target)


def load_target(target: str) -> Any:
    """The object a `"package.module:attribute"` string names (class refs, CLI command targets), imported now."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
