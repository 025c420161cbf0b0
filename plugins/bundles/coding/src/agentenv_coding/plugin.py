"""Registers the `coding` bundle (a folder inside this package)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from pathlib import Path  # not at the top: `agentenv --help` imports this module

    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "bundles" / "coding"
    return [
        BundleRef("coding", folder, "Coding tasks in a sandboxed workspace, graded by tests (gold 1.0, no-op 0.0).")
    ]
