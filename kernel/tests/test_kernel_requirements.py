"""The cheap requirement reader must agree with `packaging` on what it reads itself."""

from __future__ import annotations

import pytest
from agentenv.plugins.requirements import InvalidRequirement, canonical, parse
from packaging.requirements import Requirement as Full

CASES = [
    "agentenv-kernel>=0.1,<0.2",
    "Agentenv_Kernel>=0.1",
    "a2a-sdk[http-server]>=1.3,<2",
    "docker>=7",
    "x (>=1)",
    'mcp>=2.3,<3; extra == "mcp"',
    'tomli>=2; python_version < "3.11"',
    "pluggy",
]


@pytest.mark.parametrize("raw", CASES)
def test_fast_reading_matches_packaging(raw: str) -> None:
    full = Full(raw)
    read = parse(raw)
    assert read.name == canonical(full.name)
    assert read.specifier == full.specifier
    assert read.applies == (full.marker is None or full.marker.evaluate({"extra": ""}))


def test_bad_requirements_are_refused() -> None:
    for raw in ("not a spec!!", "x>=", "x>=1; extra =="):
        with pytest.raises(InvalidRequirement):
            parse(raw)
