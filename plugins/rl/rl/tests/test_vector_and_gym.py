"""The batched form (in process and across worker processes) and the gymnasium wrapper."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentenv_rl.api import AgentEnvGym, shares, vector

REFUND = {"tool": "issue_refund", "arguments": {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}}
CLOSE = {"tool": "close_ticket", "arguments": {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}}
TELL = {
    "tool": "send_email",
    "arguments": {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99 for the boots."},
}
SOLVED = [REFUND, CLOSE, TELL, {"answer": "Refunded 89.99, closed TCK-9001, emailed Dana."}]


def test_shares_spread_slots_without_empty_workers() -> None:
    assert shares(5, 2) == [3, 2]
    assert shares(1, 4) == [1]
    assert sum(shares(17, 3)) == 17


@pytest.mark.parametrize("workers", [1, 2])
def test_a_batch_steps_slots_independently(workers: int) -> None:
    batch = vector("support-refund", 3, workers=workers)
    try:
        starts = batch.reset()
        assert len(starts) == 3 and all(obs["type"] == "prompt" for obs, _ in starts)
        digests = {state["state_digest"] for state in batch.states()}
        assert len(digests) == 1
        # slot 0 solves the task, slot 1 only refunds, slot 2 waits
        for action in SOLVED[:-1]:
            results = batch.step([action, REFUND if action is REFUND else None, None])
            assert results[0] is not None and results[0].observation["ok"]
            assert results[2] is None
        final = batch.step([SOLVED[-1], {"answer": "refunded"}, None])
        assert final[0] is not None and final[1] is not None
        assert final[0].terminated and final[0].reward == pytest.approx(1.0)
        assert 0 < final[1].reward < 1
        states = batch.states()
        assert states[2]["step_count"] == 0 and states[2]["state_digest"] in digests
        assert len({s["state_digest"] for s in states}) == 3
        batch.reset()
        assert {s["state_digest"] for s in batch.states()} == digests
    finally:
        batch.close()


def test_a_worker_reports_a_bad_action_and_keeps_serving() -> None:
    batch = vector("support-refund", 2, workers=2)
    try:
        batch.reset()
        with pytest.raises(RuntimeError, match="bad action"):
            batch.step([{"bogus": 1}, None])
        result = batch.step([None, REFUND])[1]
        assert result is not None and result.observation["ok"]
    finally:
        batch.close()


def test_the_gymnasium_wrapper_passes_the_env_checker_and_plays_an_episode() -> None:
    from gymnasium.utils.env_checker import check_env

    env = AgentEnvGym("support-refund")
    try:
        check_env(env, skip_render_check=True)
        observation, _ = env.reset(seed=7)
        assert env.observation_space.contains(observation)
        rewards: list[Any] = []
        for action in SOLVED:
            observation, reward, terminated, truncated, info = env.step(json.dumps(action))
            rewards.append(reward)
        assert terminated and not truncated and rewards[-1] == pytest.approx(1.0) and info["passed"]
        assert json.loads(observation) == {"type": "final", "answer": SOLVED[-1]["answer"]}
    finally:
        env.close()
