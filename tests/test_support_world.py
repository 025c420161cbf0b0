"""The support-desk world: slack + email + helpdesk composed into one world with every world rule.

These are the worlds issue's "must show" cases, run against the real first-party apps and their `acme` data.
"""

from __future__ import annotations

import pytest
from agentenv_runtime import World, build_card, build_world

ROLES = {
    "support": {"tools": ["*"], "deny": ["issue_refund"]},
    "billing_lead": {"tools": ["*"]},
}
DANA = "dana.kim@example.com"


@pytest.fixture
def world() -> World:
    return build_world("helpdesk,email,slack", artifacts=["acme"], roles=ROLES)


def refund_total(world: World) -> float:
    rows = world.env("helpdesk").query(
        "SELECT COALESCE(SUM(amount_cents), 0) AS c FROM refunds WHERE order_id = ?", ("ORD-5001",)
    )
    return rows[0]["c"] / 100


def test_one_card_one_namespace(world: World) -> None:
    card = build_card(world)
    assert [c["name"] for c in card["children_environments"]] == ["helpdesk", "email", "slack"]
    names = [t["name"] for t in card["capabilities"]["tools"]]
    assert len(names) == len(set(names))
    assert {"email_get_thread", "slack_get_thread", "issue_refund", "send_email", "post_message"} <= set(names)
    assert all(t["inputSchema"]["type"] == "object" for t in card["capabilities"]["tools"])
    assert card["protocolVersion"] == "1.0"
    assert all(c["version"] == "0.1.0" for c in card["children_environments"])
    assert all(
        c["artifacts"] and c["artifacts"][0].startswith(f"{c['name']}/acme@") for c in card["children_environments"]
    )


def test_rbac_hides_and_refuses_refund_for_support(world: World) -> None:
    assert "issue_refund" not in {t["name"] for t in world.list_tools("support")}
    assert "issue_refund" in {t["name"] for t in world.list_tools("billing_lead")}
    before = world.snapshot()
    refused = world.call("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}, role="support")
    assert refused.error is not None and refused.error["code"] == "forbidden"
    assert world.snapshot() == before
    allowed = world.call(
        "issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}, role="billing_lead"
    )
    assert allowed.ok, allowed.error
    assert refund_total(world) == pytest.approx(89.99)


def test_bad_arguments_name_the_field_and_change_nothing(world: World) -> None:
    before = world.snapshot()
    outcome = world.call("issue_refund", {"order_id": "ORD-5001", "amount": -5, "reason": "x"}, role="billing_lead")
    assert outcome.error is not None and outcome.error["code"] == "invalid_arguments"
    assert outcome.error["errors"][0]["field"] == "amount"
    assert world.snapshot() == before


def test_time_trigger_at_0930_opens_a_second_ticket(world: World) -> None:
    world.clock.set("2026-11-24T09:00:00Z", mode="event")
    world.add_trigger(
        {
            "id": "second-ticket",
            "kind": "time",
            "when": {"at": "09:30"},
            "actions": [
                {
                    "call_tool": {
                        "tool": "create_ticket",
                        "args": {"customer_email": DANA, "subject": "Where is my refund?", "body": "Any news?"},
                    }
                }
            ],
        }
    )
    open_before = len(world.call("list_tickets", {"customer": DANA}).result["tickets"])
    assert world.run_until_idle() == 1
    assert world.clock.now().isoformat() == "2026-11-24T09:30:00+00:00"
    tickets = world.call("list_tickets", {"customer": DANA}).result["tickets"]
    assert len(tickets) == open_before + 1
    assert any(t["subject"] == "Where is my refund?" for t in tickets)


def test_tool_call_trigger_makes_the_customer_reply_when_emailed(world: World) -> None:
    world.add_trigger(
        {
            "id": "dana-replies",
            "kind": "tool_call",
            "when": {"tool": "send_email", "args": {"to": {"contains": DANA}}},
            "actions": [{"reply": {"sender": DANA, "text": "Thanks, that works for me."}}],
        }
    )
    sent = world.call("send_email", {"to": [DANA], "subject": "Your refund", "body": "We are on it."}, role="support")
    assert sent.ok, sent.error
    found = world.call("search_emails", {"query": "that works for me"}).result
    assert found["total"] == 1 and found["emails"][0]["from_address"] == DANA
    assert [e["kind"] for e in world.trajectory.events[-3:]] == ["trigger", "reply", "tool_call"]


def test_state_trigger_unlocks_refund_once_the_order_is_verified(world: World) -> None:
    world.rbac.define("agent", ["verify_order", "get_order"])
    world.add_trigger(
        {
            "id": "unlock-refunds",
            "kind": "state",
            "when": {"env": "helpdesk", "sql": "SELECT verified FROM orders WHERE order_id = 'ORD-5001'"},
            "actions": [{"set_tool_access": {"role": "agent", "enable": ["issue_refund"]}}],
        }
    )
    args = {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged boots"}
    assert world.call("issue_refund", args, role="agent").error["code"] == "forbidden"
    assert world.call("verify_order", {"order_id": "ORD-5001", "note": "photo checked"}, role="agent").ok
    assert "issue_refund" in {t["name"] for t in world.list_tools("agent")}
    assert world.call("issue_refund", args, role="agent").ok


def test_persona_trigger_answers_when_store_credit_is_offered(world: World) -> None:
    world.add_trigger(
        {
            "id": "dana-wants-money",
            "kind": "persona",
            "repeat": True,
            "when": {"persona": DANA, "match": r"store credit"},
            "actions": [{"reply": {"text": "I'd rather have my money back"}}],
        }
    )
    world.call("send_email", {"to": [DANA], "subject": "Options", "body": "We can repair the boots."})
    assert not [e for e in world.trajectory.events if e["kind"] == "reply"]
    world.call("send_email", {"to": [DANA], "subject": "Options", "body": "Would store credit of 100 work?"})
    replies = [e for e in world.trajectory.events if e["kind"] == "reply"]
    assert len(replies) == 1 and replies[0]["text"] == "I'd rather have my money back"
    assert replies[0]["sender"] == DANA and replies[0]["error"] is None


def test_snapshot_mutate_restore_gives_back_the_exact_state(world: World) -> None:
    before_bytes, before_export = world.snapshot(), world.export()
    world.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "refunded"})
    world.call("post_message", {"channel": "support", "text": "done"})
    assert world.export() != before_export
    world.restore(before_bytes)
    assert world.export() == before_export
    assert world.snapshot() == before_bytes


def test_fork_is_independent_of_its_parent(world: World) -> None:
    fork = world.fork()
    fork.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "refunded"})
    assert world.call("get_ticket", {"ticket_id": "TCK-9001"}).result["status"] == "open"
    assert fork.call("get_ticket", {"ticket_id": "TCK-9001"}).result["status"] == "closed"
    world.call("post_message", {"channel": "support", "text": "only in the parent"})
    assert "only in the parent" not in str(fork.env("slack").export())


def test_replaying_the_same_calls_gives_the_same_digest() -> None:
    def play() -> str:
        w = build_world("helpdesk,email,slack", artifacts=["acme"], roles=ROLES)
        w.clock.set("2026-11-24T09:00:00Z", mode="frozen")
        w.call("lookup_account", {"email": DANA})
        w.call("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "x"}, role="billing_lead")
        w.call("issue_refund", {"order_id": "ORD-5001", "amount": 500, "reason": "x"}, role="billing_lead")
        w.call("send_email", {"to": [DANA], "subject": "Refund", "body": "Done"})
        return w.trajectory.digest()

    assert play() == play()


def test_get_time_appears_only_while_the_clock_is_armed(world: World) -> None:
    assert "get_time" not in {t["name"] for t in world.list_tools()}
    world.clock.set("2026-11-24T09:00:00Z", mode="frozen", timezone="America/New_York")
    assert world.call("get_time").result == {
        "utc": "2026-11-24T09:00:00+00:00",
        "timezone": "America/New_York",
        "local": "2026-11-24T04:00:00-05:00",
    }
    world.clock.clear()
    assert "get_time" not in {t["name"] for t in world.list_tools()}
