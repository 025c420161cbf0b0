"""tau2-retail against τ²-bench's own code, side by side in one run, on this machine.

Run: .venv/bin/python bench/tau2_bench.py [--tasks 20] [--repeat 3] [--episodes 400]

- reset + grade, per episode, over the first N tasks that write, each trajectory the task's gold actions:
  τ²'s own (in its venv, from .ci/setup.d/40-tau2-bench.sh): reset = a fresh `get_environment()` on the initial
  database; grade = `EnvironmentEvaluator.calculate_reward` (the trajectory replayed on a fresh environment, the
  gold actions on another, both hashed). Ours, through the RL API (`make("tau2-retail:ID")`): reset = the
  episode's `reset()`; then the same calls as steps (the live counterpart of τ²'s replay) and the final answer,
  which runs the `tau2_grade` verifier. Ours is shown warm (the gold digest kept per task, as every rollout after
  a task's first has it) and cold (the gold replay done again for every episode). Goal: ≥ 90× τ²'s reset + grade.
- graded episodes/s with 16 forks of one episode (`vector`-style copy-on-write forks, one process).

Medians of `--repeat` passes; every number is measured in this run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentenv_retail.api import RetailEnv
from agentenv_rl.api import Episode, make
from agentenv_tau2.api import data_dir, retail_tasks, run_reference, tau2_python
from agentenv_tau2.grading import _GOLD_DIGESTS

SHARED_DB = Path(__file__).resolve().parents[1].parent / "shared" / "tau2-bench" / "retail" / "db.json"


def gold_calls(task_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(a.name, dict(a.arguments)) for a in retail_tasks()[task_id].gold_actions]


def play(episode: Episode, calls: list[tuple[str, dict[str, Any]]]) -> float:
    episode.reset()
    for name, args in calls:
        episode.step({"tool": name, "arguments": args})
    return float(episode.step({"answer": "done"}).reward)


def ours(task_ids: list[str], repeat: int, *, cold: bool) -> float:
    """Seconds per episode (reset + calls + grade), median over `repeat` passes."""
    episodes = {task_id: make(f"tau2-retail:{task_id}") for task_id in task_ids}
    for task_id, episode in episodes.items():  # warm-up: imports, first digests
        assert play(episode, gold_calls(task_id)) == 1.0
    passes = []
    for _ in range(repeat):
        started = time.perf_counter()
        for task_id, episode in episodes.items():
            if cold:
                _GOLD_DIGESTS.clear()
            play(episode, gold_calls(task_id))
        passes.append((time.perf_counter() - started) / len(task_ids))
    for episode in episodes.values():
        episode.close()
    return statistics.median(passes)


def forks(task_id: str, episodes: int) -> float:
    """Graded episodes per second, played round-robin on 16 forks of one episode."""
    base = make(f"tau2-retail:{task_id}")
    slots = [base.fork() for _ in range(16)]
    calls = gold_calls(task_id)
    play(slots[0], calls)
    started = time.perf_counter()
    for index in range(episodes):
        assert play(slots[index % 16], calls) == 1.0
    rate = episodes / (time.perf_counter() - started)
    base.close()
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=400)
    args = parser.parse_args()
    specs = RetailEnv.tool_specs()
    # Tasks whose gold actions write, and that grade offline: with no judge model a task with NL assertions is
    # not graded (no reward), so it is left out rather than timed on a grade that never finishes.
    writing = [
        t.id
        for t in retail_tasks().values()
        if any(not specs[a.name].read_only for a in t.gold_actions)
        and not (t.evaluation_criteria and t.evaluation_criteria.nl_assertions)
    ]
    task_ids = writing[: args.tasks]
    if tau2_python() is None:
        print("τ²-bench is not installed: run .ci/setup.d/40-tau2-bench.sh first", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as root:
        request = {
            "mode": "bench",
            "repeat": args.repeat,
            "cases": [{"task": t, "calls": gold_calls(t)} for t in task_ids],
        }
        theirs = run_reference(request, data_dir(Path(root), SHARED_DB))
    tau2_reset = statistics.median(r["reset_s"] / r["repeat"] for r in theirs)
    tau2_grade = statistics.median(r["grade_s"] / r["repeat"] for r in theirs)
    warm, cold = ours(task_ids, args.repeat, cold=False), ours(task_ids, args.repeat, cold=True)
    rate = forks(task_ids[0], args.episodes)
    tau2_total = tau2_reset + tau2_grade
    rows = {
        "tasks": len(task_ids),
        "tau2_reset_ms": tau2_reset * 1e3,
        "tau2_grade_ms": tau2_grade * 1e3,
        "tau2_reset_plus_grade_ms": tau2_total * 1e3,
        "ours_warm_episode_ms": warm * 1e3,
        "ours_cold_episode_ms": cold * 1e3,
        "speedup_warm": tau2_total / warm,
        "speedup_cold": tau2_total / cold,
        "graded_episodes_per_s_16_forks": rate,
    }
    print(
        f"τ²-bench   reset {tau2_reset * 1e3:8.2f} ms + grade {tau2_grade * 1e3:8.2f} ms = {tau2_total * 1e3:8.2f} ms"
    )
    print(f"ours warm  reset + calls + grade {warm * 1e3:8.3f} ms   ({tau2_total / warm:6.1f}x)")
    print(f"ours cold  reset + calls + grade {cold * 1e3:8.3f} ms   ({tau2_total / cold:6.1f}x)")
    print(f"16 forks   {rate:8.0f} graded episodes/s (task {task_ids[0]})")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
