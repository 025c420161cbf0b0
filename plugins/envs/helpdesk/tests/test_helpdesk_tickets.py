"""Ticket tools: listing, reading, creating, updating, commenting and closing, and their refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

NOW = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)  # the fixtures' frozen clock
NOW_ISO = "2026-11-25T10:00:00Z"

# ---- list_tickets -------------------------------------------------------------------------------------


def test_list_tickets_newest_first_with_total(acme, ok):
    result = ok(acme, "list_tickets")
    assert result["total"] == 13
    ids = [t["ticket_id"] for t in result["tickets"]]
    assert ids[0] == "TCK-9001" and len(ids) == 13
    created = [t["created_at"] for t in result["tickets"]]
    assert created == sorted(created, reverse=True)


def test_list_tickets_filters_by_status_and_customer(acme, ok):
    open_ids = {t["ticket_id"] for t in ok(acme, "list_tickets", status="open")["tickets"]}
    assert open_ids == {"TCK-8996", "TCK-8998", "TCK-9000", "TCK-9001"}
    by_email = ok(acme, "list_tickets", customer="Dana.Kim@example.com")
    by_id = ok(acme, "list_tickets", customer="ACC-1001")
    assert by_email == by_id
    assert [t["ticket_id"] for t in by_email["tickets"]] == ["TCK-9001"]
    marcus_closed = ok(acme, "list_tickets", customer="marcus.webb@example.com", status="closed")
    assert [t["ticket_id"] for t in marcus_closed["tickets"]] == ["TCK-8989"]


def test_list_tickets_limit_caps_but_total_counts(acme, ok):
    result = ok(acme, "list_tickets", limit=2)
    assert len(result["tickets"]) == 2 and result["total"] == 13


def test_list_tickets_refusals(acme, refused):
    refused(acme, "list_tickets", "not_found", "customer", customer="nobody@example.com")
    refused(acme, "list_tickets", "not_found", "customer", customer="ACC-4242")
    refused(acme, "list_tickets", "invalid_arguments", "status", status="archived")
    refused(acme, "list_tickets", "invalid_arguments", "limit", limit=0)
    refused(acme, "list_tickets", "invalid_arguments", "limit", limit=500)


# ---- get_ticket ---------------------------------------------------------------------------------------


def test_get_ticket_shows_dana_story(acme, ok):
    ticket = ok(acme, "get_ticket", ticket_id="TCK-9001")
    assert ticket["subject"] == "Boots arrived damaged — refund please"
    assert ticket["status"] == "open"
    assert ticket["customer_email"] == "dana.kim@example.com" and ticket["account_id"] == "ACC-1001"
    assert ticket["order_id"] == "ORD-5001"
    [comment] = ticket["comments"]
    assert comment["public"] is True and comment["author"] == "dana.kim@example.com"
    assert "89.99" in comment["body"] and "sole is split" in comment["body"]


def test_get_ticket_includes_internal_notes(acme, ok):
    comments = ok(acme, "get_ticket", ticket_id="TCK-8991")["comments"]
    assert [c["public"] for c in comments] == [True, False, True]


def test_get_ticket_refusals(acme, refused):
    refused(acme, "get_ticket", "not_found", "ticket_id", ticket_id="TCK-1")
    refused(acme, "get_ticket", "invalid_arguments", "ticket_id", ticket_id="9001")
    refused(acme, "get_ticket", "invalid_arguments", "ticket_id")


# ---- create_ticket ------------------------------------------------------------------------------------


def test_create_ticket_next_sequential_id_and_clock(acme, ok):
    ticket = ok(
        acme,
        "create_ticket",
        customer_email=" Dana.Kim@Example.com ",
        subject="Sizing question",
        body="Do the boots run large?",
        priority="low",
    )
    assert ticket["ticket_id"] == "TCK-9002"
    assert ticket["status"] == "open" and ticket["priority"] == "low"
    assert ticket["account_id"] == "ACC-1001"
    assert ticket["created_at"] == ticket["updated_at"] == NOW_ISO
    assert ticket["comments"][0]["author"] == "support@acme.example"
    assert ticket["comments"][0]["public"] is True
    second = ok(acme, "create_ticket", customer_email="grace.liu@example.com", subject="s", body="b", priority="high")
    assert second["ticket_id"] == "TCK-9003"
    assert ok(acme, "get_ticket", ticket_id="TCK-9003")["priority"] == "high"


def test_create_ticket_linked_to_own_order(acme, ok):
    ticket = ok(
        acme,
        "create_ticket",
        customer_email="dana.kim@example.com",
        subject="Headlamp",
        body="Battery question",
        priority="normal",
        order_id="ORD-4993",
    )
    assert ticket["order_id"] == "ORD-4993"


def test_create_ticket_for_unknown_customer_creates_nothing(acme, refused, ok):
    error = refused(
        acme,
        "create_ticket",
        "not_found",
        "customer_email",
        customer_email="stranger@example.com",
        subject="Hello",
        body="Hi",
        priority="normal",
    )
    assert "stranger@example.com" in error["message"]
    assert ok(acme, "list_tickets")["total"] == 13


def test_create_ticket_other_refusals(acme, refused):
    base = {"customer_email": "dana.kim@example.com", "subject": "s", "body": "b", "priority": "normal"}
    refused(acme, "create_ticket", "order_mismatch", "order_id", **base, order_id="ORD-4996")
    refused(acme, "create_ticket", "not_found", "order_id", **base, order_id="ORD-1")
    refused(acme, "create_ticket", "invalid_arguments", "priority", **{**base, "priority": "critical"})
    refused(acme, "create_ticket", "invalid_arguments", "customer_email", **{**base, "customer_email": "dana"})
    refused(acme, "create_ticket", "invalid_arguments", "subject", **{**base, "subject": "   "})
    refused(acme, "create_ticket", "invalid_arguments", "body", **{**base, "body": ""})
    refused(acme, "create_ticket", "invalid_arguments", "extra", **base, extra=1)


# ---- update_ticket ------------------------------------------------------------------------------------


def test_update_ticket_fields_and_timestamp(acme, ok):
    acme.clock.moment = NOW + timedelta(hours=1)
    ticket = ok(
        acme, "update_ticket", ticket_id="TCK-9001", status="pending", priority="high", assignee="Sam@acme.example"
    )
    assert (ticket["status"], ticket["priority"], ticket["assignee"]) == ("pending", "high", "sam@acme.example")
    assert ticket["updated_at"] == "2026-11-25T11:00:00Z"
    assert ok(acme, "update_ticket", ticket_id="TCK-9001", status="solved")["status"] == "solved"
    assert ok(acme, "update_ticket", ticket_id="TCK-9001", status="open")["status"] == "open"


def test_update_ticket_solved_cannot_go_pending(acme, refused):
    error = refused(acme, "update_ticket", "invalid_transition", "status", ticket_id="TCK-8991", status="pending")
    assert "allowed next: open" in error["message"]


def test_update_ticket_refuses_closing_without_resolution(acme, refused):
    error = refused(acme, "update_ticket", "invalid_transition", "status", ticket_id="TCK-9001", status="closed")
    assert "close_ticket" in error["message"]


def test_update_ticket_other_refusals(acme, refused):
    refused(acme, "update_ticket", "nothing_to_update", "status", ticket_id="TCK-9001")
    refused(acme, "update_ticket", "not_found", "assignee", ticket_id="TCK-9001", assignee="dana.kim@example.com")
    refused(acme, "update_ticket", "not_found", "ticket_id", ticket_id="TCK-12345", priority="low")
    refused(acme, "update_ticket", "invalid_arguments", "priority", ticket_id="TCK-9001", priority="asap")


# ---- closed tickets are final -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("update_ticket", {"status": "open"}),
        ("update_ticket", {"priority": "urgent"}),
        ("update_ticket", {"assignee": "sam@acme.example"}),
        ("add_ticket_comment", {"body": "One more thing", "public": True}),
        ("add_ticket_comment", {"body": "note", "public": False}),
        ("close_ticket", {"resolution": "again"}),
    ],
)
def test_closed_ticket_refuses_edits(acme, refused, tool, args):
    error = refused(acme, tool, "ticket_closed", "ticket_id", ticket_id="TCK-8989", **args)
    assert "create_ticket" in error["message"]


def test_ticket_closed_by_agent_is_final(acme, ok, refused):
    ok(acme, "close_ticket", ticket_id="TCK-9000", resolution="Gift note added.")
    refused(acme, "update_ticket", "ticket_closed", "ticket_id", ticket_id="TCK-9000", status="open")
    refused(acme, "add_ticket_comment", "ticket_closed", "ticket_id", ticket_id="TCK-9000", body="x", public=True)


# ---- add_ticket_comment -------------------------------------------------------------------------------


def test_add_ticket_comment_public_and_internal(acme, ok):
    public = ok(acme, "add_ticket_comment", ticket_id="TCK-9001", body="  Sorry, Dana!  ", public=True)
    assert public["comment"]["body"] == "Sorry, Dana!" and public["comment"]["public"] is True
    internal = ok(acme, "add_ticket_comment", ticket_id="TCK-9001", body="Check photos", public=False)
    assert internal["comment"]["comment_id"] == public["comment"]["comment_id"] + 1
    ticket = ok(acme, "get_ticket", ticket_id="TCK-9001")
    assert [(c["body"], c["public"]) for c in ticket["comments"][1:]] == [
        ("Sorry, Dana!", True),
        ("Check photos", False),
    ]
    assert all(c["author"] == "support@acme.example" for c in ticket["comments"][1:])
    assert ticket["updated_at"] == NOW_ISO


def test_add_ticket_comment_refusals(acme, refused):
    refused(acme, "add_ticket_comment", "invalid_arguments", "public", ticket_id="TCK-9001", body="x")
    refused(acme, "add_ticket_comment", "invalid_arguments", "body", ticket_id="TCK-9001", body=" ", public=True)
    refused(acme, "add_ticket_comment", "not_found", "ticket_id", ticket_id="TCK-7", body="x", public=True)


# ---- close_ticket -------------------------------------------------------------------------------------


def test_close_ticket_records_resolution(acme, ok):
    ticket = ok(acme, "close_ticket", ticket_id="TCK-9001", resolution="  Refunded 89.99 for the boots. ")
    assert ticket["status"] == "closed"
    assert ticket["resolution"] == "Refunded 89.99 for the boots."
    assert ticket["closed_at"] == NOW_ISO


@pytest.mark.parametrize("status", ["pending", "solved"])
def test_close_ticket_from_any_live_status(acme, ok, status):
    ok(acme, "update_ticket", ticket_id="TCK-9001", status=status)
    assert ok(acme, "close_ticket", ticket_id="TCK-9001", resolution="done")["status"] == "closed"


def test_close_ticket_needs_resolution_text(acme, refused):
    error = refused(acme, "close_ticket", "resolution_required", "resolution", ticket_id="TCK-9001", resolution="  ")
    assert "how" in error["message"]
    refused(acme, "close_ticket", "invalid_arguments", "resolution", ticket_id="TCK-9001", resolution="")
    refused(acme, "close_ticket", "invalid_arguments", "resolution", ticket_id="TCK-9001")
    refused(acme, "close_ticket", "not_found", "ticket_id", ticket_id="TCK-1", resolution="done")


def test_empty_desk_starts_ticket_sequence_at_9001(make_env):
    env = make_env(None)
    env.db.execute(
        "INSERT INTO accounts (account_id, email, name, created_at) VALUES ('ACC-1', 'a@example.com', 'A', 'x')"
    )
    result, error = env.call("create_ticket", {"customer_email": "a@example.com", "subject": "s", "body": "b"})
    assert error is None and result["ticket_id"] == "TCK-9001"
    assert result["comments"][0]["author"] == "support"


# ---- escalate_ticket ----------------------------------------------------------------------------------


def test_escalate_makes_urgent_assigns_reopens_and_notes_why(acme, ok):
    before = ok(acme, "get_ticket", ticket_id="TCK-8997")
    assert (before["status"], before["priority"], before["assignee"]) == ("pending", "high", "sam@acme.example")
    after = ok(acme, "escalate_ticket", ticket_id="TCK-8997", to="Priya@acme.example", reason="Wrong item twice")
    assert (after["status"], after["priority"], after["assignee"]) == ("open", "urgent", "priya@acme.example")
    note = after["comments"][-1]
    assert note == {
        "comment_id": note["comment_id"],
        "author": "support@acme.example",
        "body": "Escalated to Priya Patel: Wrong item twice",
        "public": False,
        "created_at": NOW_ISO,
    }


def test_list_staff_names_who_can_take_a_ticket(acme, ok):
    assert ok(acme, "list_staff") == {
        "staff": [
            {"email": "priya@acme.example", "name": "Priya Patel", "role": "billing_lead"},
            {"email": "sam@acme.example", "name": "Sam Rivera", "role": "support"},
        ]
    }


def test_escalate_refusals(acme, ok, refused):
    refused(acme, "escalate_ticket", "not_found", "to", ticket_id="TCK-8998", to="nobody@acme.example", reason="x")
    refused(acme, "escalate_ticket", "not_found", "to", ticket_id="TCK-8998", to="support@acme.example", reason="x")
    refused(
        acme, "escalate_ticket", "ticket_closed", "ticket_id", ticket_id="TCK-8989", to="sam@acme.example", reason="x"
    )
    refused(
        acme, "escalate_ticket", "invalid_arguments", "reason", ticket_id="TCK-8998", to="sam@acme.example", reason=" "
    )
    ok(acme, "escalate_ticket", ticket_id="TCK-8998", to="sam@acme.example", reason="Zipper stuck on a trip")
    refused(
        acme,
        "escalate_ticket",
        "already_escalated",
        "ticket_id",
        ticket_id="TCK-8998",
        to="sam@acme.example",
        reason="again",
    )
