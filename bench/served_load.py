"""Served-world load: throughput at 32 and 128 concurrent MCP sessions versus a plain official-SDK MCP server,
and `/health` latency while a maximal allowed JSON-RPC batch runs.

Run: .venv/bin/python bench/served_load.py [--calls N] [--rounds R] [--sessions 32,128]

Servers and client are those of `bench/gateway_bench.py` (each server in its own process, `get_ticket` of a
helpdesk world with `acme`, JSON response mode, the official client; alternating rounds). Reported:

- throughput (calls/s) at each session count, gateway and baseline, and the gateway/baseline ratio
  (target ≥ 1.0×: the gateway's bounds and its worker thread must not cost throughput);
- `/health` p50/p99 while another client sends, back to back, batches of `max_batch_control` `tools/call`s
  (the largest batch the limits allow), against `/health` p99 on the same server idle, measured in the same
  run (target: p99 under load within 100 ms).

Compare ratios, not absolute times: they depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from gateway_bench import TICKET, _session_calls, child

TARGET_THROUGHPUT = 1.0
HEALTH_TARGET_MS = 100.0


def concurrent(url: str, calls: int, sessions: int) -> float:
    """Calls per second with `sessions` concurrent MCP sessions, every session connected and warm before the
    clock starts. A session that fails stops the measurement with its error (instead of leaving the others
    waiting for it forever)."""

    async def one(ready: asyncio.Semaphore, go: asyncio.Event, released: list[bool]) -> None:
        try:
            await _session_calls(url, calls // sessions, None, ready, go)
        finally:
            if not released[0]:  # failed before it said it was ready: let the start go on, then fail below
                released[0] = True
                ready.release()

    async def main() -> float:
        ready, go = asyncio.Semaphore(0), asyncio.Event()
        tasks = [asyncio.create_task(one(ready, go, [False])) for _ in range(sessions)]
        for _ in range(sessions):
            await ready.acquire()
        start = time.perf_counter()
        go.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            raise SystemExit(f"{len(failed)} of {sessions} sessions failed on {url}: {failed[0]!r}")
        return (calls // sessions * sessions) / (time.perf_counter() - start)

    return asyncio.run(main())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def health_latencies(url: str, samples: int) -> list[float]:
    import httpx

    timings = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(samples):
            start = time.perf_counter()
            client.get("/health").raise_for_status()
            timings.append((time.perf_counter() - start) * 1000)
            time.sleep(0.005)
    return timings


def health_under_batches(url: str, samples: int) -> dict[str, Any]:
    """`/health` latency idle, then while maximal batches run back to back on another connection."""
    import httpx
    from agentenv_gateway.limits import GatewayLimits

    size = GatewayLimits().max_batch_control  # a token-less world: every caller may send control-size batches
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "get_ticket", "arguments": TICKET}}
        for i in range(size)
    ]
    body = json.dumps(batch).encode()
    idle = health_latencies(url, samples)
    stop = threading.Event()
    sent = [0]
    batch_seconds: list[float] = []

    def flood() -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            while not stop.is_set():
                start = time.perf_counter()
                replies = client.post("/agentenv", content=body, headers={"content-type": "application/json"}).json()
                batch_seconds.append(time.perf_counter() - start)
                assert isinstance(replies, list) and len(replies) == size, str(replies)[:300]
                sent[0] += 1

    threads = [threading.Thread(target=flood) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    loaded = health_latencies(url, samples)
    stop.set()
    for thread in threads:
        thread.join()
    return {
        "batch_size": size,
        "batches_sent": sent[0],
        "batch_seconds_median": statistics.median(batch_seconds) if batch_seconds else None,
        "idle_p50_ms": percentile(idle, 0.5),
        "idle_p99_ms": percentile(idle, 0.99),
        "loaded_p50_ms": percentile(loaded, 0.5),
        "loaded_p99_ms": percentile(loaded, 0.99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2560, help="calls per round and session count (default 2560)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per server (default 3)")
    parser.add_argument("--sessions", default="32,128", help="concurrent session counts (default 32,128)")
    parser.add_argument("--health-samples", type=int, default=300, help="/health requests per phase (default 300)")
    args = parser.parse_args()
    counts = [int(n) for n in args.sessions.split(",")]
    report: dict[str, Any] = {"throughput": {}}
    with child("gateway", True) as gateway_url, child("baseline", True) as baseline_url:
        for sessions in counts:
            rates: dict[str, list[float]] = {"gateway": [], "baseline": []}
            for _ in range(args.rounds):
                for kind, url in (("gateway", gateway_url), ("baseline", baseline_url)):
                    rates[kind].append(concurrent(url, args.calls, sessions))
            gateway, baseline = statistics.median(rates["gateway"]), statistics.median(rates["baseline"])
            report["throughput"][sessions] = {
                "gateway_calls_per_s": gateway,
                "baseline_calls_per_s": baseline,
                "ratio": gateway / baseline,
            }
        report["health"] = health_under_batches(gateway_url, args.health_samples)
    print(json.dumps(report, indent=2))
    for sessions, row in report["throughput"].items():
        verdict = "ok" if row["ratio"] >= TARGET_THROUGHPUT else "under target"
        print(
            f"{sessions} sessions: gateway {row['gateway_calls_per_s']:.0f} calls/s, baseline "
            f"{row['baseline_calls_per_s']:.0f} calls/s → ratio {row['ratio']:.2f}× (target ≥ {TARGET_THROUGHPUT}×, "
            f"{verdict})"
        )
    health = report["health"]
    verdict = "ok" if health["loaded_p99_ms"] <= HEALTH_TARGET_MS else "over target"
    print(
        f"/health p99 while {health['batch_size']}-call batches run: {health['loaded_p99_ms']:.1f} ms "
        f"(idle p99 {health['idle_p99_ms']:.1f} ms, ratio {health['loaded_p99_ms'] / health['idle_p99_ms']:.1f}×; "
        f"target ≤ {HEALTH_TARGET_MS:.0f} ms, {verdict}; {health['batches_sent']} batches sent)"
    )


if __name__ == "__main__":
    main()
