"""The miniwob bundle against BrowserGym's own MiniWoB environment, per episode, side by side in one run.

Run: .venv/bin/python bench/miniwob_bench.py [--seed 5] [--repeat 3]

For each task with a scripted solution, one episode is its solution played on one seed:
- ours, through the RL API (`make("miniwob:<task>", seed)` once per task, then per episode: `reset()`, the
  solution's calls as steps, the answer graded by `miniwob_reward`); the browser and the page server are warm
  (one Chromium per process, a fresh context per episode), as in any run after its first episode;
- BrowserGym's (in its venv, from .ci/setup.d/55-browsergym-miniwob.sh): `gym.make`, `reset(seed)` and the same
  calls as its actions, timed inside its process (its reset launches a browser, as BrowserGym always does; each
  step waits its `pre_observation_delay` of 0.5 s and extracts an observation).
Medians over tasks of the per-task medians over `--repeat` episodes; every number is measured in this run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from agentenv import get_host
from agentenv_browser.api import find_chromium
from agentenv_miniwob.api import SOLUTIONS, browsergym_python, pages_url, run_browsergym
from agentenv_rl.api import agent_of_kind, make, play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    host, ours, cases = get_host(), {}, []
    for task in sorted(SOLUTIONS):
        episode = make(f"miniwob:{task}", seed=args.seed)
        try:
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = asyncio.run(play(episode, agent_of_kind(host, "miniwob-solver", {})))
                times.append(time.perf_counter() - started)
                assert result.reward == 1.0, (task, result.info)
            ours[task] = statistics.median(times)
            calls = [e for e in episode.world.trajectory.events if e["kind"] == "tool_call"]
            for n in range(args.repeat):
                calls_seen = [{"tool": c["tool"], "arguments": c["args"]} for c in calls]
                cases.append({"id": f"{task}/{n}", "task": task, "seed": args.seed, "calls": calls_seen})
        finally:
            episode.close()
    theirs: dict[str, list[float]] = {}
    if browsergym_python() is not None:
        for result in run_browsergym(cases, pages_url(), find_chromium())["results"]:
            theirs.setdefault(result["id"].split("/")[0], []).append(result["seconds"])
    print(f"{'task':18} {'ours (s)':>9} {'BrowserGym (s)':>15} {'ratio':>6}")
    for task, mine in ours.items():
        bg = statistics.median(theirs[task]) if task in theirs else float("nan")
        print(f"{task:18} {mine:9.3f} {bg:15.3f} {bg / mine:6.1f}")
    mine_all = statistics.median(ours.values())
    if theirs:
        bg_all = statistics.median(statistics.median(v) for v in theirs.values())
        print(f"median per episode: ours {mine_all:.3f} s, BrowserGym {bg_all:.3f} s: {bg_all / mine_all:.1f}x")
    else:
        print(f"median per episode: ours {mine_all:.3f} s (BrowserGym's venv is missing: no comparison)")


if __name__ == "__main__":
    main()
