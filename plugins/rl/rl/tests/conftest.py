"""The RL tests run in a scratch folder (run records land in its `.agentenv/`), with no outer plugin filters."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentenv_testing.installs import AGENTENV_VARS


@pytest.fixture(autouse=True)
def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in AGENTENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
