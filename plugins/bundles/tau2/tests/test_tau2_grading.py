"""tau2-retail graded as τ² grades it: the gold replay earns 1.0 everywhere, doing nothing fails every task whose
gold actions change the database, and each component reacts to what it checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentenv_retail.api import RetailEnv
from agentenv_tau2.api import (
    TaskDataError,
    Tau2Task,
    grade,
    parse_tasks,
    replay,
    retail_splits,
    retail_task,
    retail_tasks,
)


@pytest.fixture(scope="module")
def initial() -> RetailEnv:
    env = RetailEnv()
    env.load(RetailEnv.find_artifact("tau2"))
    return env


def gold_episode(initial: RetailEnv, task: Tau2Task) -> tuple[RetailEnv, list[tuple[str, dict[str, object]]]]:
    env = initial.fork()
    calls = [(a.name, dict(a.arguments)) for a in task.gold_actions]
    for name, args in calls:
        env.call(name, args)
    return env, calls


def said(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": text}]


def test_every_task_and_split_loads() -> None:
    tasks = retail_tasks()
    assert len(tasks) == 114 and list(tasks)[:3] == ["0", "1", "2"]
    splits = retail_splits()
    assert (len(splits["train"]), len(splits["test"]), len(splits["base"])) == (74, 40, 114)


def test_gold_actions_score_1_on_all_114_tasks(initial: RetailEnv) -> None:
    failures = {}
    for task_id, task in retail_tasks().items():
        env, calls = gold_episode(initial, task)
        infos = task.evaluation_criteria.communicate_info if task.evaluation_criteria else []
        result = grade(task, env, calls, said("\n".join(infos or [])))
        if result.reward != 1.0:
            failures[task_id] = result.to_dict()
    assert failures == {}


def test_doing_nothing_scores_0_wherever_the_gold_replay_changes_the_database(initial: RetailEnv) -> None:
    changed = 0
    for task in retail_tasks().values():
        if replay(initial, task).state_digest() == initial.state_digest():
            continue
        changed += 1
        result = grade(task, initial.fork(), [], said("Sorry."))
        assert result.reward == 0.0 and result.components["DB"] == 0.0, task.id
    assert changed == 103  # 104 tasks have write actions; task 105's only write is refused in τ² too


def test_a_task_with_nl_assertions_reports_them_not_graded_without_a_judge(initial: RetailEnv) -> None:
    task = next(t for t in retail_tasks().values() if t.evaluation_criteria and t.evaluation_criteria.nl_assertions)
    env, calls = gold_episode(initial, task)
    result = grade(task, env, calls, said(""))
    assert result.components["NL_ASSERTION"] is None and result.not_graded == ["NL_ASSERTION"]
    judged = grade(task, env, calls, said(""), verdicts=[True, False])
    assert judged.components["NL_ASSERTION"] == 0.0 and judged.reward == 0.0


def test_action_and_communicate_components_follow_tau2s_matching(initial: RetailEnv) -> None:
    task = retail_task("0").model_copy(deep=True)
    assert task.evaluation_criteria is not None
    task.evaluation_criteria.reward_basis = ["DB", "ACTION", "COMMUNICATE"]
    task.evaluation_criteria.communicate_info = ["1,234.5"]
    env, calls = gold_episode(initial, task)
    assert grade(task, env, calls, said("That is 1234.5 in total")).reward == 0.0  # τ² drops commas from the message
    task.evaluation_criteria.communicate_info = ["1234.5"]
    assert grade(task, env, calls, said("That is 1,234.5 in total")).reward == 1.0
    assert grade(task, env, calls[1:], said("1234.5")).components["ACTION"] == 0.0


def test_malformed_tasks_are_refused_with_file_task_and_field() -> None:
    good = json.loads(json.dumps([retail_task("0").model_dump()]))
    bad = json.loads(json.dumps(good))
    del bad[0]["user_scenario"]["instructions"]["reason_for_call"]
    with pytest.raises(TaskDataError, match=r"x.json: task '0': field `user_scenario.instructions.reason_for_call`"):
        parse_tasks(bad, "x.json")
    bad = json.loads(json.dumps(good))
    bad[0]["evaluation_criteria"]["reward_basis"] = ["DB", "VIBES"]
    with pytest.raises(TaskDataError, match="reward_basis`: unknown 'VIBES'"):
        parse_tasks(bad, "x.json")
    with pytest.raises(TaskDataError, match="no τ² retail task '999'"):
        retail_task("999")


def test_agentenv_run_one_task_with_the_gold_agent() -> None:
    agentenv = Path(sys.executable).with_name("agentenv")
    done = subprocess.run(
        [str(agentenv), "run", "tau2-retail", "--task", "0", "--agent", "tau2-gold", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [(t["name"], t["score"]) for t in summary["tasks"]] == [("0", 1.0)]


def test_a_task_whose_nl_assertions_no_judge_graded_never_passes() -> None:
    """τ² task 2 is graded on DB and NL_ASSERTION: the gold replay gets DB right, but with no judge model the
    product of the graded components (1.0) must not make the task pass."""
    done = run_cli("--task", "2", "--agent", "tau2-gold", "--json")
    assert done.returncode == 1, done.stderr
    (task,) = json.loads(done.stdout)["tasks"]
    assert (task["status"], task["graded"], task["passed"], task["score"]) == ("succeeded", False, False, None)
    text = run_cli("--task", "2", "--agent", "tau2-gold")
    assert text.returncode == 1 and "not graded" in text.stdout


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    agentenv = Path(sys.executable).with_name("agentenv")
    return subprocess.run(
        [str(agentenv), "run", "tau2-retail", *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_a_split_runs_its_tasks_and_k_rollouts_report_pass_hat_k() -> None:
    done = run_cli("--split", "test", "-k", "2", "--agent", "tau2-gold", "--json")
    assert done.returncode == 1, done.stderr  # the not-graded tasks (below) are not passes
    summary = json.loads(done.stdout)
    assert sorted({t["name"] for t in summary["tasks"]}) == sorted(retail_splits()["test"])
    # Without a judge the tasks with NL assertions are not graded, which never counts as passed.
    judged = {t.id for t in retail_tasks().values() if t.evaluation_criteria and t.evaluation_criteria.nl_assertions}
    not_graded = {t["name"] for t in summary["tasks"] if t["graded"] is False}
    assert not_graded == judged & set(retail_splits()["test"]) and not_graded
    assert all(t["passed"] == (t["name"] not in not_graded) for t in summary["tasks"])
    share = 1 - len(not_graded) / len(retail_splits()["test"])
    assert summary["pass_hat_k"] == pytest.approx({"1": share, "2": share})
    refused = run_cli("--split", "validation")
    assert refused.returncode == 2 and "has no split 'validation' (splits: base, test, train)" in refused.stderr


def test_gold_replays_leave_the_kept_initial_data_untouched(initial: RetailEnv) -> None:
    """The cold grade forks one kept initial env per data set; a replay's writes must never reach it."""
    from agentenv_tau2.grading import _initial_world

    start = initial.fork()
    start.reset()
    before = start.state_digest()
    task = retail_task("0")
    first, second = replay(initial, task), replay(initial, task)
    assert first.state_digest() == second.state_digest() != before
    assert _initial_world(initial).state_digest() == before


def test_a_conversation_cut_off_by_its_turn_limit_scores_zero_as_in_tau2(tmp_path: Path) -> None:
    """τ²'s evaluate_simulation scores 0 any simulation that did not end by a user or agent stop (`max_steps`
    here): the gold agent's database is right, but the conversation hit `max_turns` before the customer ended it."""
    import shutil

    from agentenv_tau2 import plugin

    bundle = tmp_path / "tau2-retail"
    shutil.copytree(Path(plugin.__file__).parent / "bundles" / "tau2-retail", bundle)
    agentenv = Path(sys.executable).with_name("agentenv")

    task = bundle / "tasks" / "0.toml"
    shipped = task.read_text()
    assert "max_turns = 100" in shipped

    def score(max_turns: int) -> float:
        task.write_text(shipped.replace("max_turns = 100", f"max_turns = {max_turns}"))
        done = subprocess.run(
            [str(agentenv), "run", str(bundle), "--task", "0", "--agent", "tau2-gold", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
        )
        (result,) = json.loads(done.stdout)["tasks"]
        return float(result["score"])

    assert score(100) == 1.0
    assert score(1) == 0.0


def test_the_tenth_failed_tool_call_ends_the_episode_at_zero_as_in_tau2() -> None:
    """τ²'s orchestrator ends a simulation at its tenth tool error (TOO_MANY_ERRORS), which is then scored 0;
    nine errors do not change the grade of an otherwise right episode."""
    from agentenv_rl.api import make

    def reward(errors: int) -> float:
        episode = make("tau2-retail:0")
        episode.reset()
        for _ in range(errors):
            episode.step({"tool": "get_order_details", "arguments": {"order_id": "#W0000000"}})
        for name, args in ((a.name, dict(a.arguments)) for a in retail_task("0").gold_actions):
            episode.step({"tool": name, "arguments": args})
        return float(episode.step({"answer": "done"}).reward)

    assert reward(9) == 1.0
    assert reward(10) == 0.0
