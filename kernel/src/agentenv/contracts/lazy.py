"""Lazy re-exports (PEP 562) for the kernel's façades, `agentenv` and `agentenv.contracts`: a public name is
imported from its private home on first use, so importing a façade imports nothing. Here because contracts are a
leaf (they import only themselves, pydantic and the config), and `agentenv` may import contracts."""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # `agentenv --help` imports this module, and must not import `typing`
    from collections.abc import Callable
    from typing import Any


def lazy_getattr(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`, where `homes` maps each private submodule to its public names."""
    module_of = {name: module for module, names in homes.items() for name in names.split()}

    def __getattr__(name: str) -> Any:
        if name not in module_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module_of[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
