"""What the kernel knows of one plugin: its entry point, distribution, requirements, status and problems."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentenv.plugins.problems import Problem

if TYPE_CHECKING:
    from agentenv.plugins.requirements import Requirement


@dataclass
class PluginInfo:
    """One plugin as the kernel knows it. `status`: ok, disabled, incompatible, failed, skipped (shown: broken)."""

    name: str
    dist: str
    version: str
    module: str
    requires: list[str]
    status: str = "ok"
    problems: list[Problem] = field(default_factory=list)
    contributes: dict[str, list[str]] = field(default_factory=dict)
    requirement_problems: list[Problem] | None = field(default=None, repr=False)
    """What the requirement check found at discovery (None: not checked yet)."""

    def requirements(self) -> list[Requirement]:
        """Its readable requirements (an unreadable one is a problem the requirement check reports)."""
        from agentenv.plugins.requirements import InvalidRequirement, parse

        found = []
        for raw in self.requires:
            with contextlib.suppress(InvalidRequirement):
                found.append(parse(raw))
        return found

    @property
    def shown_status(self) -> str:
        """`broken` for a loaded plugin with a contribution that cannot load (its problems say why)."""
        return "broken" if self.status == "ok" and self.problems else self.status

    @property
    def kernel_range(self) -> str:
        return next((str(r.specifier) or "any" for r in self.requirements() if r.name == "agentenv-kernel"), "")

    def to_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"name": self.name, "distribution": self.dist, "version": self.version}
        shown["module"] = self.module
        shown |= {"kernel_range": self.kernel_range, "requires": self.requires, "status": self.shown_status}
        return shown | {"contributes": self.contributes, "problems": [p.to_dict() for p in self.problems]}
