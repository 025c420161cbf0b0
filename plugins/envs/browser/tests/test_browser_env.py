"""The browser env on real Chromium: every tool, the trajectory's screenshots, and fresh contexts per episode."""

from __future__ import annotations

import base64
import gc
import re
import time
from typing import Any

import pytest
from agentenv_browser.env import BrowserEnv
from agentenv_runtime import Env, World


def ok(outcome: Any) -> Any:
    assert outcome.ok, outcome.error
    return outcome.result


def ids(tree: str) -> dict[str, int]:
    """`role "name"` → element id, from a snapshot's lines."""
    return {m.group(2): int(m.group(1)) for m in re.finditer(r'\[(\d+)\] (\w+ "[^"]*")', tree)}


@pytest.fixture
def world(chromium: str) -> Any:
    world = World([BrowserEnv({"executable_path": chromium, "width": 800, "height": 600})])
    yield world
    world.env("browser").close()  # type: ignore[attr-defined]


def test_read_fill_choose_submit_and_go_back(world: World, site: str) -> None:
    assert ok(world.call("goto", {"url": f"{site}/index.html"})) == {
        "url": f"{site}/index.html",
        "title": "Desk",
        "status": 200,
    }
    tree = ok(world.call("snapshot"))["tree"]
    assert tree.splitlines()[0] == '[1] heading "Support desk"'
    assert "Hidden" not in tree  # display:none is not shown to the agent
    found = ids(tree)
    amount, reason, refund = found['textbox "Amount"'], found['combobox "reason"'], found['button "Refund"']
    ok(world.call("type", {"element": amount, "text": "89.99"}))
    assert ok(world.call("select", {"element": reason, "option": "Late delivery"}))["selected"] == ["late"]
    again = ok(world.call("snapshot"))["tree"]
    assert ids(again) == found  # ids stay valid across snapshots of the same page
    assert 'value="89.99"' in again and "*Late delivery" in again
    done = ok(world.call("click", {"element": refund}))
    assert done == {"url": f"{site}/done.html?amount=89.99&reason=late", "title": "Done"}
    assert ok(world.call("back"))["title"] == "Desk"
    visits = world.query("browser", "SELECT title FROM visits ORDER BY seq")
    assert [v["title"] for v in visits] == ["Desk", "Desk", "Done", "Desk"]


def test_screen_tools_click_by_coordinates_and_press_keys(world: World, site: str) -> None:
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    assert ok(world.call("mouse_click", {"x": 460, "y": 320}))["title"] == "Stamped"  # the #stamp button
    amount = ids(ok(world.call("snapshot"))["tree"])['textbox "Amount"']
    ok(world.call("type", {"element": amount, "text": "12"}))
    assert ok(world.call("key", {"key": "Enter"}))["url"].startswith(f"{site}/done.html?amount=12")
    ok(world.call("back"))
    assert ok(world.call("scroll", {"direction": "down", "pixels": 300}))["scroll_y"] >= 0


def test_screenshots_are_pngs_kept_in_the_trajectory_and_the_state(world: World, site: str) -> None:
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    shot = ok(world.call("screenshot"))
    png = base64.b64decode(shot["png_base64"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) == shot["bytes"]
    (event,) = [e for e in world.trajectory.events if e.get("tool") == "screenshot"]
    assert event["result"]["sha256"] == shot["sha256"]
    (row,) = world.query("browser", "SELECT sha256, png FROM screenshots")
    assert row["png"] == png


def test_bad_arguments_are_refused_before_the_browser_acts(world: World) -> None:
    refused = world.call("goto", {"url": "file:///etc/passwd"})
    assert refused.error is not None and refused.error["code"] == "invalid_arguments"
    assert world.call("click", {"element": 0}).error["errors"][0]["field"] == "element"  # type: ignore[index]
    missing = world.call("click", {"element": 42})
    assert missing.error is not None and missing.error["code"] == "no_element"
    assert world.query("browser", "SELECT COUNT(*) AS n FROM visits") == [{"n": 0}]


def test_reset_and_fork_give_fresh_contexts(world: World, site: str) -> None:
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    ok(world.call("goto", {"url": f"{site}/index.html"}))  # the page set a cookie on the first visit
    assert "cookie: visited=yes" in ok(world.call("snapshot"))["tree"]
    clone = world.fork()
    try:
        assert ok(clone.call("snapshot"))["url"] == "about:blank"  # its own context, not the parent's page
        ok(clone.call("goto", {"url": f"{site}/index.html"}))
        assert "cookie: none" in ok(clone.call("snapshot"))["tree"]  # no cookies from the parent
        assert ok(world.call("snapshot"))["url"] == f"{site}/index.html"  # the parent's page is untouched
        assert len(clone.query("browser", "SELECT * FROM visits")) == 3  # the forked state: the parent's 2 visits
    finally:
        clone.env("browser").close()  # type: ignore[attr-defined]
    world.reset()
    assert ok(world.call("snapshot"))["url"] == "about:blank"
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    assert "cookie: none" in ok(world.call("snapshot"))["tree"]


def test_start_url_opens_each_fresh_context(chromium: str, site: str) -> None:
    env = BrowserEnv({"executable_path": chromium, "start_url": f"{site}/done.html"})
    try:
        world = World([env])
        assert ok(world.call("snapshot"))["tree"] == '[1] text "Refund recorded"'
        world.reset()
        assert ok(world.call("snapshot"))["url"] == f"{site}/done.html"
    finally:
        env.close()


def test_find_gives_ids_by_name_and_role(world: World, site: str) -> None:
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    found = ok(world.call("find", {"text": "refund", "role": "button"}))
    assert found["matches"] == [{"element": found["element"], "role": "button", "name": "Refund"}]
    assert ok(world.call("find", {"text": "Amount"}))["matches"][0]["role"] == "textbox"
    ok(world.call("type", {"element": ok(world.call("find", {"text": "Amount"}))["element"], "text": "5"}))
    assert ok(world.call("click", {"element": found["element"]}))["title"] == "Done"
    missing = world.call("find", {"text": "Escalate", "role": "button"})
    assert (
        missing.error is not None and missing.error["code"] == "no_element" and "snapshot" in missing.error["message"]
    )


class Site(Env):
    """A stand-in for a `website` env: what the browser reads of one is its `base_url`."""

    name = "site"

    def __init__(self, base_url: str) -> None:
        super().__init__()
        self.base_url = base_url


def test_start_url_names_a_sibling_envs_site(chromium: str, site: str) -> None:
    browser = BrowserEnv({"executable_path": chromium, "start_url": "{site}/done.html"})
    world = World([Site(site), browser])
    try:
        assert ok(world.call("snapshot"))["url"] == f"{site}/done.html"
    finally:
        browser.close()
    lost = BrowserEnv({"executable_path": chromium, "start_url": "{desk}/"})
    refused = World([Site(site), lost]).call("snapshot")
    assert refused.error is not None and refused.error["code"] == "bad_start_url"
    assert "{desk} names no env with a site in this world (envs with one: site)" in refused.error["message"]


def test_restoring_a_checkpoint_starts_a_fresh_context(world: World, site: str) -> None:
    start = world.checkpoint()
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    assert "cookie: visited=yes" in ok(world.call("snapshot"))["tree"]
    world.restore_checkpoint(start, hold=True)  # what an RL episode's reset() does
    assert ok(world.call("snapshot"))["url"] == "about:blank"
    ok(world.call("goto", {"url": f"{site}/index.html"}))
    assert "cookie: none" in ok(world.call("snapshot"))["tree"]
    world.restore_checkpoint(start, hold=True)  # the held start: rewound, not restored
    assert ok(world.call("snapshot"))["url"] == "about:blank"


def test_a_forgotten_forks_context_is_closed(world: World, site: str) -> None:
    clone = world.fork()
    ok(clone.call("goto", {"url": f"{site}/done.html"}))
    browser = clone.env("browser")
    host, context = browser._host(), browser._context  # type: ignore[attr-defined]

    async def is_open() -> bool:
        return context in host.browser.contexts

    assert host.run(is_open)
    del clone, browser
    gc.collect()
    deadline = time.monotonic() + 30
    while host.run(is_open) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not host.run(is_open)
