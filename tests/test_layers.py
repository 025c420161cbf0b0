"""The layering the design promises, read from the source (every import counts: module level, inside
functions and under `TYPE_CHECKING`, except a package façade's own `TYPE_CHECKING` re-exports when looking for
cycles, since those never run):

- the kernel imports no other distribution (no runtime, no plugin);
- `agentenv.contracts` is a leaf: the standard library, pydantic (with typing_extensions), `agentenv.config` and
  itself;
- no distribution has a module cycle;
- a plugin uses another first-party plugin only through that plugin's public `api` module, and declares it.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from architecture import ROOT, modules_of, source_roots, top
from architecture import imports_of as imports_among

SOURCES = [src for src in source_roots() if src.parts[-3] != "examples"]
CORE = {"agentenv", "agentenv_runtime", "agentenv_testing"}
"""Packages any plugin may import directly (the kernel, the runtime SDK and the test kits)."""
ALL_MODULES = {name: path for src in SOURCES for name, path in modules_of(src).items()}


def imports_of(name: str, path: Path) -> set[str]:
    return imports_among(name, path, ALL_MODULES)


def distribution_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the modules of its own distribution it imports (a façade's lazy re-exports are not imports)."""
    own = modules_of(src)
    return {
        name: {m for m in imports_among(name, path, ALL_MODULES, executed_only=True) if m in own and m != name}
        for name, path in own.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_kernel_imports_no_other_distribution() -> None:
    kernel = modules_of(ROOT / "kernel" / "src")
    offending = {
        name: sorted(m for m in imports_of(name, path) if top(m).startswith("agentenv") and top(m) != "agentenv")
        for name, path in kernel.items()
    }
    assert {k: v for k, v in offending.items() if v} == {}


def test_contracts_are_a_leaf() -> None:
    allowed_third_party = {"pydantic", "typing_extensions"}  # typing_extensions: TypeVar defaults (3.13)
    for name, path in modules_of(ROOT / "kernel" / "src").items():
        if not name.startswith("agentenv.contracts"):
            continue
        for imported in imports_of(name, path):
            if top(imported) in {*sys.stdlib_module_names, *allowed_third_party, "__future__"}:
                continue
            assert imported == "agentenv.config" or imported.startswith("agentenv.contracts"), (
                f"{name} imports {imported}: contracts may import only the standard library, pydantic, "
                "agentenv.config and each other"
            )


@pytest.mark.parametrize("src", SOURCES, ids=lambda src: str(src.parent.relative_to(ROOT)))
def test_no_module_cycle(src: Path) -> None:
    assert cycles(distribution_graph(src)) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def declared(src: Path) -> set[str]:
    project = tomllib.loads((src.parent / "pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return {req.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip() for req in requirements}


@pytest.mark.parametrize("src", sorted(ROOT.glob("plugins/*/*/src")), ids=lambda s: str(s.parent.relative_to(ROOT)))
def test_plugins_use_each_other_through_declared_public_modules(src: Path) -> None:
    own = {top(name) for name in modules_of(src)}
    package_dist = {
        top(name): tomllib.loads((other.parent / "pyproject.toml").read_text())["project"]["name"]
        for other in SOURCES
        for name in modules_of(other)
    }
    for name, path in modules_of(src).items():
        for imported in imports_of(name, path):
            package = top(imported)
            if package in own or package in CORE or package not in package_dist:
                continue
            assert imported == f"{package}.api", f"{name} imports {imported}: use {package}.api (its public API)"
            assert package_dist[package] in declared(src), (
                f"{name} imports {package} but {src.parent.name}'s pyproject does not declare "
                f"{package_dist[package]} (as a dependency or an extra)"
            )
