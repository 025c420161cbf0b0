"""Helpers shared by the tests of the lifecycle, collaboration, capture and code steps."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv import get_host
from agentenv.contracts import kinds
from agentenv_testing.tasks import temporary_config


@pytest.fixture
def inline_config(tmp_path):
    """A config whose inline sandboxes live under tmp_path (skip when agentenv-sandbox-local is missing)."""
    if "inline" not in get_host().registry(kinds.SANDBOX_PROVIDERS):
        pytest.skip("no inline sandbox provider installed")
    config = temporary_config(tmp_path)
    entry = get_host().registry(kinds.SANDBOX_PROVIDERS)["inline"]
    config.values["plugins"][entry.dist] = {
        "inline": {"state_dir": str(tmp_path / "state"), "root": str(tmp_path / "boxes")}
    }
    return config


@pytest.fixture
def made(monkeypatch) -> dict[str, Any]:
    """Every resource a run registers, by step id (kept after the run ends)."""
    from agentenv_runtime import RunContext

    found: dict[str, Any] = {}
    original = RunContext.add_resource

    def spy(self, step_id, obj, teardown=None):
        found[step_id] = obj
        return original(self, step_id, obj, teardown)

    monkeypatch.setattr(RunContext, "add_resource", spy)
    return found


def sandbox(step_id: str = "box", **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "type": "deploy_sandbox", "provider": "inline", **fields}
