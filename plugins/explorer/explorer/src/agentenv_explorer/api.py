"""The public API of agentenv-explorer for other plugins: import from here, not from the other modules.

A plugin adds a panel or a page with an `agentenv.explorer` entry point naming a module that holds an
`@explorer_hookimpl def explorer_panels() -> list[Panel]`.
"""

from agentenv_explorer.app import Explorer, build_app, make_explorer
from agentenv_explorer.panels import PLACES, Panel, explorer_hookimpl

__all__ = ["PLACES", "Explorer", "Panel", "build_app", "explorer_hookimpl", "make_explorer"]
