"""Check `distribution = "version range"` tables (a bundle's `requires`, a task's `pins.plugins`).

The answer depends only on the table and on what is installed, so it is cached with plugin discovery
(`agentenv.plugins.cache`): running an unchanged bundle does not even import `packaging`.
"""

from __future__ import annotations

import json
import os

from agentenv import PluginHost, cached, canonical

from agentenv_runtime.engine.task import TaskError


def unmet_ranges(ranges: dict[str, str], host: PluginHost | None, where: str) -> list[tuple[str, str, str | None]]:
    """(distribution, range, installed version or None) for each range that what is installed does not meet.

    Plugin versions come from the host's discovery, other distributions are looked up. A range that does not
    parse is a `TaskError` naming `where` (the file and field) and the distribution.
    """
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


def turned_off(ranges: dict[str, str], host: PluginHost | None) -> list[tuple[str, str, str]]:
    """(distribution, why, fix) for each required plugin distribution that is installed in range but not in use:
    turned off by `AGENTENV_DISABLE_PLUGINS` or left out of `AGENTENV_PLUGINS`, or skipped as broken. It
    contributes nothing, so what needs it cannot run (its version alone said "ready")."""
    found: list[tuple[str, str, str]] = []
    wanted = {canonical(dist) for dist in ranges}
    for dist in sorted(wanted):
        infos = [info for info in (host.infos if host is not None else []) if canonical(info.dist) == dist]
        if not infos or any(info.status == "ok" for info in infos):
            continue
        info = infos[0]
        head = f"{info.dist} {info.version} is installed but"
        if info.status == "disabled":
            deny = {p.strip() for p in host.environ.get("AGENTENV_DISABLE_PLUGINS", "").split(",")} if host else set()
            if deny & {info.name, info.dist}:
                named = host.environ["AGENTENV_DISABLE_PLUGINS"] if host else ""
                found.append((dist, f"{head} disabled (AGENTENV_DISABLE_PLUGINS={named})",
                              f"take {info.name} out of AGENTENV_DISABLE_PLUGINS"))  # fmt: skip
            else:
                allowed = host.environ.get("AGENTENV_PLUGINS", "") if host else ""
                found.append((dist, f"{head} disabled (not in AGENTENV_PLUGINS={allowed})",
                              f"add {info.name} to AGENTENV_PLUGINS"))  # fmt: skip
        else:
            reason = info.problems[0].message if info.problems else info.status
            found.append((dist, f"{head} skipped as broken: {reason}", "see `agentenv plugin check`"))
    return found
