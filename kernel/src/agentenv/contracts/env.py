"""Environments: what the kernel needs to know of a simulated app to list it, check it and describe it.

The implementation env authors subclass (SQLite state, `@tool` methods, artifacts, snapshot and fork) is
`agentenv_runtime.Env`; this contract keeps the kernel free of it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentenv.contracts.base import Configured
from agentenv.contracts.base import SettingsT as S


class Environment(Configured[S], ABC):
    """A simulated app: named tools (each `describe()`s itself as an MCP tool) and packaged data sets."""

    @classmethod
    @abstractmethod
    def tool_specs(cls) -> Mapping[str, Any]:
        """Tool name → its spec (with `describe()` giving name, description and input schema)."""

    @classmethod
    @abstractmethod
    def artifact_paths(cls) -> Mapping[str, Path]:
        """Packaged artifact name → file."""
