"""Registers the `hello` bundle (the folder beside this module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import BundleRef


@hookimpl
def agentenv_register_bundles() -> list[BundleRef]:
    from pathlib import Path  # not at the top: `agentenv --help` imports this module

    from agentenv.contracts import BundleRef

    folder = Path(__file__).parent / "hello"
    return [BundleRef("hello", folder, "A scripted agent says hello in Slack #general; runs offline.")]
