"""The kernel's list of first-party distributions (who keeps a contested name) is exactly what this workspace
publishes: every `pyproject.toml` under kernel/, runtime/, testing/ and plugins/, and none of the examples."""

from __future__ import annotations

import tomllib
from pathlib import Path

from agentenv.plugins.first_party import FIRST_PARTY

ROOT = Path(__file__).resolve().parents[2]


def _names(*folders: str) -> set[str]:
    found = set()
    for folder in folders:
        for project in (ROOT / folder).rglob("pyproject.toml"):
            if ".venv" not in project.parts:
                found.add(tomllib.loads(project.read_text(encoding="utf-8"))["project"]["name"])
    return found


def test_the_first_party_list_is_the_workspace_distributions() -> None:
    assert _names("kernel", "runtime", "testing", "plugins") == FIRST_PARTY
    assert not _names("examples") & FIRST_PARTY, "examples are written as an outside author would"
