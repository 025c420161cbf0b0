"""Check a plugin's declared requirements against what is installed, before importing it."""

from __future__ import annotations

import contextlib
from functools import cache

from packaging.version import InvalidVersion, Version

from agentenv import __version__
from agentenv.plugins import problems as codes
from agentenv.plugins.info import PluginInfo
from agentenv.plugins.problems import Problem
from agentenv.plugins.requirements import InvalidRequirement, Requirement, parse

_major, _minor = __version__.split(".")[:2]
OURS = f"agentenv-kernel>={_major}.{_minor},<{_major}.{int(_minor) + 1}"
"""The kernel range of a plugin made for this kernel (lockstep: this minor release)."""


@cache
def installed_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def requirement_problems(info: PluginInfo) -> list[Problem]:
    """One problem per requirement that is missing or out of range (extras-only requirements ignored), and one
    when no kernel range is declared: whether the plugin fits this kernel is then unknown."""
    found: list[Problem] = []
    kernel = False
    for raw in info.requires:
        try:
            req = parse(raw)
        except InvalidRequirement as exc:
            fix = f"reinstall {info.dist}: pip install --force-reinstall {info.dist}"
            found.append(Problem(info.name, codes.MISSING_REQUIREMENT, f"unreadable requirement {raw!r}: {exc}", fix))
            continue
        kernel |= req.applies and req.name == "agentenv-kernel"
        problem = _check(info, req) if req.applies else None
        if problem:
            found.append(problem)
    if not kernel:
        message = f"{info.dist} {info.version} declares no agentenv-kernel range (whether it fits this one is unknown)"
        found.append(Problem(info.name, codes.NO_KERNEL_RANGE, message, f"declare '{OURS}' in {info.dist}"))
    return found


def _check(info: PluginInfo, req: Requirement) -> Problem | None:
    have = installed_version(req.name)
    spec = str(req.specifier)
    wants = f"{info.dist} {info.version} requires {req.name}{spec}"
    if have is None:
        return Problem(info.name, codes.MISSING_REQUIREMENT, f"{wants}, which is not installed",
                       f"agentenv plugin add '{req.name}{spec}'")  # fmt: skip
    with contextlib.suppress(InvalidVersion):  # an unreadable installed version fits no range
        if req.specifier.contains(Version(have), prereleases=True):
            return None
    if req.name == "agentenv-kernel":  # never another kernel: a release of the plugin made for this one
        newer = any(s.operator in (">", ">=", "~=") and not s.contains(have, True) for s in req.specifier)
        made = f"(an {'earlier' if newer else 'later'} release made for agentenv-kernel {have})"
        add = f"'{info.dist}<{info.version}'" if newer else f"--upgrade '{info.dist}>{info.version}'"
        fix = f"agentenv plugin add {add} {made}, or remove it: agentenv plugin remove {info.dist}"
        message = f"{wants}, but agentenv-kernel {have} is installed"
        return Problem(info.name, codes.KERNEL_RANGE, message, f"{fix}; its author declares {OURS}")
    fix = f"agentenv plugin add '{req.name}{spec}'"
    return Problem(info.name, codes.REQUIREMENT_RANGE, f"{wants}, but {req.name} {have} is installed", fix)
