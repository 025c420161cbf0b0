"""The public names of agentenv-browser: other distributions import only this module.

`BrowserEnv` is importable here so an env can be built on it (agentenv-miniwob's `miniwob` env is one): override
`prepare_page` to set up each fresh page, and use `run_on_page` / `find_element` in the subclass's own tools.
"""

from __future__ import annotations

from agentenv_browser.driver import BrowserUnavailable, find_chromium
from agentenv_browser.env import BrowserEnv, BrowserSettings
from agentenv_browser.tree import ID_ATTRIBUTE, MAX_LINES, SCRIPT

TREE_SCRIPT = SCRIPT
"""The `snapshot` tool's page script (called with [max lines, id attribute]), for code that must list a page
exactly as `snapshot` does."""

__all__ = [
    "ID_ATTRIBUTE",
    "MAX_LINES",
    "TREE_SCRIPT",
    "BrowserEnv",
    "BrowserSettings",
    "BrowserUnavailable",
    "find_chromium",
]
