"""Where a harness CLI runs: on this machine (the process sandbox) or in a Docker container (`docker_place`).

A place says how the CLI is started (its binary's path there), how it reaches an endpoint (the world's MCP
server, the model), which working folder it gets, and runs one prompt's CLI to completion, timeout or stop.
Paths of the agent's private folder are the same everywhere: the Docker place mounts it at its own path, so
the argument lists and config files a kind writes hold in both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentenv_harness.process import Finished, Watch, run_tree


@dataclass(frozen=True)
class Tree:
    """A working tree of the world the harness's own tools work on (a workspace env's live tree on this host)."""

    path: Path
    """Where it is on this host."""
    mount_point: str
    """Where the world's own commands see it (`/workspace`); the harness sees it there too."""
    changed: Callable[[], None]
    """Tells the env its tree may have changed behind its tools' back (snapshots then commit it)."""


class Place(ABC):
    """Where the CLI of one agent runs, for its whole life."""

    name: str
    run_id: str | None = None
    """The run the agent acts in (its world's episode), for labels; set before `prepare`."""

    def prepare(self) -> None:
        """One-time work before the first prompt (an image, a network); run in a worker thread."""
        return None

    @abstractmethod
    def binary(self) -> str:
        """The CLI's path where it runs."""

    def url(self, url: str) -> str:
        """`url` as the CLI reaches it from where it runs."""
        return url

    def use_trees(self, trees: list[Tree]) -> None:
        """The trees the harness's own tools may work on in the next prompts (only a sandbox takes any)."""
        return None

    def working_folder(self, default: Path) -> Path:
        """The CLI's working folder: the first tree's mount point where there is one, else `default`."""
        return default

    @abstractmethod
    async def run(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float, watch: Watch | None
    ) -> Finished:
        """One CLI run to completion, timeout or `watch`'s stop; nothing of it is left running afterwards."""

    def close(self) -> None:
        """Remove whatever the place made."""
        return None


class HostPlace(Place):
    """The process sandbox: the CLI runs on this machine as its own process tree, in the agent's private folder."""

    name = "process"

    def __init__(self, binary: Path) -> None:
        self._binary = binary

    def binary(self) -> str:
        return str(self._binary)

    async def run(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float, watch: Watch | None
    ) -> Finished:
        return await run_tree(argv, env=env, cwd=cwd, timeout=timeout, watch=watch)
