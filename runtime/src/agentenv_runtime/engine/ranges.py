"""Check `distribution = "version range"` tables (a bundle's `requires`, a task's `pins.plugins`).

The answer depends only on the table and on what is installed, so it is cached with plugin discovery
(`agentenv.plugins.cache`): running an unchanged bundle does not even import `packaging`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection

from agentenv import PluginHost, cached

from agentenv_runtime.engine.task import TaskError

DENY_VAR, ALLOW_VAR = "AGENTENV_DISABLE_PLUGINS", "AGENTENV_PLUGINS"


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


def turned_off(
    ranges: dict[str, str], host: PluginHost | None, but: Collection[str] = ()
) -> list[tuple[str, str, str]]:
    """(distribution as `ranges` names it, why, fix) for each required plugin distribution (not in `but`) that is
    installed but not in use: turned off by `AGENTENV_DISABLE_PLUGINS` or left out of `AGENTENV_PLUGINS`, or
    skipped as broken. It contributes nothing, so what needs it cannot run (its version alone said "ready")."""
    if host is None or all(info.status == "ok" for info in host.infos):
        return []  # the usual case: no name is compared (`canonical` imports packaging)
    from agentenv import canonical

    environ = host.environ
    found: list[tuple[str, str, str]] = []
    for dist in sorted(set(ranges) - set(but)):
        infos = [info for info in host.infos if canonical(info.dist) == canonical(dist)]
        if not infos or any(info.status == "ok" for info in infos):
            continue
        info = infos[0]
        head = f"{info.dist} {info.version} is installed but"
        denied = environ.get(DENY_VAR, "")
        if info.status != "disabled":
            reason = info.problems[0].message if info.problems else info.status
            found.append((dist, f"{head} skipped as broken: {reason}", "see `agentenv plugin check`"))
        elif {part.strip() for part in denied.split(",")} & {info.name, info.dist}:
            found.append((dist, f"{head} disabled ({DENY_VAR}={denied})", f"take {info.name} out of {DENY_VAR}"))
        else:
            allowed = environ.get(ALLOW_VAR, "")
            found.append((dist, f"{head} disabled (not in {ALLOW_VAR}={allowed})", f"add {info.name} to {ALLOW_VAR}"))
    return found
