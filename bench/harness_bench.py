"""Harness benchmarks (issue 25): the `claude-code` and `codex` kinds beside the `llm` kind, process sandbox.

For each kind, against the stand-in model and the support-desk world served on loopback:
1. first request: seconds from `respond()` start to the stand-in receiving the first model request;
   and for the harnesses, the same for the bare binary launched by hand (the very argv and environment
   the kind builds, with the world already served), so the kind's own addition is measured in this run;
2. per-turn overhead: the mean gap between consecutive model requests of a run of TURNS tool-call turns
   (tool call through MCP + the harness's own work + the stand-in's reply), minus the stand-in's own
   latency for one request, measured directly in this run;
3. memory: the maximum RSS of the harness process (RUSAGE_CHILDREN; the llm kind runs in this process).

Run: .venv/bin/python bench/harness_bench.py [--repeat 3] [--turns 5]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import resource
import statistics
import subprocess
import time
import urllib.request
from typing import Any

from agentenv_agents.llm import LlmAgent
from agentenv_claude_code.agent import ClaudeCodeAgent
from agentenv_codex.agent import CodexAgent
from agentenv_harness.api import PromptOptions
from agentenv_harness.testkit import support_world
from agentenv_model_standin.api import StandInModel

TICKET = {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]}


def stand_in_latency(model: StandInModel, repeat: int = 20) -> float:
    """One chat request answered by the stand-in, client included (urllib, keep-alive off): the floor."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
    times = []
    for _ in range(repeat):
        model.use([{"text": "ok"}])
        request = urllib.request.Request(
            model.openai_url + "/chat/completions", body, {"content-type": "application/json"}
        )
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def make(kind: str, model: StandInModel) -> Any:
    if kind == "llm":
        return LlmAgent({"base_url": model.openai_url, "model": "stand-in", "max_turns": 50})
    cls = ClaudeCodeAgent if kind == "claude-code" else CodexAgent
    url = model.url if kind == "claude-code" else model.openai_url
    return cls({"base_url": url, "timeout": 300, "max_turns": 50})


def one_run(kind: str, model: StandInModel, turns: int) -> dict[str, float]:
    world = support_world()
    model.use([TICKET] * turns + [{"text": "done"}])
    before = len(model.requests)
    agent = make(kind, model)
    tools = world.tool_access("billing_lead")
    try:
        if kind != "llm":
            agent.server.endpoint(tools)  # the world is served once per agent; its start is not a turn cost
        start = time.time()
        asyncio.run(agent.respond("Look at ticket TCK-9001.", tools))
    finally:
        close = getattr(agent, "close", None)
        if close:
            close()
    received = [r.received_at for r in model.requests[before:] if r.api]
    gaps = [b - a for a, b in itertools.pairwise(received)]
    return {"first": received[0] - start, "gap": statistics.mean(gaps)}


def bare_first_request(kind: str, model: StandInModel) -> float:
    """The kind's own argv and environment, launched by hand: the binary's own time to its first request."""
    world = support_world()
    model.use([{"text": "done"}])
    before = len(model.requests)
    agent = make(kind, model)
    try:
        endpoint = agent.server.endpoint(world.tool_access("billing_lead"))
        launch = agent.launch("Look at ticket TCK-9001.", endpoint, PromptOptions())
        start = time.time()
        subprocess.run(launch.argv, env=launch.env, cwd=agent.project(), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=300, check=False)  # fmt: skip
    finally:
        agent.close()
    return next(r.received_at for r in model.requests[before:] if r.api) - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    with StandInModel([{"text": "ok"}]) as model:
        floor = stand_in_latency(model)
        print(f"stand-in latency (one request, median): {floor * 1000:.1f} ms")
        print(f"{'kind':<12} {'first request s':>16} {'bare binary s':>14} {'kind adds s':>12} "
              f"{'per-turn overhead ms':>21} {'max RSS MB':>11}")  # fmt: skip
        baseline: dict[str, float] = {}
        for kind in ("llm", "claude-code", "codex"):
            runs = [one_run(kind, model, args.turns) for _ in range(args.repeat)]
            first = statistics.median(r["first"] for r in runs)
            overhead = statistics.median(r["gap"] for r in runs) - floor
            bare = (
                statistics.median(bare_first_request(kind, model) for _ in range(args.repeat)) if kind != "llm" else 0
            )
            rss = resource.getrusage(resource.RUSAGE_CHILDREN if kind != "llm" else resource.RUSAGE_SELF).ru_maxrss
            baseline.setdefault("first", first)
            baseline.setdefault("overhead", max(overhead, 1e-6))
            adds = f"{first - bare:12.3f}" if kind != "llm" else f"{'-':>12}"
            bare_text = f"{bare:14.3f}" if kind != "llm" else f"{'-':>14}"
            print(f"{kind:<12} {first:16.3f} {bare_text} {adds} {overhead * 1000:21.1f} {rss / 1024:11.0f}")
            if kind != "llm":
                print(f"{'':<12} vs llm: first request x{first / baseline['first']:.1f}, "
                      f"per-turn overhead x{overhead / baseline['overhead']:.1f}")  # fmt: skip
    print("(RUSAGE_CHILDREN is the largest child so far: the codex row is the larger of the two harnesses)")


if __name__ == "__main__":
    main()
