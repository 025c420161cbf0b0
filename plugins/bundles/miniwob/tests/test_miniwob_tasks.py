"""The bundle's tasks run as `agentenv run` runs them: every scripted solution scores 1.0, every mistake what
MiniWoB gives it (0.0), and the episode API plays the same tasks with a seed, the page's reward and forks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentenv import get_host
from agentenv_miniwob.api import SOLUTIONS
from agentenv_rl.api import agent_of_kind, make, play


def run_bundle(agent: str, seed: int, tmp: Path) -> dict[str, float]:
    """`agentenv run miniwob` (its default tasks: the scripted ones) with `agent`; task → score."""
    config = tmp / "config.toml"  # the run records go to the test's folder
    config.write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp / "objects"}"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "run", "miniwob", "--agent", agent, "--seed", str(seed), "--json"],
        capture_output=True, text=True, timeout=900, cwd=tmp, check=False,
        env={**os.environ, "AGENTENV_CONFIG": str(config)},
    )  # fmt: skip
    assert done.stdout, done.stderr[-2000:]
    records = json.loads(done.stdout)["tasks"]
    return {record["name"]: record["score"] for record in records}


@pytest.mark.slow  # 26 browser episodes
@pytest.mark.timeout(1200)
def test_every_scripted_solution_scores_1_and_every_mistake_0(chromium: str, tmp_path: Path) -> None:
    assert run_bundle("miniwob-solver", 11, tmp_path) == dict.fromkeys(sorted(SOLUTIONS), 1.0)
    assert run_bundle("miniwob-wrong", 11, tmp_path) == dict.fromkeys(sorted(SOLUTIONS), 0.0)


def test_the_episode_api_plays_a_miniwob_task(chromium: str) -> None:
    episode = make("miniwob:click-test", seed=4)
    try:
        observation, info = episode.reset()
        assert info["seed"] == 4 and "`goal`" in observation["prompt"]
        assert {"goal", "snapshot", "click", "drag", "mouse_drag", "locate"} <= {
            t["name"] for t in observation["tools"]
        }
        goal = episode.step({"tool": "goal"}).observation["result"]
        assert goal == {"task": "click-test", "goal": "Click the button.", "done": False, "reward": 0.0}
        tree = episode.step({"tool": "snapshot"}).observation["result"]["tree"]
        button = int(tree.split("]")[0].strip("["))
        branch = episode.fork()  # before the click: its page is set up again and the snapshot played on it
        clicked = episode.step({"tool": "click", "arguments": {"element": button}})
        assert clicked.reward == 0.0 and not clicked.terminated
        assert episode.step({"tool": "goal"}).observation["result"]["done"] is True
        finished = episode.step({"answer": "done"})
        assert (finished.reward, finished.terminated, finished.info["verifiers"]["grade"]["miniwob"]["raw_reward"]) == (
            1.0,
            True,
            1,
        )
        # The fork never clicked: its own page is not done, and answering now scores 0.
        assert branch.step({"tool": "goal"}).observation["result"]["done"] is False
        assert branch.step({"answer": "done"}).reward == 0.0
        # reset: the same instance from its start; the solver then scores 1.0 again, the mistake 0.0.
        host = get_host()
        assert asyncio.run(play(episode, agent_of_kind(host, "miniwob-solver", {}))).reward == 1.0
        assert asyncio.run(play(episode, agent_of_kind(host, "miniwob-wrong", {}))).reward == 0.0
    finally:
        episode.close()


def test_shaping_rewards_the_step_that_ends_the_page(chromium: str) -> None:
    episode = make("miniwob:focus-text", seed=1, shaping=True)
    try:
        episode.reset()
        tree = episode.step({"tool": "snapshot"}).observation["result"]["tree"]
        field = next(int(line.split("]")[0].strip(" [")) for line in tree.splitlines() if "textbox" in line)
        assert episode.step({"tool": "click", "arguments": {"element": field}}).reward == 1.0
        assert episode.step({"answer": "done"}).reward == 0.0  # the score was paid on the click
    finally:
        episode.close()
