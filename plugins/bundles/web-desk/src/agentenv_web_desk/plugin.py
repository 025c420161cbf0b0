"""Registers the `web-desk` bundle (the folder beside this module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from pathlib import Path  # not at the top: `agentenv --help` imports this module

    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "bundles" / "web-desk"
    about = "Support-desk tasks done only through a real browser on the desk's website, graded on the world's state."
    return [BundleRef("web-desk", folder, about)]
