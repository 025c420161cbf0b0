"""The public plugin API (`docs/public-api.md`): every façade name resolves to the object its private home holds,
the type checkers' view (`TYPE_CHECKING` imports) lists the same names as the run-time tables, and every name is
documented with its promise."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

import agentenv
import agentenv.contracts
import agentenv_runtime
import pytest
from architecture import private_imports_in_code_blocks

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "public-api.md").read_text(encoding="utf-8")
FACADES = [agentenv, agentenv.contracts, agentenv_runtime]


def public_names(facade: ModuleType) -> list[str]:
    return [name for name in facade.__all__ if name != "__version__"]


@pytest.mark.parametrize("facade", FACADES, ids=lambda m: m.__name__)
def test_every_name_resolves_and_is_documented_with_its_promise(facade: ModuleType) -> None:
    section = DOC.split(f"## `{facade.__name__}` (")[1].split("\n## ")[0]
    for name in public_names(facade):
        assert getattr(facade, name) is not None
        assert re.search(rf"^\| `{re.escape(name)}` \| (stable|provisional) \|", section, re.MULTILINE), (
            f"{facade.__name__}.{name} has no row in docs/public-api.md"
        )


@pytest.mark.parametrize("facade", FACADES, ids=lambda m: m.__name__)
def test_type_checkers_see_exactly_the_run_time_names(facade: ModuleType) -> None:
    assert facade.__file__ is not None
    tree = ast.parse(Path(facade.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imports = [node for node in block.body if isinstance(node, ast.ImportFrom)]
    assignments = [node for node in block.body if isinstance(node, ast.Assign)]
    typed = {alias.asname or alias.name for node in imports for alias in node.names}
    typed |= {target.id for node in assignments for target in node.targets if isinstance(target, ast.Name)}
    typed = {name for name in typed if not name.startswith("_")}
    assert typed == set(public_names(facade))


def test_a_renamed_export_is_the_private_object() -> None:
    triggers = importlib.import_module("agentenv_runtime.world.triggers")
    assert agentenv_runtime.lookup_path is triggers.lookup
    assert agentenv_runtime.matches_predicate is triggers.matches


@pytest.mark.parametrize("facade", FACADES, ids=lambda m: m.__name__)
def test_an_unknown_name_is_an_attribute_error(facade: ModuleType) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        facade.no_such_name  # noqa: B018


def markdown_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.md") if not {".venv", "node_modules"} & set(p.parts))


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_documentation_examples_import_only_public_names(path: Path) -> None:
    assert private_imports_in_code_blocks(path.read_text(encoding="utf-8"), path) == []


def test_a_documented_private_import_is_caught() -> None:
    text = "```python\nfrom agentenv_runtime.world.access import WorldToolAccess\nimport agentenv\n```\n"
    assert private_imports_in_code_blocks(text) == ["agentenv_runtime.world.access"]
    assert private_imports_in_code_blocks(text, ROOT / "runtime" / "README.md") == []
