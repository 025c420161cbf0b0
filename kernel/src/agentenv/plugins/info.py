"""What the kernel knows of one plugin: its entry point, distribution, requirements, status and problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentenv.plugins.problems import Problem


@dataclass
class PluginInfo:
    """One plugin as the kernel knows it. `status`: ok, disabled, incompatible, failed, skipped."""

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

    @property
    def kernel_range(self) -> str:
        from agentenv.plugins.requirements import InvalidRequirement, parse

        for raw in self.requires:
            try:
                req = parse(raw)
            except InvalidRequirement:
                continue
            if req.name == "agentenv-kernel":
                return str(req.specifier) or "any"
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.dist,
            "version": self.version,
            "module": self.module,
            "kernel_range": self.kernel_range,
            "requires": self.requires,
            "status": self.status,
            "contributes": self.contributes,
            "problems": [p.to_dict() for p in self.problems],
        }
