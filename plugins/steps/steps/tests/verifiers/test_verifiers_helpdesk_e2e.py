"""End to end with the real steps: deploy the acme support desk, let the scripted agent handle Dana's
damaged boots, and grade it with env_outcome_verifier + rubrics_verifier + aggregate_verifiers.

Needs agentenv-steps (deploy_env, deploy_agent, prompt_agent) and agentenv-agents (the `scripted`
kind); skipped when they are not installed.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentenv import PluginHost
from agentenv.contracts import kinds
from agentenv_testing.tasks import run_task


@pytest.fixture(autouse=True)
def _needs_real_steps(host: PluginHost) -> None:
    steps = host.registry(kinds.STEPS)
    if not {"deploy_env", "deploy_agent", "prompt_agent"} <= set(steps) or "scripted" not in host.registry(
        kinds.AGENT_KINDS
    ):
        pytest.skip("needs agentenv-steps and agentenv-agents")


def policy(amount: float) -> dict[str, Any]:
    return {
        "turn": [
            {
                "actions": [
                    {"call": "get_ticket", "args": {"ticket_id": "TCK-9001"}, "save": "ticket"},
                    {
                        "call": "issue_refund",
                        "args": {"order_id": "ORD-5001", "amount": amount, "reason": "Boots arrived with a split sole"},
                        "expect": "ok",
                    },
                    {"call": "close_ticket", "args": {"ticket_id": "TCK-9001", "resolution": f"Refunded {amount:.2f}"}},
                    {"say": f"Sorry about the damaged boots, Dana. I refunded {amount:.2f} and closed TCK-9001."},
                ]
            }
        ]
    }


def task(amount: float) -> dict[str, Any]:
    return {
        "name": f"refund-{amount}",
        "steps": [
            {"id": "env", "type": "deploy_env", "envs": ["helpdesk"], "artifacts": ["acme"]},
            {
                "id": "agent",
                "type": "deploy_agent",
                "env": "env",
                "kind": "scripted",
                "settings": {"policy_data": policy(amount)},
            },
            {"id": "ask", "type": "prompt_agent", "agent": "agent", "prompt": "Please handle ticket TCK-9001."},
            {
                "id": "outcome",
                "type": "env_outcome_verifier",
                "env": "env",
                "checks": [
                    {
                        "name": "boots refunded",
                        "env": "helpdesk",
                        "weight": 2,
                        "sql": "SELECT SUM(amount_cents) FROM refunds WHERE order_id = 'ORD-5001'",
                        "equals": 8999,
                    },
                    {
                        "name": "ticket closed",
                        "env": "helpdesk",
                        "sql": "SELECT status FROM tickets WHERE ticket_id = 'TCK-9001'",
                        "equals": "closed",
                    },
                ],
            },
            {
                "id": "rubric",
                "type": "rubrics_verifier",
                "prompt_step": "ask",
                "env": "env",
                "criteria": [
                    {
                        "name": "refund call",
                        "description": "Refunded the boots (89.99) only",
                        "check": {"tool_called": "issue_refund", "args": {"order_id": "ORD-5001", "amount": 89.99}},
                    },
                    {"name": "tells the customer", "check": {"response_regex": r"refunded 89\.99"}},
                ],
            },
            {
                "id": "total",
                "type": "aggregate_verifiers",
                "verifiers": ["outcome", "rubric"],
                "method": "weighted_average",
            },
        ],
    }


def test_right_refund_scores_one(host: PluginHost, tmp_path: Any) -> None:
    record = run_task(task(89.99), tmp_path, host=host)
    steps = {s["id"]: s for s in record["steps"]}
    assert record["status"] == "succeeded", {k: v["error"] for k, v in steps.items() if v["error"]}
    assert steps["outcome"]["output"]["score"] == 1.0
    assert steps["rubric"]["output"]["score"] == 1.0
    assert record["score"] == 1.0 and record["passed"] is True
    assert set(record["verifiers"]) == {"outcome", "rubric", "total"}


def test_wrong_refund_scores_less(host: PluginHost, tmp_path: Any) -> None:
    record = run_task(task(129.99), tmp_path, host=host)
    steps = {s["id"]: s for s in record["steps"]}
    assert record["status"] == "succeeded"
    outcome, rubric = steps["outcome"]["output"], steps["rubric"]["output"]
    assert [r["passed"] for r in outcome["rows"]] == [False, True]
    assert [r["passed"] for r in rubric["rows"]] == [False, False]
    assert record["score"] == pytest.approx((1 / 3 + 0) / 2)
    assert record["score"] < 1 and record["passed"] is False
