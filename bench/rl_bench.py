"""RL benchmarks (the training-environments issue), in one script, on this machine.

Run: .venv/bin/python bench/rl_bench.py [--only state,episode,openenv,ray]

- episode (support-refund, the solver's actions as a fixed script): reset + 4 steps + reward, episodes/s in
  one process and with 2 worker processes (target ≥ 1,000/s with 2 workers); baseline: `agentenv run`'s own
  rollouts (`TaskRunner`, scripted agent, one process), measured here too.
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
import os
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


SOLVED = [
    {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged boots"}},
    {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}},
    {
        "tool": "send_email",
        "arguments": {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99."},
    },
    {"answer": "Refunded 89.99, closed TCK-9001, emailed Dana."},
]


def batch_rate(batch: Any, slots: int, rounds: int) -> float:
    """Episodes per second: reset every slot, play the script, check every reward."""
    started = time.perf_counter()
    for _ in range(rounds):
        batch.reset()
        for action in SOLVED:
            results = batch.step([action] * slots)
        assert all(r is not None and r.reward == 1.0 for r in results), results
    return slots * rounds / (time.perf_counter() - started)


def runner_rate(rollouts: int) -> float:
    import asyncio

    from agentenv.config import load_config
    from agentenv.plugins.host import get_host
    from agentenv_rl.split import find_task
    from agentenv_runtime.engine.runner import TaskRunner

    host = get_host()
    task, bundle_dir, bundle = find_task("support-refund", host)
    runner = TaskRunner(host, load_config())

    async def rollouts_() -> None:
        for seed in range(rollouts):
            record = await runner.run(task, seed=seed, bundle=bundle, bundle_dir=bundle_dir)
            assert record["score"] == 1.0

    started = time.perf_counter()
    asyncio.run(rollouts_())
    return rollouts / (time.perf_counter() - started)


def bench_episode() -> None:
    import tempfile

    from agentenv_rl.api import make, vector

    os.chdir(tempfile.mkdtemp(prefix="rl-bench-"))  # run records of the baseline land here
    baseline = runner_rate(200)
    print(f"support-refund: `agentenv run`-style rollouts (TaskRunner, scripted agent): {baseline:,.0f}/s")
    single = make("support-refund")
    started = time.perf_counter()
    for _ in range(500):
        single.reset()
        for action in SOLVED:
            result = single.step(action)
        assert result.reward == 1.0
    one = 500 / (time.perf_counter() - started)
    single.close()
    print(f"  one episode, reset + 4 steps + reward: {one:,.0f} episodes/s ({one / baseline:.1f}x the runner)")
    slots = 32
    local = vector("support-refund", slots)
    batch_rate(local, slots, 2)
    in_process = batch_rate(local, slots, 20)
    local.close()
    print(f"  {slots} forks in one process, stepped in a batch: {in_process:,.0f} episodes/s")
    workers = vector("support-refund", slots, workers=2)
    batch_rate(workers, slots, 2)
    two = batch_rate(workers, slots, 40)
    workers.close()
    verdict = "met" if two >= 1000 else "NOT met"
    print(
        f"  {slots} slots over 2 worker processes: {two:,.0f} episodes/s (target ≥ 1,000/s: {verdict}); "
        f"{two / in_process:.2f}x one process, {two / baseline:.1f}x the runner"
    )


def main(argv: list[str] | None = None) -> None:
    parse = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parse.add_argument("--only", default=",".join(SECTIONS), help=f"Comma-separated sections ({', '.join(SECTIONS)}).")
    chosen = parse.parse_args(argv).only.split(",")
    runs: dict[str, Callable[[], Any]] = {"state": bench_state, "episode": bench_episode}
    for name in chosen:
        if name in runs:
            print(f"== {name}")
            runs[name]()


if __name__ == "__main__":
    main()
