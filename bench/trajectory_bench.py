"""Trajectory memory over 1,000,000 world calls (issue 16): the trajectory spills old chunks to disk, so a
world's memory stays flat however long it is served, its digest is what it would be with every event in
memory, and storing it at the end streams it instead of building one bytes object.

Run: .venv/bin/python bench/trajectory_bench.py [--calls 1000000] [--baseline-calls 100000]

1. Baseline, in this process: a helpdesk world whose trajectory never spills (every event kept in memory,
   as before issue 16) takes `--baseline-calls` tool calls; its RSS growth per call is extrapolated to
   `--calls`.
2. The real trajectory: a fresh world takes `--calls` tool calls; RSS is sampled every 10,000 calls and its
   growth after a warm-up (the first 10 %) is printed. The digest is checked against the definition (sha256
   over every event's stable JSON line, computed here by reading the events back), and the trajectory is
   stored through the filesystem object store's streaming put, with the RSS rise while storing printed.

Targets: RSS growth after warm-up ≤ 10 % over the calls; digest equal; the ratio printed is the baseline's
extrapolated growth over the spilled trajectory's measured growth. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

from agentenv_runtime.engine.records import ChunkReader
from agentenv_runtime.world.build import build_world
from agentenv_runtime.world.trajectory import Trajectory, trajectory_digest
from agentenv_runtime.world.world import World
from agentenv_store_local.objects import FilesystemObjectStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak import rss_kb

SAMPLE_EVERY = 10_000
WARM_UP = 0.10
MAX_GROWTH = 0.10
CALL = ("get_ticket", {"ticket_id": "TCK-9001"})


def rss_mib() -> float:
    """This process's resident set size now (from /proc, so it can go down as well as up)."""
    return rss_kb() / 1024


def helpdesk_world() -> World:
    return build_world("helpdesk", artifacts=["acme"], roles={"support": {"tools": ["*"]}})


def call_many(world: World, calls: int, progress: str) -> tuple[float, list[float]]:
    """Make `calls` tool calls; returns (seconds, RSS samples every SAMPLE_EVERY calls)."""
    name, args = CALL
    samples = [rss_mib()]
    started = time.perf_counter()
    for i in range(1, calls + 1):
        outcome = world.call(name, args, role="support")
        if not outcome.ok:
            raise SystemExit(f"call {i} failed: {outcome.error}")
        if i % SAMPLE_EVERY == 0:
            samples.append(rss_mib())
            if i % (calls // 10 or 1) == 0:
                print(f"  {progress}: {i:,} calls, RSS {samples[-1]:.1f} MiB", flush=True)
    return time.perf_counter() - started, samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--baseline-calls", type=int, default=100_000)
    options = parser.parse_args()

    print(f"1. baseline: every event kept in memory, {options.baseline_calls:,} calls")
    baseline = helpdesk_world()
    baseline.trajectory = Trajectory(chunk=sys.maxsize // 4)  # never spills
    seconds, samples = call_many(baseline, options.baseline_calls, "in memory")
    baseline_rate = options.baseline_calls / seconds
    per_call_kib = (samples[-1] - samples[0]) * 1024 / options.baseline_calls
    extrapolated = per_call_kib * options.calls / 1024
    print(
        f"  {baseline_rate:,.0f} calls/s, RSS {samples[0]:.1f} → {samples[-1]:.1f} MiB "
        f"({per_call_kib:.2f} KiB per call; {extrapolated:,.0f} MiB over {options.calls:,} calls)"
    )
    del baseline
    gc.collect()

    print(f"2. the spilling trajectory, {options.calls:,} calls")
    world = helpdesk_world()
    seconds, samples = call_many(world, options.calls, "spilled")
    warm = samples[max(1, int(len(samples) * WARM_UP))]
    growth = (samples[-1] - warm) / warm
    grown_mib = max(samples[-1] - warm, 0.01)
    print(
        f"  {options.calls / seconds:,.0f} calls/s; RSS after warm-up {warm:.1f} MiB, at the end "
        f"{samples[-1]:.1f} MiB, peak {max(samples):.1f} MiB: growth {growth * 100:+.1f} % (target ≤ "
        f"{MAX_GROWTH * 100:.0f} %)"
    )
    print(f"  memory growth ratio: kept in memory {extrapolated:,.0f} MiB / spilled {grown_mib:.1f} MiB")
    print(f"  call rate ratio: spilled / kept in memory {options.calls / seconds / baseline_rate:.2f}x")

    events = len(world.trajectory.events)
    started = time.perf_counter()
    digest = world.trajectory.digest()
    digest_ms = (time.perf_counter() - started) * 1000
    expected = trajectory_digest(world.trajectory.events)  # every event read back and hashed again
    print(
        f"  {events:,} events, {world.trajectory.events.spilled:,} spilled; digest() {digest_ms:.1f} ms; "
        f"equals the definition: {digest == expected}"
    )

    with tempfile.TemporaryDirectory(prefix="agentenv-trajectory-bench-") as root:
        store = FilesystemObjectStore({"root": root})
        before = rss_mib()
        started = time.perf_counter()
        store.put_stream("runs/bench/trajectory.jsonl", ChunkReader(world.trajectory.iter_jsonl()))
        stored_s = time.perf_counter() - started
        after = rss_mib()
        size = (Path(root) / "runs" / "bench" / "trajectory.jsonl").stat().st_size
        print(
            f"  stored by streaming: {size / 2**20:,.0f} MiB in {stored_s:.1f} s, RSS {before:.1f} → {after:.1f} "
            f"MiB while storing"
        )

    failed = []
    if growth > MAX_GROWTH:
        failed.append(f"RSS grew {growth * 100:.1f} % after warm-up")
    if digest != expected:
        failed.append("the digest differs from the definition")
    if failed:
        print("FAILED: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
