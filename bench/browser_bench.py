"""Browser env benchmark: an episode reset (a fresh context on a forked world) against a cold browser launch.

Run: .venv/bin/python bench/browser_bench.py [--rounds N] [--episodes K]

Everything runs on Debian's Chromium (agentenv_browser.driver.find_chromium) against a small page served on
loopback, in this process:
  cold launch   launch Chromium, open a context and a page, load the page, close it all: what an episode costs
                without a shared browser (the baseline)
  reset         `world.fork()` of a world whose page is loaded, then the fork's first call (`snapshot`: its
                fresh context and page), with contexts made ahead (the default: after the previous episode's
                first call) and, in a block before, made on the call (the baseline); the page load that follows
                (`goto`) is reported apart. Also an RL reset (the same world put back to its checkpoint, then the
                first call) and the web-desk world's reset (fork; the first call loads the desk's ticket list)
  actions       per-tool latency through `World.call` on a loaded page: snapshot, type, select, click, back,
                screenshot, mouse_click, key
  memory        PSS of the browser's processes (every descendant of this process, from smaps_rollup) with 1 and
                with K episodes open at once, and the cost per extra episode
Goal (issue 27): reset ≤ 100 ms and ≥ 10× faster than a cold launch. Compare ratios, not absolute times: they
depend on the machine and its load (2 shared cores here).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PAGE = """<!doctype html><html><head><title>Bench</title></head><body>
<h1>Orders</h1><p>Order ORD-5001: boots</p>
<form action="/done.html"><label for="q">Amount</label><input id="q" name="q">
<select name="r"><option>Damaged</option><option>Late</option></select><button>Refund</button></form>
</body></html>"""
DONE = "<!doctype html><html><head><title>Done</title></head><body><p>Recorded</p></body></html>"


def serve_site() -> tuple[str, Callable[[], None]]:
    folder = Path(tempfile.mkdtemp(prefix="browser-bench-"))
    (folder / "index.html").write_text(PAGE)
    (folder / "done.html").write_text(DONE)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def cold_launch(chromium: str, url: str) -> float:
    from agentenv_browser.driver import BrowserHost

    started = time.perf_counter()
    host = BrowserHost(chromium)

    async def page() -> None:
        context = await host.browser.new_context()
        await (await context.new_page()).goto(url)
        await context.close()

    host.run(page)
    host.close()
    return time.perf_counter() - started


def pss_kib(root: int) -> int:
    """PSS of every descendant process of `root` (the browser and its renderers, the playwright driver)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        pid, ppid = int(stat.parent.name), int(text[text.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def fork_resets(template: Any, index: str, rounds: int, spare: bool, loads: list[float]) -> list[float]:
    """Fork the template, time the fork and its first call (its fresh context and page); then load a page and
    stand for an episode's own work. The first round is not timed: it arms the contexts made ahead."""
    from agentenv_browser import driver

    driver.SPARE_CONTEXTS = spare
    template.env("browser")._host().drop_spares()
    times = []
    for round_ in range(rounds + 1):
        started = time.perf_counter()
        episode = template.fork()
        outcome = episode.call("snapshot")  # the fork's first call: its fresh context and page
        elapsed = time.perf_counter() - started
        assert outcome.ok, outcome.error
        if round_:
            times.append(elapsed)
        started = time.perf_counter()
        assert episode.call("goto", {"url": index}).ok
        loads.append(time.perf_counter() - started)
        episode.env("browser").close()
        time.sleep(0.3)  # an episode's own work, during which the next context is made ahead
    driver.SPARE_CONTEXTS = True
    return times


def restore_resets(template: Any, index: str, rounds: int) -> list[float]:
    """An RL episode's reset: the same world put back to its checkpoint (its browser drops its context), then the
    first call on the fresh context."""
    world = template.fork()
    start = world.checkpoint()
    times = []
    for round_ in range(rounds + 1):
        went = world.call("goto", {"url": index})  # the episode's work
        assert went.ok, went.error
        time.sleep(0.3)
        started = time.perf_counter()
        world.restore_checkpoint(start, hold=True)
        outcome = world.call("snapshot")
        elapsed = time.perf_counter() - started
        assert outcome.ok and outcome.result["url"] == "about:blank", outcome
        if round_:
            times.append(elapsed)
    world.env("browser").close()
    return times


def desk_resets(chromium: str, rounds: int) -> list[float]:
    """The web-desk world (helpdesk with acme, the desk's website as an app, the browser opening `{website}/tickets`):
    a fork and its first call, which loads the desk's ticket list into the fresh context."""
    from agentenv_browser.env import BrowserEnv
    from agentenv_helpdesk.env import HelpdeskEnv
    from agentenv_runtime import World
    from agentenv_website.api import WebsiteEnv

    helpdesk = HelpdeskEnv()
    helpdesk.load(HelpdeskEnv.find_artifact("acme"))
    site = WebsiteEnv({"app": "agentenv_helpdesk.web:app", "role": "desk"})
    browser = BrowserEnv({"executable_path": chromium, "start_url": "{website}/tickets"})
    template = World([helpdesk, site, browser], roles={"desk": {"tools": ["*"]}})
    times = []
    for round_ in range(rounds + 1):
        started = time.perf_counter()
        episode = template.fork()
        outcome = episode.call("snapshot")
        elapsed = time.perf_counter() - started
        assert outcome.ok and "TCK-9001" in outcome.result["tree"], outcome
        if round_:
            times.append(elapsed)
        episode.env("browser").close()
        time.sleep(0.3)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=8)
    args = parser.parse_args()

    from agentenv_browser.driver import find_chromium
    from agentenv_browser.env import BrowserEnv
    from agentenv_runtime import World

    chromium = find_chromium()
    url, stop_site = serve_site()
    index = f"{url}/index.html"
    print(f"chromium {chromium}; {args.rounds} rounds; page {index}")

    cold = [cold_launch(chromium, index) for _ in range(max(3, args.rounds // 2))]

    template = World([BrowserEnv({"executable_path": chromium})])
    template.call("goto", {"url": index})  # the shared browser is up; the template has a page
    loads: list[float] = []
    # The baseline block first (contexts made on the call), then the default (made ahead, after the previous
    # episode's first call). Blocks, not alternating rounds: a spare is made by the round before, so alternating
    # would time neither mode as it runs.
    resets = {spare: fork_resets(template, index, args.rounds, spare, loads) for spare in (False, True)}
    restores = restore_resets(template, index, args.rounds)
    desk = desk_resets(chromium, args.rounds)

    actions: dict[str, list[float]] = {}
    world = template.fork()

    def timed(tool: str, arguments: dict[str, Any]) -> None:
        started = time.perf_counter()
        outcome = world.call(tool, arguments)
        actions.setdefault(tool, []).append(time.perf_counter() - started)
        assert outcome.ok, (tool, outcome.error)

    for _ in range(args.rounds):
        world.call("goto", {"url": index})
        timed("snapshot", {})
        timed("type", {"element": 4, "text": "89.99"})
        timed("select", {"element": 5, "option": "Late"})
        timed("screenshot", {})
        timed("click", {"element": 6})
        timed("back", {})
        timed("mouse_click", {"x": 5, "y": 5})
        timed("key", {"key": "Tab"})
    world.env("browser").close()  # type: ignore[attr-defined]

    me = os.getpid()
    open_worlds = [template.fork() for _ in range(args.episodes)]
    open_worlds[0].call("goto", {"url": index})
    template.env("browser").close()  # type: ignore[attr-defined]
    one = pss_kib(me)
    for other in open_worlds[1:]:
        other.call("goto", {"url": index})
    many = pss_kib(me)
    for other in open_worlds:
        other.env("browser").close()  # type: ignore[attr-defined]
    stop_site()

    cold_ms, reset_ms, plain_ms = median_ms(cold), median_ms(resets[True]), median_ms(resets[False])
    restore_ms, desk_ms = median_ms(restores), median_ms(desk)
    print(f"cold launch (launch + context + page + load + close): median {cold_ms:.1f} ms over {len(cold)}")
    print(f"episode reset (fork + fresh context and page, made ahead): median {reset_ms:.1f} ms over {args.rounds}")
    print(f"episode reset (fork + fresh context and page, made then):  median {plain_ms:.1f} ms over {args.rounds}")
    print(f"episode reset (RL: restore the checkpoint + fresh context): median {restore_ms:.1f} ms over {args.rounds}")
    print(f"web-desk reset (fork + fresh context + the desk's ticket list loaded): median {desk_ms:.1f} ms")
    print(f"  then loading the page (goto): median {median_ms(loads):.1f} ms")
    print(
        f"  ratio cold/reset {cold_ms / reset_ms:.1f}x (goal >= 10x), made-then/made-ahead {plain_ms / reset_ms:.1f}x;"
        f" reset goal <= 100 ms: {'met' if reset_ms <= 100 else 'not met'}"
    )
    print("per-action latency through World.call (median ms):")
    for tool, samples in actions.items():
        print(f"  {tool:12s} {median_ms(samples):7.1f}")
    print(
        f"memory (PSS of the browser's processes): 1 episode {one / 1024:.0f} MiB, {args.episodes} episodes "
        f"{many / 1024:.0f} MiB, {(many - one) / 1024 / max(1, args.episodes - 1):.1f} MiB per extra episode"
    )


if __name__ == "__main__":
    main()
