"""The helpdesk inside a kernel World: verifying an order unlocks refunds, and Dana answers replies."""

from __future__ import annotations

from typing import Any

import pytest

world_module = pytest.importorskip("agentenv_runtime.world.world")

from agentenv_helpdesk import verify  # noqa: E402
from agentenv_helpdesk.env import HelpdeskEnv  # noqa: E402


def _world() -> Any:
    env = HelpdeskEnv()
    env.load(HelpdeskEnv.find_artifact("acme"))
    world = world_module.World([env], roles={"agent": {"tools": ["*"], "deny": ["issue_refund"]}})
    world.add_trigger(
        {
            "id": "unlock-refunds",
            "kind": "state",
            "when": {"env": "helpdesk", "sql": "SELECT verified FROM orders WHERE order_id = 'ORD-5001'"},
            "actions": [{"set_tool_access": {"role": "agent", "enable": ["issue_refund"]}}],
        }
    )
    world.add_trigger(
        {
            "id": "dana-thanks",
            "kind": "persona",
            "when": {"persona": "dana.kim@example.com", "match": "refund"},
            "actions": [{"reply": {"text": "Thank you, that's perfect!"}}],
        }
    )
    return world


def test_verify_order_unlocks_refunds_through_a_state_trigger():
    world = _world()
    refund = {"order_id": "ORD-5001", "amount": 89.99, "reason": "Boots arrived with a split sole"}
    assert world.call("issue_refund", refund, role="agent").error["code"] == "forbidden"
    assert world.call("verify_order", {"order_id": "ORD-5001", "note": "Photo checked"}, role="agent").ok
    outcome = world.call("issue_refund", refund, role="agent")
    assert outcome.ok, outcome.error
    assert verify.refund_total(world, "ORD-5001") == 89.99


def test_dana_replies_on_the_ticket_and_the_story_checks_pass():
    world = _world()
    world.call("verify_order", {"order_id": "ORD-5001", "note": "Photo checked"}, role="agent")
    world.call("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "Damaged"}, role="agent")
    args = {"ticket_id": "TCK-9001", "body": "We refunded 89.99 for the boots.", "public": True}
    assert world.call("add_ticket_comment", args, role="agent").ok
    comments = world.call("get_ticket", {"ticket_id": "TCK-9001"}, role="agent").result["comments"]
    assert comments[-1]["author"] == "dana.kim@example.com"
    assert comments[-1]["body"] == "Thank you, that's perfect!"
    world.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "Refunded the boots"}, role="agent")
    assert verify.dana_refund_checks(world) == dict.fromkeys(
        ["refund_amount_correct", "ticket_closed", "order_verified", "customer_replied"], True
    )
