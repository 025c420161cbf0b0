"""Find plugins from installed metadata alone: no plugin module is imported here.

A plugin is an entry point in the `agentenv.plugins` group; its distribution's metadata says which
kernel range and sibling plugins it needs. What the scan finds (and the requirement check's verdict) is
cached until the installed distributions change (see `agentenv.plugins.cache`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentenv.plugins.cache import cached
from agentenv.plugins.info import PluginInfo
from agentenv.plugins.problems import Problem

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "agentenv.plugins"
ALLOW_VAR = "AGENTENV_PLUGINS"
DENY_VAR = "AGENTENV_DISABLE_PLUGINS"


def _names(value: str | None) -> set[str]:
    return {part.strip() for part in (value or "").split(",") if part.strip()}


def discover(environ: Mapping[str, str] | None = None) -> list[PluginInfo]:
    """Every plugin entry point, sorted by distribution and name (the order registration hooks run in)."""
    environ = os.environ if environ is None else environ
    allow, deny = _names(environ.get(ALLOW_VAR)), _names(environ.get(DENY_VAR))
    found: list[PluginInfo] = []
    for record in cached("plugins", _scan, environ):
        problems = [Problem(**problem) for problem in record.pop("problems")]
        found.append(PluginInfo(**record, requirement_problems=problems))
    if allow:
        allow |= _required_by(allow, found)
    for info in found:
        if (allow and not {info.name, info.dist} & allow) or {info.name, info.dist} & deny:
            info.status = "disabled"
    found.sort(key=lambda i: (i.dist, i.name))
    return found


def _required_by(allowed: set[str], infos: list[PluginInfo]) -> set[str]:
    """The distributions the allowed plugins require, directly or through each other: allowing a plugin
    allows what it cannot work without."""
    from agentenv.plugins.requirements import canonical

    by_dist = {canonical(info.dist): info for info in infos}
    wanted = [info for info in infos if {info.name, info.dist} & allowed]
    seen: set[str] = set()
    while wanted:
        for req in wanted.pop().requirements():
            if req.applies and req.name in by_dist and req.name not in seen:
                seen.add(req.name)
                wanted.append(by_dist[req.name])
    return {by_dist[name].dist for name in seen}


def _scan() -> list[dict[str, Any]]:
    """Every entry point of the group with its distribution's metadata and requirement problems."""
    from importlib.metadata import entry_points

    from agentenv.plugins.compat import requirement_problems

    records = []
    for ep in entry_points(group=GROUP):
        info = _info(ep)
        record = {key: getattr(info, key) for key in ("name", "dist", "version", "module", "requires")}
        records.append(record | {"problems": [problem.to_dict() for problem in requirement_problems(info)]})
    return records


def _info(ep: EntryPoint) -> PluginInfo:
    dist = ep.dist
    name = dist.metadata["Name"] if dist is not None else "(unknown distribution)"
    version = dist.version if dist is not None else "0"
    requires = list(dist.requires or []) if dist is not None else []
    return PluginInfo(name=ep.name, dist=name, version=version, module=ep.value, requires=requires)
