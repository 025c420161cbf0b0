"""A training-loop skeleton over agentenv episodes, with a random policy standing in for the model.

It runs N episodes of support-refund three ways and prints each one's reward:
  1. the episode API in this process (`agentenv_rl.api.make`, forks of one start);
  2. `agentenv openenv serve` over its WebSocket wire format (what OpenEnv-speaking trainers use);
  3. batched episodes on Ray actors (`agentenv_ray.api.RayEpisodes`, a local Ray instance).
A trainer would put its model where `RandomPolicy` is and its update where the rewards are printed.

Run: ./dev python examples/training/train_loop.py [--episodes 8] [--skip openenv,ray]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TASK = "support-refund"
CANDIDATES = [
    {"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}},
    {"tool": "get_order", "arguments": {"order_id": "ORD-5001"}},
    {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged boots"}},
    {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 105.98, "reason": "whole order"}},
    {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}},
    {
        "tool": "send_email",
        "arguments": {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99."},
    },
]


class RandomPolicy:
    """Picks a few of the candidate tool calls at random, then answers."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def episode(self) -> list[dict[str, Any]]:
        calls = self.rng.sample(CANDIDATES, k=self.rng.randint(1, len(CANDIDATES)))
        return [*calls, {"answer": "I handled the ticket."}]


def with_episode_api(episodes: int) -> list[float]:
    from agentenv_rl.api import make

    base = make(TASK)
    rewards = []
    try:
        for index in range(episodes):
            episode = base.fork()
            episode.reset()
            for action in RandomPolicy(index).episode():
                result = episode.step(action)
                if result.terminated or result.truncated:
                    break
            rewards.append(result.reward)
    finally:
        base.close()
    return rewards


def with_openenv_server(episodes: int) -> list[float]:
    import websockets

    agentenv = str(Path(sys.executable).with_name("agentenv"))
    server = subprocess.Popen(
        [agentenv, "openenv", "serve", TASK, "--port", "0"],
        cwd=tempfile.mkdtemp(prefix="agentenv-example-"),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = ""
        while not url:
            line = server.stdout.readline()
            if not line:
                raise RuntimeError("the OpenEnv server did not start")
            found = re.search(r"serving on http://(\S+)", line)
            url = f"ws://{found.group(1)}/ws" if found else ""

        async def play(index: int) -> float:
            async with websockets.connect(url) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {}}))
                await ws.recv()
                for action in RandomPolicy(index).episode():
                    await ws.send(json.dumps({"type": "step", "data": action}))
                    reply = json.loads(await ws.recv())["data"]
                    if reply["done"]:
                        return float(reply["reward"])
            return 0.0

        async def everyone() -> list[float]:
            return list(await asyncio.gather(*(play(index) for index in range(episodes))))

        return asyncio.run(everyone())
    finally:
        server.terminate()
        server.wait()


def with_ray(episodes: int) -> list[float]:
    from agentenv_ray.api import RayEpisodes

    batch = RayEpisodes(TASK, episodes, workers=2)
    try:
        batch.reset()
        plans = [RandomPolicy(index).episode() for index in range(episodes)]
        rewards: list[float | None] = [None] * episodes
        for turn in range(max(len(plan) for plan in plans)):
            actions = [plan[turn] if turn < len(plan) and rewards[i] is None else None for i, plan in enumerate(plans)]
            for slot, result in enumerate(batch.step(actions)):
                if result is not None and (result.terminated or result.truncated):
                    rewards[slot] = result.reward
        return [reward or 0.0 for reward in rewards]
    finally:
        batch.close()


def main() -> None:
    parse = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parse.add_argument("--episodes", type=int, default=8)
    parse.add_argument("--skip", default="", help="Comma-separated: openenv, ray.")
    options = parse.parse_args()
    skip = set(filter(None, options.skip.split(",")))
    ways = {"episode API": with_episode_api, "openenv": with_openenv_server, "ray": with_ray}
    for name, run in ways.items():
        if name in skip:
            continue
        rewards = run(options.episodes)
        mean = sum(rewards) / len(rewards)
        print(f"{name:>12}: rewards {[round(r, 2) for r in rewards]}  mean {mean:.3f}")


if __name__ == "__main__":
    main()
