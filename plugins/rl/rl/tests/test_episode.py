"""The episode API on the support-refund task: resets, trajectories and scores equal to `agentenv run`'s, forks."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_rl.episode import Episode, make
from agentenv_rl.policy import agent_of_kind, play
from agentenv_rl.split import EpisodeError
from agentenv_runtime import TaskError
from agentenv_testing.installs import CliResult

REFUND = {"order_id": "ORD-5001", "amount": 89.99, "reason": "boots arrived damaged"}


@pytest.fixture(scope="module")
def episode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Episode]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("records"))  # the template's run stores live here
        made = make("support-refund")
        yield made
        made.close()


def solver(episode: Episode, name: str) -> Any:
    policy = episode.template.bundle_dir / "agents" / f"{name}.toml"  # type: ignore[operator]
    return agent_of_kind(episode.template.host, "scripted", {"policy": str(policy), "seed": episode.seed})


def run_json(agentenv_cli: Callable[..., CliResult], *args: str) -> dict[str, Any]:
    result = agentenv_cli("run", "support-refund", "--json", *args)
    summary: dict[str, Any] = json.loads(result.stdout)["tasks"][0]
    return summary


def refunded(episode: Episode) -> int:
    return int(episode.world.query("helpdesk", "SELECT COUNT(*) AS n FROM refunds")[0]["n"])


def test_reset_returns_the_same_state_digest_every_time(episode: Episode) -> None:
    episode.reset()
    start = episode.state()["state_digest"]
    before = refunded(episode)
    for _ in range(3):
        episode.reset()
        assert episode.state()["state_digest"] == start
        assert refunded(episode) == before
        result = episode.step({"tool": "issue_refund", "arguments": REFUND})
        assert result.observation["ok"], result.observation
        assert episode.state()["state_digest"] != start
        assert refunded(episode) == before + 1
    episode.reset()
    assert episode.state()["state_digest"] == start and episode.state()["step_count"] == 0


@pytest.mark.parametrize("policy", ["solver", "wrong_solver"])
def test_same_seed_gives_the_trajectory_digest_and_score_of_agentenv_run(
    episode: Episode, agentenv_cli: Callable[..., CliResult], policy: str
) -> None:
    ran = run_json(agentenv_cli, *([] if policy == "solver" else ["--agent", policy]))
    result = asyncio.run(play(episode, solver(episode, policy)))
    assert result.terminated and not result.truncated
    assert result.info["trajectory_digest"] == ran["trajectory_digest"]
    assert result.reward == pytest.approx(ran["score"])
    assert result.info["score"] == pytest.approx(ran["score"])
    assert (ran["score"] == 1.0) == (policy == "solver")


def test_the_reward_is_the_verifiers_score_for_hand_played_actions(episode: Episode) -> None:
    observation, _ = episode.reset()
    assert observation["type"] == "prompt" and "TCK-9001" in observation["prompt"]
    assert "issue_refund" in {t["name"] for t in observation["tools"]}
    steps = [
        {"tool": "issue_refund", "arguments": REFUND},
        {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99 for the boots."}},
    ]
    for action in steps:
        obs, reward, terminated, truncated, _ = episode.step(action)
        assert obs["ok"] and reward == 0.0 and not terminated and not truncated
    final = episode.step({"answer": "Refunded and closed."})
    rubric = final.info["verifiers"]["grade"]
    by_name = {row["criterion"]: row for row in rubric["rows"]}
    assert by_name["refund_amount"]["passed"] and by_name["ticket_closed"]["passed"]
    assert not by_name["customer_told"]["passed"]  # no email was sent
    assert final.reward == pytest.approx(rubric["score"]) and 0 < final.reward < 1
    with pytest.raises(EpisodeError, match="call reset"):
        episode.step({"answer": "again"})


def test_forks_diverge_independently(episode: Episode) -> None:
    episode.reset()
    episode.step({"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}})
    base = episode.state()["state_digest"]
    left, right = episode.fork(), episode.fork()
    assert left.state()["step_count"] == right.state()["step_count"] == 1
    assert left.step({"tool": "issue_refund", "arguments": REFUND}).observation["ok"]
    closing = {"ticket_id": "TCK-9001", "resolution": "No refund due."}
    assert right.step({"tool": "close_ticket", "arguments": closing}).observation["ok"]
    digests = {left.state()["state_digest"], right.state()["state_digest"], episode.state()["state_digest"]}
    assert len(digests) == 3 and episode.state()["state_digest"] == base
    assert refunded(left) == refunded(episode) + 1 and refunded(right) == refunded(episode)
    left_final = left.step({"answer": "refunded"})
    right_final = right.step({"answer": "closed"})
    assert left_final.info["score"] != right_final.info["score"]
    assert not episode.done, "finishing a fork leaves its parent running"
    left.reset()
    assert left.state()["state_digest"] == episode.template.start(episode.seed).digest


def test_bad_actions_are_refused_and_bad_arguments_change_nothing(episode: Episode) -> None:
    episode.reset()
    start = episode.state()["state_digest"]
    with pytest.raises(EpisodeError, match="exactly one of `tool`"):
        episode.step({"tool": "get_ticket", "answer": "both"})
    with pytest.raises(EpisodeError, match="bad action"):
        episode.step({"tool": "get_ticket", "args": {}})
    result = episode.step({"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": "lots"}})
    assert not result.observation["ok"] and result.observation["error"]["code"] == "invalid_arguments"
    assert episode.state()["state_digest"] == start


def test_an_episode_is_truncated_at_max_steps_with_the_final_reward() -> None:
    short = make("support-refund", max_steps=2)
    try:
        short.reset()
        assert not short.step({"tool": "issue_refund", "arguments": REFUND}).truncated
        last = short.step({"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}})
        assert last.truncated and not last.terminated
        assert last.reward == pytest.approx(last.info["score"]) and last.reward > 0  # the refund already counts
    finally:
        short.close()


def test_shaping_rewards_sum_to_the_final_score() -> None:
    shaped = make("support-refund", shaping=True)
    try:
        shaped.reset()
        rewards = [shaped.step({"tool": "issue_refund", "arguments": REFUND}).reward]
        assert rewards[0] > 0
        final = shaped.step({"answer": "Refunded 89.99."})
        rewards.append(final.reward)
        assert sum(rewards) == pytest.approx(final.info["score"])
    finally:
        shaped.close()


def test_a_task_without_an_agent_is_refused_with_the_reason(tmp_path: Any) -> None:
    task = tmp_path / "no-agent.toml"
    task.write_text('name = "no-agent"\n[[steps]]\nid = "desk"\ntype = "deploy_env"\nenvs = ["helpdesk"]\n')
    with pytest.raises(EpisodeError, match="exactly one deploy_agent and one prompt_agent"):
        make(str(task))


def test_make_refuses_what_agentenv_run_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """make() prepares a task as a run does (pins, preflight, the install checks): a task file in a bundle's
    `tasks/` is that bundle's, and a mistake is the run's own TaskError, raised before any setup starts."""
    import agentenv_support_desk

    monkeypatch.chdir(tmp_path)
    bundle = tmp_path / "refund"
    shutil.copytree(Path(agentenv_support_desk.__file__).parent / "bundles" / "support-refund", bundle)
    task = bundle / "tasks" / "resolve-refund.toml"
    fine = make(str(task))  # agents/solver.toml is found in the bundle, not in tasks/
    assert fine.template.bundle_dir == bundle.resolve()
    fine.close()
    task.write_text(task.read_text().replace('role = "billing_lead"', 'role = "billing_led"'))
    with pytest.raises(TaskError, match=r"step 'agent' \(deploy_agent\): field `role`: world .* no role 'billing_led'"):
        make(str(task))


def test_an_agent_truncated_mid_turn_gets_the_graded_result() -> None:
    short = make("support-refund", max_steps=2)
    try:
        result = asyncio.run(play(short, solver(short, "solver")))
        assert result.truncated and not result.terminated and short.done
        assert result.info["score"] is not None and result.reward == pytest.approx(result.info["score"])
    finally:
        short.close()


def test_astep_grades_a_truncation_and_shaping_on_the_callers_loop() -> None:
    shaped = make("support-refund", max_steps=2, shaping=True)

    async def scenario() -> list[Any]:
        shaped.reset()
        first = await shaped.astep({"tool": "issue_refund", "arguments": REFUND})
        last = await shaped.astep({"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}})
        return [first, last]

    try:
        first, last = asyncio.run(scenario())
        assert first.reward > 0 and last.truncated
        assert first.reward + last.reward == pytest.approx(last.info["score"])
    finally:
        shaped.close()


SOLVED_ACTIONS = [
    {"tool": "issue_refund", "arguments": REFUND},
    {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}},
    {"tool": "send_email", "arguments": {"to": ["dana.kim@example.com"], "subject": "Hi", "body": "Refunded 89.99."}},
    {"answer": "Refunded 89.99, closed TCK-9001, emailed Dana."},
]


def test_replayed_episodes_prepare_no_sql_again() -> None:
    """A reset episode's calls and grading reuse the statements SQLite prepared the first time. Preparing again
    (a LIKE pattern bound as a parameter, an authorizer installed per grading query) cost a third of an episode.
    SQLite asks each connection's authorizer whenever it prepares a statement, so its calls count preparations."""
    import sqlite3

    prepared: list[int] = []
    made = make("support-refund")
    for env in made.world.envs.values():  # counts from now on (installing it expires what was prepared)
        env.db.set_authorizer(lambda action, *_: prepared.append(action) or sqlite3.SQLITE_OK)
    try:
        for round_ in range(3):
            prepared.clear()
            made.reset()
            for action in SOLVED_ACTIONS:
                result = made.step(action)
            assert result.reward == 1.0
            if round_ == 0:
                assert prepared  # the first episode prepares what it runs
        assert prepared == []
        for env in made.world.envs.values():  # the counters are still in place: a new statement is counted
            env.db.execute("SELECT 1 AS fresh").fetchall()
            assert prepared
            prepared.clear()
    finally:
        made.close()


def test_each_reset_names_its_episode_to_the_tools(episode: Episode) -> None:
    """Tools that take a `ToolContext` see the episode they act in: a new id at each reset."""
    _, first = episode.reset()
    assert episode.world.episode == first["episode_id"]
    _, second = episode.reset()
    assert episode.world.episode == second["episode_id"] != first["episode_id"]
