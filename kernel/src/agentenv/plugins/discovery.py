"""Find plugins from installed metadata alone: no plugin module is imported here.

A plugin is an entry point in the `agentenv.plugins` group; its distribution's metadata says which
kernel range and sibling plugins it needs. What the scan finds (and the requirement check's verdict) is
cached until the installed distributions change (see `agentenv.plugins.cache`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentenv.plugins.cache import cached
from agentenv.plugins.problems import Problem

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "agentenv.plugins"
ALLOW_VAR = "AGENTENV_PLUGINS"
DENY_VAR = "AGENTENV_DISABLE_PLUGINS"


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


def _names(value: str | None) -> set[str]:
    return {part.strip() for part in (value or "").split(",") if part.strip()}


def discover(environ: Mapping[str, str] | None = None) -> list[PluginInfo]:
    """Every plugin entry point, sorted so the kernel's own comes first and the rest by distribution."""
    environ = os.environ if environ is None else environ
    allow, deny = _names(environ.get(ALLOW_VAR)), _names(environ.get(DENY_VAR))
    found: list[PluginInfo] = []
    for record in cached("plugins", _scan, environ):
        problems = [Problem(**problem) for problem in record.pop("problems")]
        info = PluginInfo(**record, requirement_problems=problems)
        keys = {info.name, info.dist}
        if (allow and not keys & allow and info.dist != "agentenv-kernel") or keys & deny:
            info.status = "disabled"
        found.append(info)
    found.sort(key=lambda i: (i.dist != "agentenv-kernel", i.dist, i.name))
    return found


def _scan() -> list[dict[str, Any]]:
    """Every entry point of the group with its distribution's metadata and requirement problems."""
    from importlib.metadata import entry_points

    from agentenv.plugins.compat import requirement_problems

    records = []
    for ep in entry_points(group=GROUP):
        info = _info(ep)
        records.append(
            {
                "name": info.name,
                "dist": info.dist,
                "version": info.version,
                "module": info.module,
                "requires": info.requires,
                "problems": [problem.to_dict() for problem in requirement_problems(info)],
            }
        )
    return records


def _info(ep: EntryPoint) -> PluginInfo:
    dist = ep.dist
    name = dist.metadata["Name"] if dist is not None else "(unknown distribution)"
    version = dist.version if dist is not None else "0"
    requires = list(dist.requires or []) if dist is not None else []
    return PluginInfo(name=ep.name, dist=name, version=version, module=ep.value, requires=requires)
