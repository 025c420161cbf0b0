"""Spare pydantic its plugin scan when no installed distribution declares a pydantic plugin.

Before it builds its first validator, pydantic reads the entry points of every installed distribution to find
plugins (the `pydantic` entry-point group): a tenth of `agentenv run hello`. Whether any distribution declares
one is a fact of the installed metadata alone, so it is cached like plugin discovery, until a distribution is
installed or removed (`agentenv.plugins.cache`). When none does, pydantic is given the empty plugin table its
own scan would have found; validation is unchanged. When one does, when `PYDANTIC_DISABLE_PLUGINS` is set
(pydantic's own switch) or when pydantic already looked, nothing is touched. The table is pydantic's private
`pydantic.plugin._loader._plugins` (pydantic 2.x); a pydantic without it is left to scan as usual.
"""

from __future__ import annotations

import os

from agentenv import cached

GROUP = "pydantic"
"""The entry-point group pydantic loads its plugins from."""


def _declared() -> bool:
    from importlib.metadata import entry_points

    return bool(entry_points(group=GROUP))


def skip_empty_plugin_scan() -> None:
    """Tell pydantic it has no plugins, when that is what its scan would find (see the module's docstring)."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or cached("pydantic-plugins", _declared, os.environ):
        return
    from pydantic.plugin import _loader

    if getattr(_loader, "_plugins", ()) is None:  # not scanned yet
        _loader._plugins = {}
