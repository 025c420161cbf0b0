"""RL benchmarks (the training-environments issue), in one script, on this machine.

Run: .venv/bin/python bench/rl_bench.py [--only state,episode,openenv,ray]

- state (globex world: slack+email+helpdesk, ~14 MB): checkpoint (in-memory snapshot) ≤ 5 ms, 16 forks kept
  alive ≤ 20 ms in total, reset ≤ 1 ms, `state_digest()` ≤ 5 ms. Baselines measured here: the snapshot's bytes
  form, forks that copy every app's database (what a fork cost before copy-on-write), a reset from the bytes form
  and hashing the snapshot bytes.

Every number is measured in this process (the Ray and OpenEnv parts start their own servers and processes);
ratios compare against a baseline run right here. Medians of repeated batches.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from agentenv_runtime.world.build import build_world
from agentenv_runtime.world.world import World

SECTIONS = ("state", "episode", "openenv", "ray")


def median_seconds(
    fn: Callable[[], object], repeat: int = 15, number: int = 5, setup: Callable[[], object] | None = None
) -> float:
    """Median seconds per call over `repeat` batches of `number` calls (`setup` runs untimed before each call)."""
    samples = []
    for _ in range(repeat):
        total = 0.0
        for _ in range(number):
            if setup is not None:
                setup()
            start = time.perf_counter()
            fn()
            total += time.perf_counter() - start
        samples.append(total / number)
    return statistics.median(samples)


def line(label: str, seconds: float, target_ms: float | None = None, baseline: float | None = None) -> None:
    text = f"  {label}: {seconds * 1000:.3f} ms"
    if target_ms is not None:
        text += f" (target ≤ {target_ms:g} ms: {'met' if seconds * 1000 <= target_ms else 'NOT met'})"
    if baseline is not None:
        text += f"; baseline {baseline * 1000:.2f} ms, {baseline / seconds:.1f}x"
    print(text)


def globex() -> World:
    return build_world(
        "slack,email,helpdesk", artifacts=["globex"], settings={"email": {"address": "support@globex.example"}}
    )


def one_write(world: World) -> None:
    """A typical rollout step: one helpdesk write (the other two apps stay untouched)."""
    outcome = world.call("add_ticket_comment", {"ticket_id": "TCK-90001", "body": "looking into it", "public": False})
    assert outcome.ok, outcome.error


def bench_state() -> None:
    world = globex()
    size = sum(len(env.snapshot()) for env in world.envs.values()) / 1e6
    started = time.perf_counter()
    world.state_digest()
    install = time.perf_counter() - started
    print(f"globex world, {size:.1f} MB of state; the first state_digest() installs the digest: {install * 1e3:.0f} ms")

    point = world.checkpoint()
    blob = world.snapshot()

    def dirty() -> None:
        one_write(world)

    line(
        "checkpoint after a rollout step (snapshot in memory; serializes the changed app)",
        median_seconds(world.checkpoint, setup=dirty),
        5,
        median_seconds(world.snapshot, setup=dirty),
    )
    line("checkpoint of an unchanged world", median_seconds(world.checkpoint))
    line("snapshot to bytes (stored form, the baseline above)", median_seconds(world.snapshot))
    world.restore_checkpoint(point)

    def eager_forks() -> None:
        for fork in [world.fork() for _ in range(16)]:
            for env in fork.envs.values():
                env.db  # noqa: B018 - materialize every app's database, as forks did before copy-on-write

    forks: list[World] = []
    keep = median_seconds(lambda: forks.extend(world.fork() for _ in range(16)), repeat=7, number=3, setup=forks.clear)
    line("16 forks kept alive", keep, 20, median_seconds(eager_forks, repeat=5, number=1))
    line(
        "16 forks, then one helpdesk write in each (copy on write pays for helpdesk only)",
        median_seconds(lambda: [one_write(f) for f in [world.fork() for _ in range(16)]], repeat=5, number=1),
    )
    line(
        "reset after a rollout step (restore the checkpoint)",
        median_seconds(lambda: world.restore_checkpoint(point), setup=dirty),
        1,
        median_seconds(lambda: world.restore(blob), setup=dirty),
    )
    line("reset of an untouched world", median_seconds(lambda: world.restore_checkpoint(point)))
    line(
        "state_digest() after a rollout step",
        median_seconds(world.state_digest, setup=dirty),
        5,
        median_seconds(lambda: hashlib.sha256(world.snapshot()).hexdigest(), setup=dirty),
    )
    world.restore_checkpoint(point)
    plain, digested = build_world("helpdesk", artifacts=["globex"]), build_world("helpdesk", artifacts=["globex"])
    digested.state_digest()
    line(
        "a helpdesk write with the digest's triggers installed",
        median_seconds(lambda: one_write(digested), number=50),
        None,
        median_seconds(lambda: one_write(plain), number=50),
    )


def main(argv: list[str] | None = None) -> None:
    parse = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parse.add_argument("--only", default=",".join(SECTIONS), help=f"Comma-separated sections ({', '.join(SECTIONS)}).")
    chosen = parse.parse_args(argv).only.split(",")
    runs: dict[str, Callable[[], Any]] = {"state": bench_state}
    for name in chosen:
        if name in runs:
            print(f"== {name}")
            runs[name]()


if __name__ == "__main__":
    main()
