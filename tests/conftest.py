"""Cross-distribution tests share small helpers (pytest runs in importlib mode, so put this folder on the path)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def workspace_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A wheel of every workspace distribution, built once per test session (see `wheels.build_all`)."""
    from wheels import build_all

    return build_all(tmp_path_factory.mktemp("workspace-wheels"))
