"""The explorer with a large store (issue 30): 10,000 stored runs and one run of 100,000 trajectory events.

Run: .venv/bin/python bench/explorer_bench.py [--runs 10000] [--events 100000] [--repeat 5]

1. Stores in a scratch folder: one real `agentenv run support-refund` record copied to `--runs` records (new
   ids), and a helpdesk world that really takes `--events` tool calls, its trajectory stored as a run does.
2. The real `agentenv up` serves them on a loopback port; Debian's chromium (playwright) opens the UI.
3. Measured, median of `--repeat`: time to first byte of `/static/style.css` (the baseline: a static file from
   the same server), of `/`, of `GET /api/runs`; the runs page rendered in the browser (50 rows shown); the
   trajectory page of the 100,000-event run at its end, first open (the line index is built) and again; the
   run page with that trajectory rendered.
4. Server RSS while paging through all events 200 at a time.

Goals: runs page rendered <= 300 ms, trajectory page <= 500 ms, server RSS growth while paging <= 10 %. Ratios
are against the static-file baseline of the same run. Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv import get_host
from agentenv.config import load_config
from agentenv_runtime import Records, build_world
from agentenv_testing.pytest_plugin import write_local_config
from agentenv_testing.services import LoopbackService

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import rss_kb

CHROMIUM = os.environ.get("AGENTENV_CHROMIUM", "/usr/lib/chromium/chromium")
RUNS_GOAL_MS, TRAJECTORY_GOAL_MS, RSS_GOAL = 300.0, 500.0, 0.10
PAGE = 200


def median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def first_byte(url: str) -> Callable[[], None]:
    def fetch() -> None:
        with urllib.request.urlopen(url, timeout=120) as answer:
            answer.read(1)

    return fetch


def seed_runs(folder: Path, env: dict[str, str], records: Any, count: int) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "run", "support-refund", "--json"],
        cwd=folder, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    real = records.get(json.loads(done.stdout)["tasks"][0]["run_id"])
    started = time.time() - count
    for i in range(count - 1):
        records.save(real | {"id": f"r20260101-000000-{i:016x}", "seed": i, "started_at": started + i})


def seed_long_run(records: Any, events: int) -> str:
    world = build_world("helpdesk", artifacts=["acme"], roles={"support": {"tools": ["*"]}})
    for i in range(events):
        outcome = world.call("get_ticket", {"ticket_id": "TCK-9001"}, role="support")
        if outcome.error:
            raise SystemExit(f"call {i} failed: {outcome.error}")
    run_id = "r20260102-000000-long0run0000000"
    key = f"runs/{run_id}/desk.trajectory.jsonl"
    records.put_object_chunks(key, world.trajectory.iter_jsonl())
    now = time.time()
    records.save({"id": run_id, "task": "long-run", "status": "succeeded", "passed": True, "score": 1.0, "seed": 0,
                  "started_at": now, "finished_at": now + 1, "trajectories": {"desk": key},
                  "trajectory_digest": world.trajectory.digest()})  # fmt: skip
    return run_id


def render_ms(browser: Any, url: str, ready: str, repeat: int, mark: str | None = None) -> tuple[float, float]:
    """Medians of (wall time from `goto` until the JS expression `ready` is true, and the page's own clock:
    the User Timing `mark` the UI sets when it has drawn the rows, in ms since its navigation started; without a
    mark, the load event's time)."""
    walls, inside = [], []
    for _ in range(repeat):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function(ready, timeout=120_000, polling="raf")
        walls.append((time.perf_counter() - start) * 1000)
        inside.append(
            page.evaluate(
                f"performance.getEntriesByName({mark!r})[0].startTime"
                if mark
                else "performance.getEntriesByType('navigation')[0].loadEventEnd"
            )
        )
        page.close()
    return statistics.median(walls), statistics.median(inside)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    try:
        return measure(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the stores: about 100 MiB at the default sizes


def measure(args: argparse.Namespace, folder: Path) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_")}
    env["AGENTENV_CONFIG"] = str(write_local_config(folder))
    os.environ["AGENTENV_CONFIG"] = env["AGENTENV_CONFIG"]
    records = Records(load_config(), get_host())
    start = time.perf_counter()
    seed_runs(folder, env, records, args.runs)
    print(f"stored {args.runs:,} runs in {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    long_run = seed_long_run(records, args.events)
    size = sum(p.stat().st_size for p in (folder / "objects" / "runs" / long_run).iterdir())
    print(f"stored a {args.events:,}-event trajectory ({size / 2**20:.1f} MiB) in {time.perf_counter() - start:.1f} s")

    service = LoopbackService([sys.executable, "-m", "agentenv", "up", "--port", "{port}"], log=folder / "up.log",
                              ready_path="/api/openapi.json", env=env)  # fmt: skip
    from playwright.sync_api import sync_playwright

    with service, sync_playwright() as driver:
        assert service.process is not None
        base = service.url
        trajectory_url = f"{base}/api/runs/{long_run}/trajectory?offset={args.events - PAGE}&limit={PAGE}"
        cold_start = time.perf_counter()
        first_byte(trajectory_url)()
        cold_ms = (time.perf_counter() - cold_start) * 1000
        baseline = median_ms(first_byte(f"{base}/static/style.css"), args.repeat * 4)
        index_ms = median_ms(first_byte(f"{base}/"), args.repeat * 4)
        runs_api = median_ms(first_byte(f"{base}/api/runs?limit=50"), args.repeat * 4)
        filtered_api = median_ms(first_byte(f"{base}/api/runs?limit=50&agent=nobody"), args.repeat)
        warm_ms = median_ms(first_byte(trajectory_url), args.repeat * 4)
        browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        # the browser's own cost: a page with no script, from the same server
        blank = render_ms(browser, f"{base}/static/style.css", "document.readyState === 'complete'", args.repeat)
        render_ms(browser, f"{base}/#/runs", "document.querySelectorAll('#runs-table tbody tr').length === 50", 1)
        runs_page = render_ms(
            browser,
            f"{base}/#/runs",
            "document.querySelectorAll('#runs-table tbody tr').length === 50",
            args.repeat,
            "runs-rendered",
        )
        run_page = render_ms(
            browser, f"{base}/#/run/{long_run}",
            f"document.querySelectorAll('#events-table tbody tr').length === {PAGE}", args.repeat,
            "trajectory-rendered",
        )  # fmt: skip
        browser.close()

        pid = service.process.pid
        rss_start = rss_kb(pid)
        samples = [rss_start]
        for offset in range(0, args.events, PAGE):
            first_byte(f"{base}/api/runs/{long_run}/trajectory?offset={offset}&limit={PAGE}")()
            if offset % (PAGE * 50) == 0:
                samples.append(rss_kb(pid))
        samples.append(rss_kb(pid))

    growth = (max(samples) - rss_start) / rss_start
    print("\nload average during the run (1, 5, 15 min): " + ", ".join(f"{v:.1f}" for v in os.getloadavg())
          + f" on {os.cpu_count()} CPUs")  # fmt: skip
    print(f"\nbaseline: first byte of /static/style.css  {baseline:8.1f} ms")
    for label, value in [
        ("first byte of /", index_ms),
        (f"first byte of GET /api/runs (50 of {args.runs:,})", runs_api),
        ("GET /api/runs?agent=… (no run matches: filtered in the store)", filtered_api),
        (f"trajectory page at event {args.events - PAGE:,}, first open", cold_ms),
        ("trajectory page, index built", warm_ms),
    ]:
        print(f"{label:<55} {value:8.1f} ms  ({value / baseline:6.1f}x baseline)")
    print("\nin chromium (wall from goto / the page's own clock since navigation start):")
    for label, (wall, inside) in [
        ("a static page with no script (browser baseline)", blank),
        (f"runs page rendered (50 of {args.runs:,} rows)", runs_page),
        ("run page of the long run rendered (200 events)", run_page),
    ]:
        print(f"{label:<55} {wall:8.1f} ms / {inside:7.1f} ms  ({inside / blank[1]:5.1f}x the browser baseline)")
    print(f"server RSS while paging all {args.events:,} events: start {rss_start / 1024:.1f} MiB, "
          f"max {max(samples) / 1024:.1f} MiB, end {samples[-1] / 1024:.1f} MiB, growth {growth:.1%}")  # fmt: skip
    missed = []
    # The goals are judged on the page's own clock (navigation start to rendered rows), not the driver's wall time.
    if runs_page[1] > RUNS_GOAL_MS:
        missed.append(f"runs page {runs_page[1]:.0f} ms > {RUNS_GOAL_MS:.0f} ms")
    if max(cold_ms, run_page[1]) > TRAJECTORY_GOAL_MS:
        missed.append(f"trajectory page {max(cold_ms, run_page[1]):.0f} ms > {TRAJECTORY_GOAL_MS:.0f} ms")
    if growth > RSS_GOAL:
        missed.append(f"RSS growth {growth:.1%} > {RSS_GOAL:.0%}")
    print("goals: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
