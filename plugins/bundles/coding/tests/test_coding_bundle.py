"""The `coding` bundle end to end: real workspaces, real `sh`/python/git, real bubblewrap, real verifiers.

Every task: the gold agent scores 1.0 and the no-op agent 0.0; the hidden tests cannot be read by the agent;
the RL API serves the tasks, and a GRPO group of 8 forks starts from one snapshot (graded one after another or
in threads at once, with the same results).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from agentenv.plugins.host import get_host
from agentenv_runtime.engine.bundle import find_bundle
from agentenv_steps.deploy import clear_templates
from agentenv_testing.tasks import TaskRuns
from agentenv_workspace import layers, sandbox

TASKS = ["fix-bug", "add-feature", "refactor", "shell-report", "oncall-fix"]
GOLD = {task: f"gold-{task}" for task in TASKS}


@pytest.fixture(autouse=True, scope="module")
def _own_root(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One workspace root for the module (deployed world templates outlive a test); `private_root` fails when
    anything is left mounted or on disk."""
    root = tmp_path_factory.mktemp("coding") / "workspaces"
    clear_templates()  # deployed world templates hold layers of the store they were built in
    with layers.private_root(root):
        yield
    clear_templates()


def bundle() -> Any:
    return find_bundle("coding", get_host())


def test_the_bundle_has_five_tasks_and_its_requirements_are_met() -> None:
    found = bundle()
    assert set(found.task_files()) == set(TASKS)
    assert found.requirement_problems() == []


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("agent", "score"), [("gold", 1.0), ("noop", 0.0)])
def test_gold_scores_one_and_noop_zero(agentenv_runs: TaskRuns, task: str, agent: str, score: float) -> None:
    found = bundle()
    name = GOLD[task] if agent == "gold" else "noop"
    record = agentenv_runs(found.task_files()[task], bundle_dir=found.path, overrides={"agent": name})
    assert record["status"] == "succeeded", record["steps"]
    assert record["score"] == score, [s.get("output") for s in record["steps"] if s["id"] in ("grade", "score")]


@pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed")
def test_the_agent_cannot_read_the_hidden_tests(agentenv_runs: TaskRuns, tmp_path: Path) -> None:
    found = bundle()
    hidden = found.path / "hidden" / "textkit" / "tests" / "test_slugify.py"
    assert hidden.is_file()
    policy = tmp_path / "peek.toml"
    policy.write_text(
        "[[turn]]\nactions = [\n"
        f'  {{ call = "exec", args = {{ command = "cat {hidden}; ls tests; find / -name test_slugify.py" }}, '
        'save = "peek" },\n'
        '  { call = "read_file", args = { path = "tests/test_slugify.py" }, save = "read" },\n'
        '  { say = "{{ peek.output }}" },\n]\n'
    )
    record = agentenv_runs(found.task_files()["add-feature"], bundle_dir=found.path, overrides={"agent": str(policy)})
    assert record["status"] == "succeeded", record["steps"]
    response = next(s for s in record["steps"] if s["id"] == "issue")["output"]["response"]
    assert "No such file" in response and "class TestSlugify" not in response
    assert not [line for line in response.splitlines() if line.endswith("test_slugify.py")]  # find found none
    events = agentenv_runs.trajectory(record, world="repo")
    [read] = [e for e in events if e.get("tool") == "read_file"]
    assert read["error"]["code"] == "not_found"
    assert record["score"] == 0.0


def test_rl_episode_rewards_the_fix_and_a_grpo_group_of_eight_forks_shares_one_start() -> None:
    from agentenv_rl.api import make

    episode = make("coding:fix-bug")
    try:
        observation, _ = episode.reset()
        assert any(t["name"] == "apply_patch" for t in observation["tools"])
        start_digest = episode.world.state_digest()
        fix = "--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"

        def rollout(index: int, fork: Any) -> tuple[float, str, str]:
            if index % 2 == 0:
                step = fork.step({"tool": "apply_patch", "arguments": {"patch_text": fix}})
                assert step.info.get("error") is None, step.info
            final = fork.step({"answer": "done"})
            return final.reward, final.info["trajectory_digest"], fork.world.state_digest()

        group = [episode.fork() for _ in range(8)]
        serial = [rollout(index, fork) for index, fork in enumerate(group)]
        assert [reward for reward, _, _ in serial] == [1.0, 0.0] * 4
        assert episode.world.state_digest() == start_digest  # the forks' edits never reached the start
        parallel_group = [episode.fork() for _ in range(8)]
        with ThreadPoolExecutor(8) as threads:  # graded at once, each in its own grading fork
            parallel = list(threads.map(rollout, range(8), parallel_group))
        assert parallel == serial  # same rewards, same trajectories, same trees
        episode.reset()
        assert episode.step({"answer": "nothing"}).reward == 0.0
        for fork in group + parallel_group:
            fork.close()
    finally:
        episode.close()
