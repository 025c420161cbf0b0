"""Artifacts, snapshots and forks, determinism, messages to customers, graders and plugin registration."""

from __future__ import annotations

import gzip
import importlib.util
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from agentenv.contracts import Message
from agentenv_helpdesk import verify
from agentenv_helpdesk.env import HelpdeskEnv
from agentenv_runtime import ToolError

HERE = Path(__file__).resolve().parent.parent

# ---- artifacts ----------------------------------------------------------------------------------------


def test_both_artifacts_are_packaged():
    assert set(HelpdeskEnv.artifact_paths()) == {"acme", "globex"}


def test_acme_matches_the_shared_story(acme, ok):
    desk = acme.query("SELECT * FROM desk")
    assert desk == [
        {
            "company": "Acme Outfitters",
            "domain": "acme.example",
            "support_email": "support@acme.example",
            "currency": "USD",
        }
    ]
    staff = {row["email"]: row["name"] for row in acme.query("SELECT * FROM staff")}
    assert staff == {
        "support@acme.example": "Support Bot",
        "sam@acme.example": "Sam Rivera",
        "priya@acme.example": "Priya Patel",
    }
    dana = ok(acme, "lookup_account", email="dana.kim@example.com")
    assert (dana["account_id"], dana["name"]) == ("ACC-1001", "Dana Kim")
    order = ok(acme, "get_order", order_id="ORD-5001")
    assert order["account_id"] == "ACC-1001" and order["placed_at"].startswith("2026-11-20")
    assert {i["description"]: i["unit_price"] for i in order["items"]} == {
        "Trailblazer hiking boots": 89.99,
        "Merino socks (3-pack)": 40.0,
    }
    assert order["total"] == 129.99 and order["currency"] == "USD"
    payment = ok(acme, "get_payment", payment_id="PAY-7001")
    assert (payment["order_id"], payment["status"], payment["captured_amount"]) == ("ORD-5001", "captured", 129.99)
    ticket = ok(acme, "get_ticket", ticket_id="TCK-9001")
    assert (ticket["status"], ticket["account_id"]) == ("open", "ACC-1001")
    assert ticket["subject"] == "Boots arrived damaged — refund please"
    counts = {t: len(rows) for t, rows in acme.export().items()}
    assert counts["accounts"] == 11 and counts["tickets"] == 13 and counts["orders"] == 14
    statuses = {row["status"] for row in acme.query("SELECT status FROM tickets")}
    assert statuses == {"open", "pending", "solved", "closed"}


def test_globex_is_large_and_consistent(make_env, ok):
    env = make_env("globex")
    counts = {t: len(rows) for t, rows in env.export().items()}
    assert counts["accounts"] == 2000 and counts["orders"] == 5000 and counts["tickets"] == 3000
    assert counts["payments"] == 5000 and counts["order_items"] > 5000 and counts["ticket_comments"] > 3000
    assert env.query("SELECT company FROM desk") == [{"company": "Globex Corp"}]
    assert not env.query("SELECT email FROM accounts WHERE email LIKE '%acme%'")
    orphans = env.query(
        "SELECT ticket_id FROM tickets WHERE account_id NOT IN (SELECT account_id FROM accounts) "
        "OR (order_id IS NOT NULL AND order_id NOT IN (SELECT order_id FROM orders WHERE orders.account_id = "
        "tickets.account_id))"
    )
    assert orphans == []
    bad_totals = env.query(
        "SELECT o.order_id FROM orders o JOIN (SELECT order_id, SUM(quantity * unit_price_cents) AS s "
        "FROM order_items GROUP BY order_id) i USING (order_id) WHERE i.s != o.total_cents"
    )
    assert bad_totals == []
    over_refunded = env.query(
        "SELECT p.order_id FROM payments p JOIN (SELECT order_id, SUM(amount_cents) AS s FROM refunds "
        "GROUP BY order_id) r USING (order_id) WHERE r.s > p.captured_cents OR p.status != 'captured'"
    )
    assert over_refunded == []
    assert env.query("SELECT COUNT(*) AS n FROM tickets WHERE status = 'closed' AND resolution IS NULL") == [{"n": 0}]
    assert ok(env, "list_tickets", status="open")["total"] > 100
    created = ok(
        env,
        "create_ticket",
        customer_email=env.query("SELECT email FROM accounts LIMIT 1")[0]["email"],
        subject="s",
        body="b",
    )
    assert created["ticket_id"] == "TCK-93001"
    assert created["comments"][0]["author"] == "support@globex.example"


def test_generator_reproduces_packaged_artifacts():
    spec = importlib.util.spec_from_file_location(
        "helpdesk_generate_artifacts", HERE / "scripts" / "generate_artifacts.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    artifacts = HelpdeskEnv.artifact_dir()
    assert generator.encode(generator.acme(), indent=1) == (artifacts / "acme.json").read_bytes()
    packed = (artifacts / "globex.json.gz").read_bytes()
    assert generator.encode(generator.globex(), indent=None) == gzip.decompress(packed)


def test_load_refuses_artifact_of_another_env(make_env):
    from agentenv_runtime import Artifact, ArtifactError

    env = make_env(None)
    with pytest.raises(ArtifactError, match="helpdesk"):
        env.load(Artifact.build(name="x", env="slack", version="1", data={}))


# ---- snapshots, forks, determinism --------------------------------------------------------------------


def test_fork_is_independent(acme, ok):
    fork = acme.fork()
    ok(fork, "issue_refund", order_id="ORD-5001", amount=89.99, reason="Boots")
    ok(fork, "close_ticket", ticket_id="TCK-9001", resolution="Refunded")
    assert verify.refund_total(acme, "ORD-5001") == 0 and verify.ticket_status(acme, "TCK-9001") == "open"
    ok(acme, "update_ticket", ticket_id="TCK-9001", status="pending")
    assert verify.ticket_status(fork, "TCK-9001") == "closed"
    assert verify.refund_total(fork, "ORD-5001") == 89.99
    # both continue their own id sequences
    assert ok(acme, "issue_refund", order_id="ORD-5001", amount=1, reason="x")["refund"]["refund_id"] == "REF-3001"
    assert ok(fork, "issue_refund", order_id="ORD-5001", amount=1, reason="x")["refund"]["refund_id"] == "REF-3002"


def test_reset_returns_to_the_loaded_artifact(acme, ok):
    loaded = acme.snapshot()
    ok(acme, "issue_refund", order_id="ORD-5001", amount=89.99, reason="Boots")
    assert acme.snapshot() != loaded
    acme.reset()
    assert acme.snapshot() == loaded
    assert ok(acme, "list_refunds", order_id="ORD-5001")["refunds"] == []


def _story(env: HelpdeskEnv) -> list[object]:
    calls = [
        ("get_ticket", {"ticket_id": "TCK-9001"}),
        ("verify_order", {"order_id": "ORD-5001", "note": "Photo shows split sole"}),
        ("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "Damaged boots"}),
        ("issue_refund", {"order_id": "ORD-5001", "amount": 100, "reason": "too much"}),
        ("add_ticket_comment", {"ticket_id": "TCK-9001", "body": "Refunded 89.99", "public": True}),
        ("create_ticket", {"customer_email": "dana.kim@example.com", "subject": "s", "body": "b"}),
        ("close_ticket", {"ticket_id": "TCK-9001", "resolution": "Refunded the boots"}),
    ]
    return [env.call(name, args) for name, args in calls]


def test_identical_calls_give_identical_results_and_state(make_env):
    first, second = make_env("acme"), make_env("acme")
    assert _story(first) == _story(second)
    assert first.snapshot() == second.snapshot()
    assert first.export() == second.export()


def test_timestamps_follow_the_virtual_clock(acme, ok):
    from datetime import UTC, datetime

    acme.clock.moment = datetime(2027, 1, 2, 3, 4, 5, 600_000, tzinfo=UTC)
    assert ok(acme, "verify_order", order_id="ORD-5001", note="n")["verified_at"] == "2027-01-02T03:04:05Z"
    acme.clock.moment = datetime(2027, 1, 2, 3, 4, 5)  # a naive clock is read as UTC
    assert (
        ok(acme, "add_ticket_comment", ticket_id="TCK-9001", body="b", public=False)["comment"]["created_at"]
        == "2027-01-02T03:04:05Z"
    )


# ---- messages to customers ----------------------------------------------------------------------------


def test_public_comment_is_a_message_to_the_customer(acme):
    args = {"ticket_id": "TCK-9001", "body": "We're on it, Dana.", "public": True}
    result, _ = acme.call("add_ticket_comment", args)
    message = acme.describe_message("add_ticket_comment", args, result)
    assert message == Message(
        env="helpdesk",
        sender="support@acme.example",
        recipients=("dana.kim@example.com",),
        text="We're on it, Dana.",
        ref={"ticket_id": "TCK-9001", "comment_id": result["comment"]["comment_id"]},
    )
    internal_args = {**args, "public": False}
    internal, _ = acme.call("add_ticket_comment", internal_args)
    assert acme.describe_message("add_ticket_comment", internal_args, internal) is None
    assert acme.describe_message("get_ticket", {"ticket_id": "TCK-9001"}, {}) is None


def test_customer_reply_lands_on_the_ticket_and_reopens_it(acme, ok):
    ok(acme, "update_ticket", ticket_id="TCK-9001", status="pending")
    args = {"ticket_id": "TCK-9001", "body": "Can you send a photo?", "public": True}
    result, _ = acme.call("add_ticket_comment", args)
    message = acme.describe_message("add_ticket_comment", args, result)
    assert message is not None
    reply = acme.deliver_reply(message, "Dana.Kim@example.com", "Photo attached.")
    assert reply["comment"]["author"] == "dana.kim@example.com" and reply["comment"]["public"] is True
    ticket = ok(acme, "get_ticket", ticket_id="TCK-9001")
    assert ticket["status"] == "open" and ticket["comments"][-1]["body"] == "Photo attached."


def test_reply_to_a_closed_ticket_is_refused_and_changes_nothing(acme):
    message = Message(
        env="helpdesk",
        sender="support@acme.example",
        recipients=("marcus.webb@example.com",),
        text="hi",
        ref={"ticket_id": "TCK-8989"},
    )
    before = acme.snapshot()
    with pytest.raises(ToolError) as info:
        acme.deliver_reply(message, "marcus.webb@example.com", "thanks")
    assert info.value.code == "ticket_closed"
    assert acme.snapshot() == before


# ---- graders (verify.py) ------------------------------------------------------------------------------


def test_dana_checks_fail_on_the_untouched_story(acme):
    assert verify.dana_refund_checks(acme) == {
        "refund_amount_correct": False,
        "ticket_closed": False,
        "order_verified": False,
        "customer_replied": False,
    }


def test_dana_checks_pass_after_the_right_actions(acme, ok):
    ok(acme, "verify_order", order_id="ORD-5001", note="Photo shows split sole")
    ok(acme, "issue_refund", order_id="ORD-5001", amount=89.99, reason="Damaged boots")
    ok(acme, "add_ticket_comment", ticket_id="TCK-9001", body="Refunded 89.99 for the boots.", public=True)
    ok(acme, "close_ticket", ticket_id="TCK-9001", resolution="Refunded 89.99 for the damaged boots")
    assert all(verify.dana_refund_checks(acme).values())


def test_dana_checks_catch_a_full_order_refund(acme, ok):
    ok(acme, "issue_refund", order_id="ORD-5001", amount=129.99, reason="Everything")
    assert verify.dana_refund_checks(acme)["refund_amount_correct"] is False
    assert verify.refund_total(acme, "ORD-5001") == 129.99


def test_refund_total_adds_partial_refunds(acme, ok):
    ok(acme, "issue_refund", order_id="ORD-5001", amount=50, reason="a")
    ok(acme, "issue_refund", order_id="ORD-5001", amount=39.99, reason="b")
    assert verify.refund_total(acme, "ORD-5001") == 89.99
    assert verify.dana_refund_checks(acme)["refund_amount_correct"] is True
    assert verify.refund_total(acme, "ORD-404") == 0


def test_ticket_status_of_unknown_ticket(acme, make_env):
    assert verify.ticket_status(acme, "TCK-8995") == "pending"
    with pytest.raises(LookupError, match="TCK-1"):
        verify.ticket_status(acme, "TCK-1")
    assert verify.dana_refund_checks(make_env(None))["ticket_closed"] is False


# ---- plugin registration ------------------------------------------------------------------------------


def test_entry_point_registers_the_env():
    [entry] = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "helpdesk"]
    module = entry.load()
    assert [ref.load() for ref in module.agentenv_register_envs()] == [HelpdeskEnv]
    assert HelpdeskEnv.name == "helpdesk"
    assert len(HelpdeskEnv.tool_specs()) >= 12


def test_every_tool_documents_every_argument():
    for spec in HelpdeskEnv.tool_specs().values():
        assert spec.description, spec.name
        for field, schema in spec.input_schema["properties"].items():
            assert schema.get("description"), f"{spec.name}.{field}"
