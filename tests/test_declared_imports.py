"""Every distribution declares what its code imports.

A plugin that imports a package it does not declare works in the workspace (where everything is installed)
and breaks in a user's minimal install. This reads every module under each distribution's `src/` (imports
inside functions included: a lazy import still needs the package) and checks that each imported top-level
package is the standard library, the distribution's own, or provided by a distribution it declares — as a
dependency or under one of its extras (for code that only runs when the extra is installed).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = sorted(
    p.parent for pattern in ("*/pyproject.toml", "plugins/*/*/pyproject.toml") for p in ROOT.glob(pattern)
)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(raw: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", raw)
    assert match, raw
    return canonical(match.group(1))


def declared(project: Path) -> tuple[str, set[str]]:
    """(the distribution's name, every distribution it declares, extras included)."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    names = {requirement_name(r) for r in meta.get("dependencies", [])}
    for extra in meta.get("optional-dependencies", {}).values():
        names |= {requirement_name(r) for r in extra}
    return canonical(meta["name"]), names


def own_packages(project: Path) -> set[str]:
    return {p.name for p in (project / "src").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}


@cache
def providers() -> dict[str, set[str]]:
    """Top-level module → distributions providing it (workspace members are editable: read from their folders)."""
    found = {module: {canonical(d) for d in dists} for module, dists in packages_distributions().items()}
    for project in PROJECTS:
        for package in own_packages(project):
            found.setdefault(package, set()).add(declared(project)[0])
    return found


def imported_top_levels(source: Path) -> set[str]:
    tree = ast.parse(source.read_text(), filename=str(source))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found


BROUGHT_BY_THE_USER = {
    "agentenv-rl": {"skyrl_gym", "art", "verifiers", "verl"},
}
"""Trainer packages that one adapter module each imports (`agentenv_rl.adapters.skyrl`, `.art`,
`.verifiers_v1`, `.verl_loop`, loaded only when asked for) and that the user of that trainer already has. They are
not extras on purpose: an `art` extra (openpipe-art) adds 1,130 lines to uv.lock and forks the workspace's openai for
Python >= 3.12, and the trainers are tested in venvs of their own (agentenv-rl's tests/test_frameworks.py), never
installed into the workspace."""

TASK_DATA = {"artifacts", "hidden"}


def undeclared(project: Path) -> list[str]:
    own, names = declared(project)
    problems = []
    for source in sorted((project / "src").rglob("*.py")):
        if TASK_DATA & set(source.relative_to(project).parts):
            continue  # a bundle's task repositories and hidden tests import the repository's own modules
        modules = imported_top_levels(source) - own_packages(project) - set(sys.stdlib_module_names)
        for module in sorted(modules - BROUGHT_BY_THE_USER.get(own, set())):
            owners = providers().get(module, set())
            if owners & names or own in owners:
                continue
            problems.append(f"{source.relative_to(ROOT)} imports {module} ({', '.join(sorted(owners)) or '?'})")
    return problems


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_import_is_declared(project: Path) -> None:
    problems = undeclared(project)
    assert not problems, f"{project.name}: declare these in pyproject.toml:\n" + "\n".join(problems)
