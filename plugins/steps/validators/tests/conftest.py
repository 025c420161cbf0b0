"""Make the helpers (`validators_testkit`) importable, and give each test a plugin host with the test steps."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

TESTS = str(Path(__file__).parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

from agentenv.contracts import kinds  # noqa: E402
from agentenv.plugins.host import Entry, PluginHost  # noqa: E402
from agentenv_testing.tasks import run_task  # noqa: E402
from validators_testkit import (  # noqa: E402
    BrokenNotesEnv,
    ExportStepForTests,
    FailStepForTests,
    OutputStepForTests,
    WorldStepForTests,
)


@pytest.fixture
def host() -> PluginHost:
    """The installed plugins, the test steps and the broken env."""
    fresh = PluginHost()
    steps = fresh.registry(kinds.STEPS)
    for cls in (WorldStepForTests, OutputStepForTests, FailStepForTests, ExportStepForTests):
        steps[cls.name] = Entry(cls.name, cls, "validators-tests", "agentenv-validators-tests")
    fresh.registry(kinds.ENVS)[BrokenNotesEnv.name] = Entry(
        BrokenNotesEnv.name, BrokenNotesEnv, "validators-tests", "agentenv-validators-tests"
    )
    return fresh


@pytest.fixture
def run(host: PluginHost, tmp_path: Path) -> Any:
    """`run(steps)` runs a task with the test host; the record gets `by_id` (step id → step record)."""
    counter = iter(range(1000))

    def _run(steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
        task = {"name": f"t{next(counter)}", "steps": steps, **fields}
        record = run_task(task, tmp_path / f"run{next(counter)}", host=host)
        record["by_id"] = {s["id"]: s for s in record["steps"]}
        return record

    return _run
