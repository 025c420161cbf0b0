"""The explorer's own hook: other plugins add a page or a panel to the UI without the kernel knowing.

A plugin names a module in the `agentenv.explorer` entry-point group; the module holds functions marked
`@explorer_hookimpl` (from `agentenv_explorer.api`). The hook is `explorer_panels()`, not `agentenv_`-prefixed:
the kernel refuses such names that are not its own hooks, and this one may sit in a plugin's entry module. It
returns `Panel`s: each has a data function the API serves at `GET /api/panels/NAME/data/RUN_ID` and an ES
module (a file in the plugin's own package) that the page loads and calls as `render(element, data)`. A browser
env, say, shows its screenshots in the run page this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

PROJECT = "agentenv_explorer"
GROUP = "agentenv.explorer"
PLACES = ("run", "world", "page")
"""Where a panel shows: on the run page, on the world page, or as a page of its own in the navigation."""

explorer_hookspec = pluggy.HookspecMarker(PROJECT)
explorer_hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class Panel:
    name: str
    """Unique; a URL segment (`[a-z0-9-]+`)."""
    title: str
    place: str
    """One of PLACES."""
    script: Path
    """The ES module that renders it: `export function render(element, data) {…}`."""
    data: Callable[[dict[str, Any], Any], Any]
    """(the run's record, the configured stores' Records) → JSON data for the script."""


class PanelSpecs:
    @explorer_hookspec
    def explorer_panels(self) -> list[Panel]:  # type: ignore[empty-body]
        """Panels and pages this plugin adds to the explorer."""


def panel_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(PanelSpecs)
    if load_entry_points:
        manager.load_setuptools_entrypoints(GROUP)
    return manager


def collect(manager: pluggy.PluginManager) -> dict[str, Panel]:
    """Every plugin's panels by name; a bad one (unknown place, duplicate name, missing script) is an error
    that names it, so the author sees it at `agentenv up` instead of a blank panel."""
    import re

    panels: dict[str, Panel] = {}
    for batch in manager.hook.explorer_panels():
        for panel in batch:
            if not re.fullmatch(r"[a-z0-9-]+", panel.name):
                raise ValueError(f"explorer panel {panel.name!r}: the name must match [a-z0-9-]+")
            if panel.place not in PLACES:
                raise ValueError(f"explorer panel {panel.name!r}: place {panel.place!r} is not one of {PLACES}")
            if panel.name in panels:
                raise ValueError(f"explorer panel {panel.name!r} is added twice; rename one")
            if not Path(panel.script).is_file():
                raise ValueError(f"explorer panel {panel.name!r}: its script {panel.script} does not exist")
            panels[panel.name] = panel
    return panels
