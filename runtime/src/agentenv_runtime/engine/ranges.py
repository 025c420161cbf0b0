"""Check `distribution = "version range"` tables (a bundle's `requires`, a task's `pins.plugins`).

The answer depends only on the table and on what is installed, so it is cached with plugin discovery
(`agentenv.plugins.cache`): running an unchanged bundle does not even import `packaging`.
"""

from __future__ import annotations

import json
import os

from agentenv import PluginHost, cached

from agentenv_runtime.engine.task import TaskError


def unmet_ranges(ranges: dict[str, str], host: PluginHost | None, where: str) -> list[tuple[str, str, str | None]]:
    """(distribution, range, installed version or None) for each range that what is installed does not meet.

    Plugin versions come from the host's discovery, other distributions are looked up. A range that does not
    parse is a `TaskError` naming `where` (the file and field) and the distribution.
    """
    if not ranges:  # most tasks pin nothing: no cache lookup (it fingerprints every installed distribution)
        return []
    known = {info.dist: info.version for info in host.infos} if host is not None else {}
    extra = json.dumps([ranges, known], sort_keys=True)
    found = cached("ranges", lambda: _unmet(ranges, known, where), os.environ, extra)
    return [(dist, spec, have) for dist, spec, have in found]


def _unmet(ranges: dict[str, str], known: dict[str, str], where: str) -> list[tuple[str, str, str | None]]:
    from agentenv import installed_version
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    found: list[tuple[str, str, str | None]] = []
    for dist, spec in ranges.items():
        try:
            wanted = SpecifierSet(spec)
        except InvalidSpecifier:
            raise TaskError(f'{where}.{dist}`: {spec!r} is not a version range (e.g. ">=0.1,<0.2")') from None
        have = known[dist] if dist in known else installed_version(dist)
        if have is None or not wanted.contains(Version(have), prereleases=True):
            found.append((dist, spec, have))
    return found
