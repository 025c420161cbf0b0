"""The `coding` tasks in the Docker sandbox: one container per workspace tree on the real engine, commands
through the exec server inside it; gold 1.0, no-op 0.0, and no container left afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentenv.plugins.host import get_host
from agentenv_runtime.engine.bundle import find_bundle
from agentenv_steps.deploy import clear_templates
from agentenv_testing.tasks import TaskRuns
from agentenv_workspace import layers

TASKS = ["fix-bug", "add-feature", "refactor", "shell-report", "oncall-fix"]


def our_containers() -> list[Any]:
    from agentenv_docker.api import engine, owner_labels

    pid = owner_labels()["agentenv.owner.pid"]
    found = engine().containers.list(all=True, filters={"label": ["agentenv.workspace=1", f"agentenv.owner.pid={pid}"]})
    return list(found)


@pytest.fixture(autouse=True, scope="module")
def _docker_workspaces(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from agentenv_docker.api import ensure_base_image

    ensure_base_image(log=lambda message: print(f"[base image] {message}"))
    root = tmp_path_factory.mktemp("coding-docker") / "workspaces"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(layers.ROOT_VARIABLE, str(root))
        patch.setenv("AGENTENV_WORKSPACE_SANDBOX", "docker")
        clear_templates()  # deployed world templates hold layers of the store they were built in
        yield
        layers.store().close()
        clear_templates()
    assert our_containers() == []
    assert not root.exists() or list(root.iterdir()) == []


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("agent", "score"), [("gold", 1.0), ("noop", 0.0)])
def test_gold_one_noop_zero_in_docker(agentenv_runs: TaskRuns, task: str, agent: str, score: float) -> None:
    found = find_bundle("coding", get_host())
    name = f"gold-{task}" if agent == "gold" else "noop"
    record = agentenv_runs(found.task_files()[task], bundle_dir=found.path, overrides={"agent": name})
    assert record["status"] == "succeeded", record["steps"]
    assert record["score"] == score
    tools = [e for e in agentenv_runs.trajectory(record, world="world" if task == "oncall-fix" else "repo")]
    assert tools  # the agent's calls went through the world's trajectory


def test_commands_run_in_a_container_without_network(tmp_path: Path) -> None:
    import json

    from agentenv_runtime import Artifact
    from agentenv_workspace.env import WorkspaceEnv

    spec = tmp_path / "ws.json"
    spec.write_text(json.dumps({"name": "ws", "env": "workspace", "version": "1", "data": {"files": {"a": "1\n"}}}))
    env = WorkspaceEnv()
    env.load(Artifact.from_file(spec))
    assert env.settings.sandbox == "docker"
    result, error = env.call("exec", {"command": "test -f /.dockerenv && cat a && ls /sys/class/net"})
    assert error is None and result["exit_code"] == 0, result
    assert result["output"].split() == ["1", "lo"]  # network none: only loopback
    env.close()
