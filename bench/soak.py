"""Soak: many in-process rollouts and many served calls at 32 concurrent sessions, RSS sampled throughout.

Run: .venv/bin/python bench/soak.py [--rollouts 100000] [--calls 100000] [--sessions 32] [--budget 900]

1. In-process rollouts (the RL path): support-refund episodes through the episode API (`agentenv_rl`): reset
   to the task's start, the solver's tool calls, the final answer graded by the task's verifiers; every
   reward must be 1.0 and every trajectory digest the same. This process's RSS is sampled.
2. Served calls: a gateway serving a helpdesk+email world loaded with `acme` runs in a child process; 32
   concurrent client sessions (httpx, one keep-alive connection each) call tools over REST and JSON-RPC; the
   server's RSS is sampled from /proc and each call's latency is recorded.

After a warm-up (the first 10 % of each phase, and at least 5,000 rollouts or 10 s of calls) RSS may grow at
most 10 %; the script exits 1 if it grows more, or if any call fails. `--budget` (seconds for both phases,
default 900) only guards against a hung or badly slowed machine: the full counts take about three minutes
here. When they do not fit, each phase stops at its share of the budget and the output says so — "scaled" —
with the counts actually run. p50/p99 latencies are printed for both phases.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from array import array
from pathlib import Path
from typing import Any

WARM_UP = 0.10
WARM_UP_ROLLOUTS = 5_000
WARM_UP_SECONDS = 10.0
SAMPLE_EVERY = 500
SAMPLE_SECONDS = 0.5
MAX_GROWTH = 0.10
EPISODE = [
    ("get_ticket", {"ticket_id": "TCK-9001"}),
    ("lookup_account", {"email": "dana.kim@example.com"}),
    ("list_orders", {"account_id": "ACC-1001"}),
    ("get_order", {"order_id": "ORD-5001"}),
]
"""The served phase's calls: read-only, so the served world stays the same size."""
SOLVED = [
    {"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}},
    {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged boots"}},
    {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}},
    {
        "tool": "send_email",
        "arguments": {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99."},
    },
    {"answer": "Refunded 89.99, closed TCK-9001, emailed Dana."},
]
"""A support-refund episode that scores 1.0."""


def rss_kb(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc status")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def growth(samples: list[int], least: int) -> tuple[int, int, float]:
    """(RSS after warm-up, RSS at the end, relative growth) of the samples, in kB. Warm-up is the first 10 %
    of the samples, and at least `least` of them (caches and allocator arenas fill in the first seconds)."""
    start = samples[min(len(samples) - 1, max(least, int(len(samples) * WARM_UP)))]
    end = samples[-1]
    return start, end, (end - start) / start


def world() -> Any:
    from agentenv_runtime.world.build import build_world

    built = build_world("helpdesk,email", artifacts=["acme"])
    built.set_clock("2026-11-24T10:00:00Z", mode="frozen")
    return built


# ---- phase 1: in-process rollouts ------------------------------------------------------------------
def rollouts(count: int, seconds: float) -> dict[str, Any]:
    import tempfile

    from agentenv_rl.api import make

    os.chdir(tempfile.mkdtemp(prefix="soak-"))  # the episode's run stores (nothing is recorded) live here
    episode = make("support-refund")
    samples: list[int] = []
    timings = array("d", bytes(8 * count))  # allocated up front: the soak's own records must not count as growth
    digests: set[str] = set()
    deadline = time.monotonic() + seconds
    done = 0
    for done in range(1, count + 1):
        start = time.perf_counter()
        episode.reset()
        for action in SOLVED:
            result = episode.step(action)
        if result.reward != 1.0:
            raise SystemExit(f"rollout {done}: reward {result.reward}, not 1.0: {result.info}")
        digests.add(result.info["trajectory_digest"])
        timings[done - 1] = time.perf_counter() - start
        if done % SAMPLE_EVERY == 0:
            samples.append(rss_kb())
            if time.monotonic() > deadline:
                break
    samples.append(rss_kb())
    start_kb, end_kb, grew = growth(samples, WARM_UP_ROLLOUTS // SAMPLE_EVERY)
    return {
        "asked": count,
        "ran": done,
        "scaled": done < count,
        "rss_after_warmup_kb": start_kb,
        "rss_end_kb": end_kb,
        "rss_growth": grew,
        "p50_ms": percentile(list(timings[:done]), 0.5) * 1000,
        "p99_ms": percentile(list(timings[:done]), 0.99) * 1000,
        "distinct_digests": len(digests),
    }


# ---- phase 2: served calls -------------------------------------------------------------------------
def serve() -> None:
    """Child process: serve the soak world, print its URL, run until stdin closes."""
    from agentenv_gateway.app import build_app
    from agentenv_gateway.server import serve_in_thread

    with serve_in_thread(build_app(world())) as url:
        print(url, flush=True)
        sys.stdin.read()


async def _session(url: str, index: int, share: int, deadline: float, timings: list[float], failures: list[str]) -> int:
    import httpx

    made = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while made < share and time.monotonic() < deadline:
            tool, arguments = EPISODE[(index + made) % len(EPISODE)]
            start = time.perf_counter()
            if made % 2:
                response = await client.post(f"/rest/tools/{tool}", json=arguments)
                ok = response.status_code == 200
            else:
                body = {
                    "jsonrpc": "2.0",
                    "id": made,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments},
                }
                response = await client.post("/agentenv", json=body)
                ok = response.status_code == 200 and response.json().get("result", {}).get("ok") is True
            timings.append(time.perf_counter() - start)
            if not ok:
                failures.append(f"{tool}: HTTP {response.status_code} {response.text[:200]}")
                return made
            made += 1
    return made


def served(count: int, sessions: int, seconds: float) -> dict[str, Any]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit("the soak server did not start")
        timings: list[float] = []
        failures: list[str] = []
        samples: list[int] = []
        deadline = time.monotonic() + seconds

        async def main() -> int:
            tasks = [
                asyncio.create_task(_session(url, i, count // sessions, deadline, timings, failures))
                for i in range(sessions)
            ]
            while not all(task.done() for task in tasks):
                samples.append(rss_kb(process.pid))
                await asyncio.sleep(SAMPLE_SECONDS)
            return sum(task.result() for task in tasks)

        made = asyncio.run(main())
        samples.append(rss_kb(process.pid))
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(30)
    start_kb, end_kb, grew = growth(samples, int(WARM_UP_SECONDS / SAMPLE_SECONDS))
    return {
        "asked": count,
        "ran": made,
        "scaled": made < count // sessions * sessions,
        "sessions": sessions,
        "failures": failures[:5],
        "rss_after_warmup_kb": start_kb,
        "rss_end_kb": end_kb,
        "rss_growth": grew,
        "p50_ms": percentile(timings, 0.5) * 1000,
        "p99_ms": percentile(timings, 0.99) * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rollouts", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds for both phases (default 900)")
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    if not Path("/proc/self/status").exists():
        print("soak: RSS is read from /proc, which this system does not have; skipped")
        return 0
    report = {
        "rollouts": rollouts(args.rollouts, args.budget * 0.4),
        "served": served(args.calls, args.sessions, args.budget * 0.6),
    }
    print(json.dumps(report, indent=2))
    ok = True
    for phase, row in report.items():
        scaled = f"scaled to {row['ran']:,} of {row['asked']:,} (time budget)" if row["scaled"] else f"{row['ran']:,}"
        grew_ok = row["rss_growth"] <= MAX_GROWTH
        ok &= grew_ok
        print(
            f"soak {phase}: {scaled}; RSS {row['rss_after_warmup_kb'] / 1024:.1f} → {row['rss_end_kb'] / 1024:.1f} MiB "
            f"after warm-up ({row['rss_growth']:+.1%}, limit +{MAX_GROWTH:.0%}: {'ok' if grew_ok else 'TOO MUCH'}); "
            f"p50 {row['p50_ms']:.2f} ms, p99 {row['p99_ms']:.2f} ms"
        )
    if report["served"]["failures"]:
        print(f"soak served: calls failed: {report['served']['failures']}")
        ok = False
    if report["rollouts"]["distinct_digests"] != 1:
        print(f"soak rollouts: {report['rollouts']['distinct_digests']} distinct digests for one episode")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
