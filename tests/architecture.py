"""The architecture check: which imports cross a distribution boundary, and whether they use public names only.

Run by `./dev test` before the test suite (so CI runs it), and importable by the tests that check the layering.

    python tests/architecture.py            fail (exit 1) on any private import across a distribution boundary
    python tests/architecture.py --count    print how many there are, in plugin and example source and overall

The public surface of each distribution is written down once, here (`PUBLIC`), and documented in
`docs/public-api.md`; everything else is private and may move at any time. Every import counts: module level,
inside functions and under `TYPE_CHECKING`. The rule, as pytest draws it between `pytest` and `_pytest`:

- kernel (`agentenv-kernel`): `agentenv`, `agentenv.contracts` (and its `kinds` table), `agentenv.hookspecs`,
  `agentenv.config`;
- runtime (`agentenv-runtime`): the top-level `agentenv_runtime` package;
- testing (`agentenv-testing`): every `agentenv_testing` module whose name has no leading underscore;
- any other distribution (plugins, examples): its `<package>.api` module.

The kernel imports no other distribution at all.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL_PUBLIC = frozenset(
    {"agentenv", "agentenv.contracts", "agentenv.contracts.kinds", "agentenv.hookspecs", "agentenv.config"}
)


def source_roots(root: Path = ROOT) -> list[Path]:
    """Every distribution's `src` folder: kernel, runtime, testing, each plugin and each example."""
    roots = [root / "kernel" / "src", root / "runtime" / "src", root / "testing" / "src"]
    return roots + sorted(root.glob("plugins/*/*/src")) + sorted(root.glob("examples/*/src"))


def modules_of(src: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module under one `src` folder."""
    found = {}
    for path in src.rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: Iterable[str], executed_only: bool = False) -> set[str]:
    """Every module `name` imports, resolved to the most specific module in `known` where possible.

    `executed_only` leaves out a package façade's `if TYPE_CHECKING:` block: those re-exports are for type
    checkers, while at run time the façade's `__getattr__` imports each name on first use.
    """
    return {module for module, _ in imports_with_lines(name, path, set(known), executed_only)}


def is_type_checking_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports_with_lines(
    name: str, path: Path, known: set[str], executed_only: bool = False
) -> Iterator[tuple[str, int]]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if executed_only and path.name == "__init__.py":
        tree.body = [statement for statement in tree.body if not is_type_checking_block(statement)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                yield (candidate if candidate in known else base), node.lineno


def top(module: str) -> str:
    return module.partition(".")[0]


@dataclass(frozen=True)
class Distribution:
    name: str
    src: Path
    packages: frozenset[str]

    def is_public(self, module: str) -> bool:
        if self.name == "agentenv-kernel":
            return module in KERNEL_PUBLIC
        if self.name == "agentenv-runtime":
            return module == "agentenv_runtime"
        if self.name == "agentenv-testing":
            return not any(part.startswith("_") for part in module.split("."))
        return module.endswith(".api") and module.count(".") == 1


def distributions(root: Path = ROOT) -> list[Distribution]:
    found = []
    for src in source_roots(root):
        name = tomllib.loads((src.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
        found.append(Distribution(name, src, frozenset(top(module) for module in modules_of(src))))
    return found


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    imported: str
    owner: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.imported} ({self.owner}): {self.why}"


def fix_for(owner: Distribution) -> str:
    if owner.name == "agentenv-kernel":
        return "import it from agentenv, agentenv.contracts, agentenv.hookspecs or agentenv.config"
    if owner.name == "agentenv-runtime":
        return "import it from agentenv_runtime (add the name to its _HOMES table if it is missing)"
    if owner.name == "agentenv-testing":
        return "import it from a public agentenv_testing module"
    package = sorted(owner.packages)[0]
    return f"import it from {package}.api (add the name there if it is missing)"


def violations(root: Path = ROOT, files: Iterable[tuple[Distribution, str, Path]] | None = None) -> list[Violation]:
    """Private imports across a distribution boundary, and any import of another distribution by the kernel."""
    dists = distributions(root)
    owner_of = {package: dist for dist in dists for package in dist.packages}
    known = {module for dist in dists for module in modules_of(dist.src)}
    if files is None:
        files = ((dist, name, path) for dist in dists for name, path in sorted(modules_of(dist.src).items()))
    found = []
    for importer, name, path in files:
        for imported, line in sorted(set(imports_with_lines(name, path, known)), key=lambda pair: pair[1]):
            owner = owner_of.get(top(imported))
            if owner is None or owner.name == importer.name:
                continue
            relative = path.relative_to(root)
            if importer.name == "agentenv-kernel":
                why = "the kernel imports no other distribution"
                found.append(Violation(relative, line, imported, owner.name, why))
            elif not owner.is_public(imported):
                found.append(Violation(relative, line, imported, owner.name, f"private module; {fix_for(owner)}"))
    return found


def private_imports_in_code_blocks(text: str, home: Path = ROOT) -> list[str]:
    """Modules imported in a Markdown page's ```python blocks that are private to a distribution other than the
    one whose folder holds the page (a plugin's README documents its own modules)."""
    owner_of = {package: dist for dist in distributions() for package in dist.packages}
    found = []
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        for module in re.findall(r"^\s*(?:from|import) ([\w.]+)", block, re.MULTILINE):
            owner = owner_of.get(top(module))
            if owner is not None and owner.src.parent not in home.parents and not owner.is_public(module):
                found.append(module)
    return found


def count(root: Path = ROOT) -> dict[str, int]:
    """How many private cross-distribution imports there are, in plugin and example source and in all source."""
    everything = violations(root)
    plugins_and_examples = [v for v in everything if v.path.parts[0] in {"plugins", "examples"}]
    return {"plugin and example source": len(plugins_and_examples), "all distributions' source": len(everything)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--count", action="store_true", help="print the counts instead of failing")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (for tests)")
    args = parser.parse_args(argv)
    if args.count:
        for scope, number in count(args.root).items():
            print(f"{number:5d}  private cross-distribution imports in {scope}")
        return 0
    found = violations(args.root)
    for violation in found:
        print(violation, file=sys.stderr)
    if found:
        print(f"architecture check: {len(found)} private import(s) across a distribution boundary", file=sys.stderr)
        return 1
    print("architecture check: every cross-distribution import uses public names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
