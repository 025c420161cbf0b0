"""Pydantic's plugin loader, answered from the discovery cache when no pydantic plugin is installed.

The first pydantic model a process builds imports pydantic's plugin loader, which imports
`importlib.metadata` (with `email`, `zipfile`, `csv`, `tempfile`, …) and reads the entry points of every
installed distribution: about a twentieth of `agentenv run hello`, to learn, almost always, that no
distribution declares a `pydantic` plugin. That only changes when something is installed or removed, so
the answer is cached with plugin discovery (`agentenv.cached`, keyed by the installed distributions). When
no plugin is declared, the loader module is made here with the answer pydantic's own gives then: no
plugins (`get_plugins()` is all pydantic asks of it). When one is declared, or the cache is off, pydantic's
loader runs as usual.

`install()` (called when `agentenv_runtime` is imported, before any model is built) puts a finder for that
one module first on `sys.meta_path`; it answers once and removes itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # importlib.abc imports importlib.resources and more: typing only
    from importlib.abc import Loader

LOADER = "pydantic.plugin._loader"
GROUP = "pydantic"
"""The entry-point group pydantic loads plugins from."""


def no_plugins() -> tuple[()]:
    """What pydantic's `get_plugins()` returns when no distribution declares a plugin."""
    return ()


def declared() -> bool:
    """Whether an installed distribution declares a pydantic plugin (cached until installs change)."""
    from agentenv import cached

    def scan() -> bool:
        from importlib.metadata import entry_points

        return bool(entry_points(group=GROUP))

    return bool(cached("pydantic-plugins", scan, os.environ))


class _LoaderFinder:
    """Finds `pydantic.plugin._loader` only, and only when no plugin is declared; then steps aside."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        if name != LOADER:
            return None
        uninstall()
        try:
            if declared():
                return None
        except Exception:  # the cache or the metadata could not be read: pydantic's own loader decides
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, cast("Loader", self), origin=__file__)

    def create_module(self, spec: Any) -> None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        module.PYDANTIC_ENTRY_POINT_GROUP = GROUP  # type: ignore[attr-defined]
        module._plugins = {}  # type: ignore[attr-defined]
        module._loading_plugins = False  # type: ignore[attr-defined]
        module.get_plugins = no_plugins  # type: ignore[attr-defined]


def install() -> None:
    """Answer pydantic's plugin lookup from the cache, unless pydantic has already looked."""
    if LOADER not in sys.modules and not any(isinstance(f, _LoaderFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _LoaderFinder())


def uninstall() -> None:
    """Take the finder off the path (a new list: the import machinery may be iterating the old one)."""
    sys.meta_path = [finder for finder in sys.meta_path if not isinstance(finder, _LoaderFinder)]
