"""The pages, the seeds and the bundle's files, without a browser."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from agentenv_miniwob.api import SOLUTIONS, page_seed, pages_url, task_names
from agentenv_miniwob.pages import task_title, unknown_task
from agentenv_miniwob.steps import MiniwobTask, MiniwobTaskSettings

BUNDLE = Path(__file__).parents[1] / "src" / "agentenv_miniwob" / "bundles" / "miniwob"
NUMPY = {0: 985772, 1: 128037, 2: 875688, 7: 585903, 42: 121958, 123: 773630, 2**32 - 1: 944547}
"""numpy.random.RandomState(seed).randint(0, 1000000), printed by numpy 2.4 in BrowserGym's venv: the page seed
BrowserGym gives MiniWoB for `reset(seed=seed)`."""


def test_page_seeds_are_browsergyms() -> None:
    assert {seed: page_seed(seed) for seed in NUMPY} == NUMPY
    with pytest.raises(ValueError, match="0 ≤ seed < 2\\*\\*32"):
        page_seed(-1)


def test_the_wheel_has_every_task_page_and_they_are_served() -> None:
    import urllib.request

    names = task_names()
    assert len(names) == 130 and set(SOLUTIONS) <= set(names)
    assert task_title("click-test") == "Click Test Task"
    with urllib.request.urlopen(f"{pages_url()}click-test.html", timeout=30) as page:
        assert b"core.startEpisode()" in page.read()
    assert (
        unknown_task("click-tset")
        == "'click-tset' is not a MiniWoB++ task; did you mean click-test, click-test-2, click-shape?"
    )
    assert unknown_task("click-test") is None


def test_the_bundle_has_a_task_per_page_and_runs_the_scripted_ones_by_default() -> None:
    spec = tomllib.loads((BUNDLE / "bundle.toml").read_text(encoding="utf-8"))
    assert sorted(p.stem for p in (BUNDLE / "tasks").glob("*.toml")) == list(task_names()) == spec["splits"]["all"]
    assert spec["tasks"] == spec["splits"]["scripted"] == sorted(SOLUTIONS)
    assert len(spec["splits"]["browsergym"]) == 125
    task = tomllib.loads((BUNDLE / "tasks" / "drag-box.toml").read_text(encoding="utf-8"))
    assert [s["type"] for s in task["steps"]] == [
        "deploy_env", "miniwob_task", "deploy_agent", "prompt_agent", "miniwob_reward"
    ]  # fmt: skip


def test_an_unknown_task_is_refused_before_the_run_with_the_closest_names() -> None:
    step = MiniwobTask()
    problems = step.preflight(MiniwobTaskSettings(env="page", task="drag-boxes"), ["page"])
    assert problems == [("task", "'drag-boxes' is not a MiniWoB++ task; did you mean drag-box, drag-cube, drag-items?")]
    assert step.preflight(MiniwobTaskSettings(env="world", task="drag-box"), ["page"])[0][0] == "env"
