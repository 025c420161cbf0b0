"""The runtime tests use agentenv-testing's pytest plugin (`plugin_site`, `agentenv_cli`) under shorter names."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_testing.installs import AGENTENV_VARS, CliResult


@pytest.fixture(autouse=True)
def _no_agentenv_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start without the plugin allow/deny lists or a config override from the outer shell."""
    for var in AGENTENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def on_path(plugin_site: Path) -> Path:
    return plugin_site


@pytest.fixture
def agentenv(agentenv_cli: Callable[..., CliResult]) -> Callable[..., CliResult]:
    return agentenv_cli


sys.path.insert(0, str(Path(__file__).parent))  # the tests import engine_helpers (pytest runs in importlib mode)
