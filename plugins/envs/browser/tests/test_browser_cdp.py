"""The browser over CDP, both ways: the env's own Chromium opens a DevTools endpoint that another process attaches to
with playwright's `connect_over_cdp` and sees the episode's page; and the env drives a Chromium that runs elsewhere
(started here as its own process, as it would be in an agent's sandbox) through that browser's endpoint."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_browser.env import BrowserEnv
from agentenv_runtime import World


def ok(outcome: Any) -> Any:
    assert outcome.ok, outcome.error
    return outcome.result


ATTACH = textwrap.dedent(
    """
    import asyncio, json, sys
    from playwright.async_api import async_playwright

    async def main(endpoint, url):
        async with async_playwright() as p:
            browser = await p.chromium.connect_over_cdp(endpoint)
            pages = [page for context in browser.contexts for page in context.pages if page.url == url]
            page = pages[0]
            seen = {"title": await page.title(), "heading": await page.inner_text("h1")}
            await page.fill("#amount", "42")  # the outside client acts on the very page the episode has
            print(json.dumps(seen))

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def attach(endpoint: str, url: str) -> dict[str, Any]:
    """Another process attaches over CDP, reads the page at `url` and types into it."""
    done = subprocess.run([sys.executable, "-c", ATTACH, endpoint, url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_an_outside_client_attaches_to_the_worlds_browser_and_sees_the_page(chromium: str, site: str) -> None:
    env = BrowserEnv({"executable_path": chromium, "debugging_port": 0})
    world = World([env])
    try:
        ok(world.call("goto", {"url": f"{site}/index.html"}))
        where = ok(world.call("devtools"))
        assert where["url"] == f"{site}/index.html" and where["cdp_url"].startswith("http://127.0.0.1:")
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(where["cdp_url"] + "/json/version") as r:
            assert "Chrome" in json.load(r)["Browser"]
        assert attach(where["cdp_url"], where["url"]) == {"title": "Desk", "heading": "Support desk"}
        assert 'value="42"' in ok(world.call("snapshot"))["tree"]  # the env sees what the outside client typed
    finally:
        env.close()


def test_without_an_endpoint_devtools_says_how_to_open_one(chromium: str) -> None:
    refused = World([BrowserEnv({"executable_path": chromium})]).call("devtools")
    assert refused.error is not None and refused.error["code"] == "no_devtools"
    assert "debugging_port" in refused.error["message"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def elsewhere(chromium: str, tmp_path: Path) -> Iterator[str]:
    """A Chromium started as its own process with a DevTools port, as the agent's sandbox would run one."""
    port = _free_port()
    argv = [chromium, "--headless", "--no-sandbox", f"--remote-debugging-port={port}", f"--user-data-dir={tmp_path}",
            "--no-first-run", "--disable-dev-shm-usage", "about:blank"]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while True:
        try:
            opener.open(endpoint + "/json/version", timeout=2).close()
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, "the outside Chromium did not start"
            time.sleep(0.1)
    try:
        yield endpoint
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # only the browser this fixture started
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(15)


def test_the_env_drives_a_browser_that_runs_elsewhere(elsewhere: str, site: str) -> None:
    env = BrowserEnv({"cdp_url": elsewhere})
    world = World([env])
    try:
        ok(world.call("goto", {"url": f"{site}/index.html"}))
        assert ok(world.call("devtools"))["cdp_url"] == elsewhere
        assert attach(elsewhere, f"{site}/index.html")["heading"] == "Support desk"  # the page is in that browser
        clone = world.fork()
        assert ok(clone.call("snapshot"))["url"] == "about:blank"  # a fork's own context there too
        clone.env("browser").close()  # type: ignore[attr-defined]
    finally:
        env.close()


def test_cdp_url_and_a_local_launch_are_exclusive() -> None:
    with pytest.raises(ValueError, match="cdp_url drives a browser that runs elsewhere"):
        BrowserEnv({"cdp_url": "http://127.0.0.1:9222", "debugging_port": 0})
    refused = World([BrowserEnv({"cdp_url": f"http://127.0.0.1:{_free_port()}"})]).call("snapshot")
    assert refused.error is not None and refused.error["code"] == "browser_unavailable"
    assert refused.error["message"].startswith("cdp_url http://127.0.0.1:")
