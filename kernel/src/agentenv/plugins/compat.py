"""Check a plugin's declared requirements against what is installed, before importing it."""

from __future__ import annotations

from functools import cache

from packaging.version import InvalidVersion, Version

from agentenv.plugins import problems as codes
from agentenv.plugins.info import PluginInfo
from agentenv.plugins.problems import Problem
from agentenv.plugins.requirements import InvalidRequirement, Requirement, parse


@cache
def installed_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def requirement_problems(info: PluginInfo) -> list[Problem]:
    """One problem per requirement that is missing or out of range (extras-only requirements ignored)."""
    found: list[Problem] = []
    for raw in info.requires:
        try:
            req = parse(raw)
        except InvalidRequirement as exc:
            fix = f"reinstall {info.dist}: pip install --force-reinstall {info.dist}"
            found.append(Problem(info.name, codes.MISSING_REQUIREMENT, f"unreadable requirement {raw!r}: {exc}", fix))
            continue
        problem = _check(info, req) if req.applies else None
        if problem:
            found.append(problem)
    return found


def _check(info: PluginInfo, req: Requirement) -> Problem | None:
    have = installed_version(req.name)
    spec = str(req.specifier)
    wants = f"{info.dist} {info.version} requires {req.name}{spec}"
    if have is None:
        return Problem(info.name, codes.MISSING_REQUIREMENT, f"{wants}, which is not installed",
                       f"agentenv plugin add '{req.name}{spec}'")  # fmt: skip
    try:
        ok = req.specifier.contains(Version(have), prereleases=True)
    except InvalidVersion:
        ok = False
    if ok:
        return None
    if req.name == "agentenv-kernel":  # never another kernel: `add` keeps this one and picks the release that fits
        message = f"{wants}, but agentenv-kernel {have} is installed"
        return Problem(info.name, codes.KERNEL_RANGE, message, f"agentenv plugin add {info.dist}")
    fix = f"agentenv plugin add '{req.name}{spec}'"
    return Problem(info.name, codes.REQUIREMENT_RANGE, f"{wants}, but {req.name} {have} is installed", fix)

