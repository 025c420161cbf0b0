"""Harness benchmarks (issue 25): the `claude-code` and `codex` kinds in the process and the Docker sandbox,
beside the `llm` kind.

For each kind and sandbox, against the stand-in model and the support-desk world served on loopback:
1. first request: seconds from `respond()` (what `prompt_agent` calls) to the stand-in receiving the first
   model request; and the same for the bare binary started by hand with the very argv and environment the
   kind builds (process: a plain subprocess; Docker: a plain `docker run` of the same image, mounts and
   network through the docker SDK), with the world already served and the image already built. Kind and bare
   runs alternate, and "kind adds" is the median of the paired differences, so a load spike from the other
   work on this shared machine hits both sides of a pair. Since the binary's own start varies by seconds
   under load, the kind's own work is also timed directly: from `respond()` to the moment it hands the
   argv to the sandbox to start ("before launch");
2. per-turn overhead: the mean gap between consecutive model requests of a run of TURNS tool-call turns
   (tool call through MCP + the harness's own work + the stand-in's reply), minus the stand-in's own
   latency for one request, measured directly in this run;
3. memory: the peak resident memory of the harness while it runs, summed over its processes (sampled from
   /proc every 20 ms; container processes are visible there too; the bare runs are sampled the same way, so
   the sampling costs both sides alike). For `llm`: this process's own peak (it runs in process).

Run: .venv/bin/python bench/harness_bench.py [--repeat 9] [--turns 5] [--sandbox process,docker]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import resource
import statistics
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from agentenv_agents.llm import LlmAgent
from agentenv_claude_code.agent import ClaudeCodeAgent
from agentenv_codex.agent import CodexAgent
from agentenv_harness.api import McpEndpoint, PromptOptions
from agentenv_harness.testkit import support_world
from agentenv_model_standin.api import StandInModel

TICKET = {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]}
HARNESSES = ("claude-code", "codex")


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


def make(kind: str, model: StandInModel, sandbox: str) -> Any:
    if kind == "llm":
        return LlmAgent({"base_url": model.openai_url, "model": "stand-in", "max_turns": 50})
    cls = ClaudeCodeAgent if kind == "claude-code" else CodexAgent
    url = model.url if kind == "claude-code" else model.openai_url
    return cls({"base_url": url, "timeout": 300, "max_turns": 50, "sandbox": sandbox})


class PeakMemory:
    """Samples the summed resident memory of the processes whose HOME is in `folder` (one agent's harness)."""

    def __init__(self, folder: Path) -> None:
        self.home = f"HOME={folder / 'home'}".encode()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            total = 0
            for entry in Path("/proc").glob("[0-9]*"):
                try:
                    if self.home not in (entry / "environ").read_bytes().split(b"\0"):
                        continue
                    for line in (entry / "status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
                except OSError:
                    continue
            self.peak = max(self.peak, total)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def one_run(kind: str, sandbox: str, model: StandInModel, turns: int) -> dict[str, float]:
    world = support_world()
    model.use([TICKET] * turns + [{"text": "done"}])
    before = len(model.requests)
    agent = make(kind, model, sandbox)
    tools = world.tool_access("billing_lead")
    peak = 0
    launched: list[float] = []
    try:
        if kind != "llm":
            agent.server.endpoint(tools)  # the world is served once per agent; its start is not a turn cost
            agent.place.prepare()  # the image and network exist before a run (built once per machine)
            run = agent.place.run

            async def timed(*args: Any, **kwargs: Any) -> Any:
                launched.append(time.time())
                return await run(*args, **kwargs)

            agent.place.run = timed
        start = time.time()
        if kind == "llm":
            asyncio.run(agent.respond("Look at ticket TCK-9001.", tools))
        else:
            with PeakMemory(agent.workdir) as memory:
                asyncio.run(agent.respond("Look at ticket TCK-9001.", tools))
            peak = memory.peak
    finally:
        close = getattr(agent, "close", None)
        if close:
            close()
    received = [r.received_at for r in model.requests[before:] if r.api]
    gaps = [b - a for a, b in itertools.pairwise(received)]
    before_launch = launched[0] - start if launched else 0.0
    return {"first": received[0] - start, "gap": statistics.mean(gaps), "rss": peak, "launch": before_launch}


def bare_first_request(kind: str, sandbox: str, model: StandInModel) -> float:
    """The kind's own argv and environment, launched by hand: the binary's own time to its first request."""
    world = support_world()
    model.use([{"text": "done"}])
    before = len(model.requests)
    agent = make(kind, model, sandbox)
    try:
        served = agent.server.endpoint(world.tool_access("billing_lead"))
        agent.place.prepare()
        endpoint = McpEndpoint(agent.place.url(served.url), served.headers, served.role)
        launch = agent.launch("Look at ticket TCK-9001.", endpoint, PromptOptions())
        with PeakMemory(agent.workdir):  # sampled as in the kind's runs, so both sides pay for the sampling
            if sandbox == "process":
                start = time.time()
                subprocess.run(launch.argv, env=launch.env, cwd=agent.project(), stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=300, check=False)  # fmt: skip
            else:
                place = agent.place
                client = place.client
                start = time.time()
                container = client.containers.run(
                    place.image, launch.argv, detach=True, init=True, environment=launch.env,
                    working_dir=str(agent.project()), network=place.network.name, extra_hosts=place.hosts or None,
                    volumes={str(agent.workdir): {"bind": str(agent.workdir), "mode": "rw"}},
                    labels=place._labels(f"agentenv-bench-{place.agent_id}"),
                )  # fmt: skip
                try:
                    container.wait(timeout=300)
                finally:
                    container.remove(force=True)
    finally:
        agent.close()
    return next(r.received_at for r in model.requests[before:] if r.api) - start


def docker_problem() -> str | None:
    try:
        from agentenv_docker.api import engine

        engine().close()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--sandbox", default="process,docker")
    args = parser.parse_args()
    sandboxes = [s for s in args.sandbox.split(",") if s]
    if "docker" in sandboxes and (why := docker_problem()):
        print(f"Docker rows skipped: the engine does not answer ({why})")
        sandboxes.remove("docker")
    with StandInModel([{"text": "ok"}]) as model:
        floor = stand_in_latency(model)
        print(f"stand-in latency (one request, median): {floor * 1000:.1f} ms; {args.repeat} runs per row, medians")
        print(f"{'kind':<12} {'sandbox':<8} {'first request s':>16} {'bare binary s':>14} {'kind adds s':>12} "
              f"{'before launch ms':>17} {'per-turn overhead ms':>21} {'peak RSS MB':>12}")  # fmt: skip
        runs = [one_run("llm", "process", model, args.turns) for _ in range(args.repeat)]
        base_first = statistics.median(r["first"] for r in runs)
        base_overhead = max(statistics.median(r["gap"] for r in runs) - floor, 1e-6)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{'llm':<12} {'-':<8} {base_first:16.3f} {'-':>14} {'-':>12} {'-':>17} "
              f"{base_overhead * 1000:21.1f} {rss:12.0f}  (this process)")  # fmt: skip
        for sandbox, kind in itertools.product(sandboxes, HARNESSES):
            one_run(kind, sandbox, model, 1)  # warm-up: page cache, image, first container on the engine
            pairs = []
            for _ in range(args.repeat):  # alternate, so both sides of a pair see the same load
                pairs.append((one_run(kind, sandbox, model, args.turns), bare_first_request(kind, sandbox, model)))
            first = statistics.median(r["first"] for r, _ in pairs)
            bare = statistics.median(b for _, b in pairs)
            adds = statistics.median(r["first"] - b for r, b in pairs)
            overhead = statistics.median(r["gap"] for r, _ in pairs) - floor
            peak = statistics.median(r["rss"] for r, _ in pairs) / 1024 / 1024
            launch = statistics.median(r["launch"] for r, _ in pairs)
            print(f"{kind:<12} {sandbox:<8} {first:16.3f} {bare:14.3f} {adds:12.3f} {launch * 1000:17.1f} "
                  f"{overhead * 1000:21.1f} {peak:12.0f}")  # fmt: skip
            spread = sorted(r["first"] - b for r, b in pairs)
            print(f"{'':<21} kind adds, all pairs (s): {' '.join(f'{d:.3f}' for d in spread)}; vs llm: first "
                  f"request x{first / base_first:.1f}, per-turn overhead x{overhead / base_overhead:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
