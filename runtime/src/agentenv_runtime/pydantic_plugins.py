"""Spare pydantic its plugin scan, and the import of `importlib.metadata`, when no installed distribution declares
a pydantic plugin.

Before it builds its first validator, pydantic's plugin loader (`pydantic.plugin._loader`) reads the entry points
of every installed distribution to find plugins (the `pydantic` entry-point group): a tenth of `agentenv run
hello`. The loader imports `importlib.metadata` to do it, which with the `email`, `zipfile` and `csv` modules it
pulls in is another twentieth. Whether any distribution declares a pydantic plugin is a fact of the installed
metadata alone, so it is cached like plugin discovery, until a distribution is installed or removed
(`agentenv.plugins.cache`).

When none does, and pydantic has not loaded its loader yet, a stand-in takes the loader's place in `sys.modules`:
its `get_plugins()` gives the empty table pydantic's own scan would have found, so validation is unchanged. Any
other name read from it loads pydantic's real loader (which then replaces the stand-in), told the same empty
table. When pydantic had loaded its loader already, it is given that table directly, unless it has scanned.
When a distribution declares a plugin, or `PYDANTIC_DISABLE_PLUGINS` is set (pydantic's own switch), nothing is
touched. The loader's module name and its private `_plugins` table are pydantic 2.x's; a pydantic without them is
left to scan as usual.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from agentenv import cached

GROUP = "pydantic"
"""The entry-point group pydantic loads its plugins from."""
LOADER = "pydantic.plugin._loader"
"""pydantic's plugin loader module: `get_plugins()`, and the table `_plugins` it fills on first use."""


def _declared() -> bool:
    from importlib.metadata import entry_points

    return bool(entry_points(group=GROUP))


def skip_empty_plugin_scan() -> None:
    """Tell pydantic it has no plugins, when that is what its scan would find (see the module's docstring)."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or cached("pydantic-plugins", _declared, os.environ):
        return
    loader = sys.modules.get(LOADER)
    if loader is None:
        sys.modules[LOADER] = _Unscanned(LOADER)
    elif getattr(loader, "_plugins", ()) is None:  # loaded, not scanned yet
        vars(loader)["_plugins"] = {}


def _no_plugins() -> tuple[()]:
    return ()


class _Unscanned(types.ModuleType):
    """The stand-in for pydantic's plugin loader while no plugin is installed (see the module's docstring)."""

    def __init__(self, name: str) -> None:
        super().__init__(name, "pydantic's plugin loader, told that no distribution declares a pydantic plugin")
        self.get_plugins = _no_plugins

    def __getattr__(self, name: str) -> Any:
        """Any other name: load pydantic's own loader in the stand-in's place, with the same empty table."""
        if name.startswith("__"):  # dunders a module may lack (`__path__`, `__file__`) are looked up by importers
            raise AttributeError(name)
        if sys.modules.get(LOADER) is self:
            del sys.modules[LOADER]
        import importlib

        real = importlib.import_module(LOADER)
        if getattr(real, "_plugins", ()) is None:
            vars(real)["_plugins"] = {}
        return getattr(real, name)
