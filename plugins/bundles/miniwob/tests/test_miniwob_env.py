"""The miniwob env on Debian's Chromium: seeded instances, the page's reward, resets, forks and restores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agentenv_miniwob.api import MiniwobEnv
from agentenv_miniwob.solvers import one, parse_tree
from agentenv_runtime import World


def ok(outcome: Any) -> Any:
    assert outcome.ok, outcome.error
    return outcome.result


@pytest.fixture
def worlds(chromium: str) -> Iterator[list[World]]:
    made: list[World] = []
    yield made
    for world in made:
        world.env("miniwob").close()  # type: ignore[attr-defined]


def world_of(worlds: list[World], task: str, seed: int) -> World:
    world = World([MiniwobEnv({"task": task, "seed": seed})])
    worlds.append(world)
    return world


def look(world: World) -> tuple[str, str]:
    return ok(world.call("goal"))["goal"], ok(world.call("snapshot"))["tree"]


def test_the_same_seed_is_the_same_instance_and_another_seed_another(worlds: list[World]) -> None:
    first, again, other = (world_of(worlds, "click-button", seed) for seed in (5, 5, 6))
    assert look(first) == look(again)
    assert look(first) != look(other)
    goal, tree = look(first)
    assert goal.startswith('Click on the "') and 'button "' in tree


def test_the_page_grades_itself_and_a_wrong_click_is_graded_too(worlds: list[World]) -> None:
    world = world_of(worlds, "click-test-2", 0)
    env = world.env("miniwob")
    assert isinstance(env, MiniwobEnv)
    assert env.status() | {"url": "-"} == {
        "task": "click-test-2", "seed": 0, "url": "-", "on_task": True, "done": False, "reward": 0.0,
        "raw_reward": 0, "time_reward": 0, "reason": None, "episode_id": 0,
    }  # fmt: skip
    nodes = parse_tree(ok(world.call("snapshot"))["tree"])
    ok(world.call("click", {"element": one(nodes, "button", "TWO").id}))
    status = env.status()
    assert (status["done"], status["raw_reward"], status["reward"]) == (True, -1, 0.0)
    ok(world.call("click", {"element": one(nodes, "button", "ONE").id}))  # too late: the page rewards once
    assert env.status()["raw_reward"] == -1
    assert ok(world.call("goal")) == {"task": "click-test-2", "goal": "Click button ONE.", "done": True, "reward": 0.0}


def test_leaving_the_task_page_scores_zero(worlds: list[World]) -> None:
    world = world_of(worlds, "click-test", 0)
    ok(world.call("goto", {"url": "about:blank"}))
    status = world.env("miniwob").status()  # type: ignore[attr-defined]
    assert (status["on_task"], status["done"], status["reward"]) == (False, True, 0.0)


def test_a_fork_continues_from_the_same_page_and_a_reset_starts_the_instance_again(worlds: list[World]) -> None:
    world = world_of(worlds, "enter-text", 3)
    goal, tree = look(world)
    wanted = goal.split('"')[1]
    nodes = parse_tree(tree)
    field, submit = one(nodes, "textbox"), one(nodes, "button", "Submit")
    ok(world.call("type", {"element": field.id, "text": wanted}))
    branch = world.fork()
    worlds.append(branch)
    # The fork has no page yet: it is set up and the parent's calls are played on it, so the text is there.
    assert f'value="{wanted}"' in ok(branch.call("snapshot"))["tree"]
    ok(branch.call("click", {"element": submit.id}))
    assert branch.env("miniwob").status()["reward"] == 1.0  # type: ignore[attr-defined]
    ok(world.call("type", {"element": field.id, "text": wanted + "x"}))  # the parent goes its own way
    ok(world.call("click", {"element": submit.id}))
    assert world.env("miniwob").status()["raw_reward"] == -1  # type: ignore[attr-defined]
    assert branch.query("miniwob", "SELECT COUNT(*) AS n FROM page_actions") == [{"n": 4}]  # the replay added none
    world.reset()
    assert look(world) == (goal, tree)
    assert world.env("miniwob").status()["done"] is False  # type: ignore[attr-defined]


def test_a_restored_snapshot_brings_its_page_back(worlds: list[World]) -> None:
    world = world_of(worlds, "click-checkboxes", 2)
    nodes = parse_tree(look(world)[1])
    box = one(nodes, "checkbox")
    ok(world.call("click", {"element": box.id}))
    saved = world.snapshot()
    ok(world.call("click", {"element": box.id}))
    assert f"[{box.id}] checkbox" in ok(world.call("snapshot"))["tree"].split(" unchecked")[0]
    world.restore(saved)
    assert f'[{box.id}] checkbox "{box.name}" checked' in ok(world.call("snapshot"))["tree"]


def test_drag_locate_and_mouse_drag(worlds: list[World]) -> None:
    world = world_of(worlds, "drag-box", 1)
    nodes = parse_tree(look(world)[1])
    small, large = one(nodes, "text", "s"), one(nodes, "text", "L")
    before = ok(world.call("locate", {"element": small.id}))
    target = ok(world.call("locate", {"element": large.id}))
    assert before["width"] == before["height"] < target["width"] == target["height"]  # squares: 20 and 50 px inside
    grip = {"x": before["x"] + 3, "y": before["y"] + 3}  # a corner: the large box may cover the middle
    ok(world.call("mouse_drag", grip | {"to_x": grip["x"] + 20, "to_y": grip["y"]}))
    assert ok(world.call("locate", {"element": small.id}))["x"] == pytest.approx(before["x"] + 20, abs=1)
    ok(world.call("drag", {"element": small.id, "target": large.id}))
    after = ok(world.call("locate", {"element": small.id}))
    middle = (after["x"] + after["width"] / 2, after["y"] + after["height"] / 2)
    assert middle == pytest.approx((target["x"] + target["width"] / 2, target["y"] + target["height"] / 2), abs=1)
    missing = world.call("drag", {"element": small.id, "target": 999})
    assert missing.error is not None and missing.error["code"] == "no_element"


def test_no_task_is_a_clear_error(chromium: str) -> None:
    world = World([MiniwobEnv()])
    refused = world.call("snapshot")
    assert refused.error is not None and refused.error["code"] == "no_task"
    assert "miniwob_task" in refused.error["message"]
