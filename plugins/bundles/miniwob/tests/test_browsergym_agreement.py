"""Our reward equals the reward BrowserGym's own MiniWoB environment reports, for the same seeds and actions.

For every task with a scripted solution, the solution and the deliberate mistake are played through the RL API
(`make("miniwob:<task>", seed)`), then the same calls are played in BrowserGym's environment (browsergym-core
and browsergym-miniwob 0.14.3 from PyPI, in their own venv made by .ci/setup.d/55-browsergym-miniwob.sh, on the
same Debian Chromium and the same pages): its `reset(seed)` must give the same instruction and the same page
(every snapshot and element box the episode read, taken again on BrowserGym's page), the same actions must fail
(none), the page must end with the same raw reward and done flag, and BrowserGym's reward after the last action
must equal ours. Skipped, saying so, when that venv is missing. More seeds:
AGENTENV_MINIWOB_AGREEMENT_SEEDS=0,1,2.

BrowserGym gives each action 500 ms; on a loaded machine an action of theirs can time out where ours did not
fail. Such a case is played again from its reset (same seed, same actions), up to twice; every case compared is
one where the same actions failed (or none) on both sides.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from agentenv import get_host
from agentenv_miniwob.api import BROWSERGYM_HOME, SOLUTIONS, browsergym_python, pages_url, run_browsergym
from agentenv_rl.api import agent_of_kind, make, play

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]  # BrowserGym launches a browser per reset
SEEDS = [int(s) for s in os.environ.get("AGENTENV_MINIWOB_AGREEMENT_SEEDS", "17").split(",")]
AGENTS = ("miniwob-solver", "miniwob-wrong")
READS = ("goal", "snapshot", "locate")
ATTEMPTS = 3


def our_episodes() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Every (task, seed, agent) played here: what we saw and scored, and the calls for BrowserGym."""
    host = get_host()
    ours: dict[str, dict[str, Any]] = {}
    cases: list[dict[str, Any]] = []
    for task in sorted(SOLUTIONS):
        for seed in SEEDS:
            episode = make(f"miniwob:{task}", seed=seed)
            try:
                for agent in AGENTS:
                    result = asyncio.run(play(episode, agent_of_kind(host, agent, {})))
                    calls = [e for e in episode.world.trajectory.events if e["kind"] == "tool_call"]
                    case = f"{task}/{seed}/{agent}"
                    page = result.info["verifiers"]["grade"]["miniwob"]
                    ours[case] = {
                        "reward": result.reward,
                        "raw": page["raw_reward"],
                        "done": page["done"],
                        "reads": [read(call) for call in calls if call["tool"] in READS],
                        "failed": [i for i, c in enumerate(c for c in calls if c["tool"] not in READS) if c["error"]],
                    }
                    calls_seen = [{"tool": c["tool"], "arguments": c["args"]} for c in calls]
                    cases.append({"id": case, "task": task, "seed": seed, "calls": calls_seen})
            finally:
                episode.close()
    return ours, cases


def read(call: dict[str, Any]) -> dict[str, Any]:
    """A page read of ours in the shape the driver reports BrowserGym's."""
    result = call["result"]
    if call["tool"] == "goal":
        return {"tool": "goal", "goal": result["goal"], "done": result["done"], "reward": result["reward"]}
    if call["tool"] == "snapshot":
        return {"tool": "snapshot", "tree": result["tree"]}
    return {"tool": "locate", "box": result}


def test_our_rewards_equal_browsergyms(chromium: str) -> None:
    if browsergym_python() is None:
        pytest.skip(f"BrowserGym's venv is missing under {BROWSERGYM_HOME}: run .ci/setup.d/55-browsergym-miniwob.sh")
    ours, cases = our_episodes()
    theirs: dict[str, dict[str, Any]] = {}
    replayed: list[str] = []
    for attempt in range(ATTEMPTS):
        todo = [case for case in cases if case["id"] not in theirs]
        if not todo:
            break
        answer = run_browsergym(todo, pages_url(), chromium)
        assert answer["versions"]["browsergym-miniwob"] == "0.14.3" and answer["versions"]["playwright"] == "1.44.0"
        for result in answer["results"]:
            failed = [i for i, step in enumerate(result["steps"]) if step["error"]]
            if failed == ours[result["id"]]["failed"] or attempt == ATTEMPTS - 1:
                theirs[result["id"]] = result
            else:  # one of their actions failed where ours did not (their 500 ms action timeout): play it again
                replayed.append(f"{result['id']}: {[result['steps'][i]['error'][:80] for i in failed]}")
    disagreements = []
    for case, mine in ours.items():
        bg = theirs[case]
        assert [s["error"] for s in bg["steps"] if s["action"] is None] == [], case  # every action has theirs
        failed = [i for i, step in enumerate(bg["steps"]) if step["error"]]
        if failed != mine["failed"]:
            disagreements.append(
                f"{case}: actions failed: ours {mine['failed']}, BrowserGym's {failed} ({bg['steps']})"
            )
        if mine["reads"] != bg["reads"]:
            disagreements.append(
                f"{case}: the page differs (goal, snapshot or box): ours {mine['reads']}, BrowserGym's {bg['reads']}"
            )
        if (mine["raw"], mine["done"]) != (bg["task_info"].get("RAW_REWARD_GLOBAL"), bg["done"]):
            ours_page = f"raw {mine['raw']} done {mine['done']}"
            disagreements.append(f"{case}: page ours {ours_page}, BrowserGym's {bg['task_info']}")
        if mine["reward"] != bg["reward"]:
            disagreements.append(
                f"{case}: reward ours {mine['reward']} (raw {mine['raw']}), "
                f"BrowserGym's {bg['reward']} ({bg['task_info']})"
            )
    assert not disagreements, "\n".join(disagreements)
    solved = {case.split("/")[0] for case, mine in ours.items() if case.endswith("solver") and mine["reward"] == 1.0}
    assert solved == set(SOLUTIONS)  # and every solution did score 1.0 (the mistakes: see the tasks test)
    print(f"\nBrowserGym agreement: {len(ours)} cases, 0 disagreements; played again: {replayed or 'none'}")
