"""The public API of agentenv-workspace for other plugins: import from here, not from the other modules.

`live_trees(world)` is for agents that bring their own file and shell tools (the coding-agent harnesses in
their Docker sandbox): they work on the workspace's live tree directly, mounted where the world's own
commands see it, and say afterwards that it may have changed, so a snapshot (a fork, the grading) commits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LiveTree", "live_trees"]


@dataclass(frozen=True)
class LiveTree:
    """One workspace env's working tree on this host."""

    env: str
    path: Path
    """The live tree on this host (an overlay mount, or a copy)."""
    mount_point: str
    """Where the env's commands see it (`/workspace`, a Harbor task's WORKDIR)."""
    changed: Callable[[], None]
    """Say the tree may differ from its layers (written by something other than the env's own tools)."""


def live_trees(world: Any) -> list[LiveTree]:
    """The live trees of the workspace envs of an in-process `world` (none when it has no workspace)."""
    from agentenv_workspace.env import WorkspaceEnv

    return [
        LiveTree(name, env.root, env.settings.mount_point, env.mark_changed)
        for name, env in getattr(world, "envs", {}).items()
        if isinstance(env, WorkspaceEnv)
    ]
