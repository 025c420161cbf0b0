"""Every email tool: happy paths, schema-level refusals (naming the field) and rule violations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from agentenv_email.env import EmailEnv

Ok = Callable[..., Any]
Refused = Callable[..., dict[str, Any]]

SUPPORT = "support@acme.example"
DANA = "dana.kim@example.com"
MB = 1024 * 1024


def field_of(error: dict[str, Any]) -> str:
    """The field an error names: ToolError `field`, or the first schema error's field."""
    if "field" in error:
        return str(error["field"])
    return str(error["errors"][0]["field"])


# ---- tool specs -------------------------------------------------------------------------------------


def test_every_tool_is_documented() -> None:
    specs = EmailEnv.tool_specs()
    assert len(specs) >= 10
    for spec in specs.values():
        assert spec.description, spec.name
        for name, prop in spec.input_schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name} has no description"


def test_read_only_tools_are_marked() -> None:
    read_only = {name for name, spec in EmailEnv.tool_specs().items() if spec.read_only}
    assert read_only == {
        "list_mailboxes",
        "list_labels",
        "list_emails",
        "search_emails",
        "list_threads",
        "get_thread",
    }


# ---- mailboxes and labels ---------------------------------------------------------------------------


def test_list_mailboxes(acme: EmailEnv, ok: Ok) -> None:
    boxes = {box["address"]: box for box in ok(acme, "list_mailboxes")}
    assert boxes[SUPPORT]["display_name"] == "Acme Support"
    assert boxes[SUPPORT]["is_acting"] is True
    assert boxes["sam@acme.example"]["display_name"] == "Sam Rivera"
    assert boxes["priya@acme.example"]["display_name"] == "Priya Patel"
    assert boxes[DANA]["display_name"] == "Dana Kim"
    assert boxes[SUPPORT]["unread"] == 5
    assert not boxes[DANA]["is_acting"]


def test_list_labels(acme: EmailEnv, ok: Ok) -> None:
    labels = ok(acme, "list_labels")
    assert [row["label"] for row in labels[:3]] == ["inbox", "sent", "archive"]
    by_name = {row["label"]: row for row in labels}
    assert by_name["inbox"]["unread"] == 5
    assert by_name["shipping"]["system"] is False
    assert ok(acme, "list_labels", mailbox="sam@acme.example")[0]["label"] == "inbox"


def test_list_labels_of_empty_env_shows_system_labels(empty: EmailEnv, ok: Ok) -> None:
    assert [row["label"] for row in ok(empty, "list_labels")] == ["inbox", "sent", "archive"]


def test_unknown_mailbox_is_not_found(acme: EmailEnv, refused: Refused) -> None:
    error = refused(acme, "list_emails", mailbox="nobody@acme.example")
    assert error["code"] == "not_found"
    assert error["field"] == "mailbox"


def test_bad_mailbox_address_is_a_schema_error(acme: EmailEnv, refused: Refused) -> None:
    error = refused(acme, "list_labels", mailbox="not an address")
    assert error["code"] == "invalid_arguments"
    assert field_of(error) == "mailbox"


# ---- listing and reading ----------------------------------------------------------------------------


def test_list_emails_newest_first(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    listing = ok(acme, "list_emails")
    assert listing["mailbox"] == SUPPORT
    assert listing["emails"][0]["id"] == dana_email
    stamps = [email["sent_at"] for email in listing["emails"]]
    assert stamps == sorted(stamps, reverse=True)
    assert "body" not in listing["emails"][0] and listing["emails"][0]["snippet"]
    assert listing["emails"][0]["attachment_count"] == 1


def test_list_emails_filters(acme: EmailEnv, ok: Ok) -> None:
    unread = ok(acme, "list_emails", unread_only=True)
    assert unread["total"] == 5
    assert all(not email["is_read"] for email in unread["emails"])
    archived = ok(acme, "list_emails", label="archive")
    assert archived["total"] == 6
    assert all("archive" in email["labels"] and "inbox" not in email["labels"] for email in archived["emails"])
    shipping = ok(acme, "list_emails", label="Shipping")  # labels are case-insensitive
    assert {email["subject"] for email in shipping["emails"]} >= {"Where is my order ORD-4987?"}


def test_list_emails_paging(acme: EmailEnv, ok: Ok) -> None:
    everything = ok(acme, "list_emails", limit=100)["emails"]
    page = ok(acme, "list_emails", limit=3, offset=2)
    assert [e["id"] for e in page["emails"]] == [e["id"] for e in everything[2:5]]
    assert page["total"] == len(everything)


def test_list_emails_of_another_mailbox(acme: EmailEnv, ok: Ok) -> None:
    listing = ok(acme, "list_emails", mailbox=DANA)
    assert listing["mailbox"] == DANA
    assert {email["subject"] for email in listing["emails"]} == {
        "Boots arrived damaged — refund please",
        "Your order ORD-5001 has shipped",
        "Your Acme Outfitters order ORD-5001",
    }


def test_list_emails_unknown_label(acme: EmailEnv, refused: Refused) -> None:
    error = refused(acme, "list_emails", label="no-such-label")
    assert (error["code"], error["field"]) == ("not_found", "label")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"offset": -1}, "offset"),
        ({"label": "!"}, "label"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_list_emails_schema_errors(acme: EmailEnv, refused: Refused, arguments: dict[str, Any], field: str) -> None:
    error = refused(acme, "list_emails", **arguments)
    assert error["code"] == "invalid_arguments"
    assert field_of(error) == field


def test_read_email_marks_read(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    email = ok(acme, "read_email", email_id=dana_email)
    assert email["is_read"] is True
    assert email["from_address"] == DANA and email["from_name"] == "Dana Kim"
    assert "89.99" in email["body"]
    assert email["attachments"] == [
        {"filename": "boots_sole_split.jpg", "mime_type": "image/jpeg", "size_bytes": 2_348_112}
    ]
    assert ok(acme, "list_emails", unread_only=True)["total"] == 4
    # Dana's own copy (sent) is untouched by support reading it.
    assert ok(acme, "list_emails", mailbox=DANA, label="sent")["emails"][0]["is_read"] is True


def test_read_email_unknown_id(acme: EmailEnv, refused: Refused) -> None:
    error = refused(acme, "read_email", email_id="M-99999")
    assert (error["code"], error["field"]) == ("not_found", "email_id")


def test_read_email_bad_id_format(acme: EmailEnv, refused: Refused) -> None:
    error = refused(acme, "read_email", email_id="1001")
    assert error["code"] == "invalid_arguments" and field_of(error) == "email_id"


def test_read_email_not_in_mailbox(acme: EmailEnv, refused: Refused) -> None:
    priya_only = acme.query("SELECT id FROM emails WHERE subject LIKE 'Invoice INV-PP-2211%'")[0]["id"]
    error = refused(acme, "read_email", email_id=priya_only)
    assert (error["code"], error["field"]) == ("not_found", "email_id")
    assert "not in mailbox support@acme.example" in error["message"]


def test_read_email_in_another_mailbox(acme: EmailEnv, ok: Ok) -> None:
    priya_only = acme.query("SELECT id FROM emails WHERE subject LIKE 'Invoice INV-PP-2211%'")[0]["id"]
    email = ok(acme, "read_email", email_id=priya_only, mailbox="priya@acme.example")
    assert email["mailbox"] == "priya@acme.example"
    assert email["attachments"][0]["filename"] == "INV-PP-2211.pdf"


def test_mark_unread(acme: EmailEnv, ok: Ok, refused: Refused, dana_email: str) -> None:
    error = refused(acme, "mark_unread", email_id=dana_email)
    assert error["field"] == "email_id" and "already unread" in error["message"]
    ok(acme, "read_email", email_id=dana_email)
    assert ok(acme, "mark_unread", email_id=dana_email)["is_read"] is False
    assert ok(acme, "list_emails", unread_only=True)["total"] == 5


# ---- sending ----------------------------------------------------------------------------------------


def test_send_email_delivers(empty: EmailEnv, ok: Ok) -> None:
    sent = ok(
        empty,
        "send_email",
        to=["Dana.Kim@Example.com"],
        cc=["sam@acme.example"],
        subject="Hello",
        body="Hi",
        attachments=[{"filename": "label.pdf", "mime_type": "application/pdf", "size_bytes": 1200}],
    )
    assert sent["id"] == "M-1001" and sent["thread_id"] == "TH-1001"
    assert sent["from_address"] == SUPPORT and sent["from_name"] == "Acme Support"
    assert sent["to"] == [DANA] and sent["cc"] == ["sam@acme.example"]
    assert sent["sent_at"] == "2026-11-24T10:00:00Z"
    assert sent["labels"] == ["sent"] and sent["is_read"] is True
    inbox = ok(empty, "list_emails", mailbox=DANA, label="inbox")["emails"]
    assert [(e["id"], e["is_read"]) for e in inbox] == [("M-1001", False)]
    assert ok(empty, "list_emails", mailbox="sam@acme.example")["total"] == 1
    boxes = {box["address"] for box in ok(empty, "list_mailboxes")}
    assert boxes == {SUPPORT, DANA, "sam@acme.example"}  # new addresses get mailboxes
    assert ok(empty, "send_email", to=[DANA], body="again")["id"] == "M-1002"


def test_send_email_to_self_lands_in_own_inbox(empty: EmailEnv, ok: Ok) -> None:
    sent = ok(empty, "send_email", to=[SUPPORT], subject="Note to self")
    assert sent["labels"] == ["inbox", "sent"]


def test_send_email_after_acme_continues_ids(acme: EmailEnv, ok: Ok) -> None:
    top = acme.query("SELECT COUNT(*) AS n FROM emails")[0]["n"]
    sent = ok(acme, "send_email", to=[DANA], subject="x")
    assert sent["id"] == f"M-{1000 + top + 1}"
    assert sent["thread_id"] == "TH-1020"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"to": ["dana.kim"]}, "to.0"),
        ({"to": ["dana@@example.com"]}, "to.0"),
        ({"to": []}, "to"),
        ({"to": [DANA], "cc": ["x"]}, "cc.0"),
        ({"to": [f"p{i}@example.com" for i in range(51)]}, "to"),
        (
            {"to": [DANA], "attachments": [{"filename": "a", "mime_type": "pdf", "size_bytes": 1}]},
            "attachments.0.mime_type",
        ),
        (
            {"to": [DANA], "attachments": [{"filename": "a.pdf", "mime_type": "application/pdf", "size_bytes": -1}]},
            "attachments.0.size_bytes",
        ),
        (
            {"to": [DANA], "attachments": [{"filename": "dir/a.pdf", "mime_type": "application/pdf", "size_bytes": 1}]},
            "attachments.0.filename",
        ),
        ({"to": [DANA], "bcc": [DANA]}, "bcc"),
        ({}, "to"),
    ],
)
def test_send_email_schema_errors(empty: EmailEnv, refused: Refused, arguments: dict[str, Any], field: str) -> None:
    error = refused(empty, "send_email", **({"subject": "s"} | arguments))
    assert error["code"] == "invalid_arguments"
    assert field_of(error) == field


def test_send_email_empty_subject_and_body(empty: EmailEnv, refused: Refused, ok: Ok) -> None:
    error = refused(empty, "send_email", to=[DANA], subject="  ", body="\n")
    assert error["code"] == "rule_violation" and error["field"] == "subject"
    assert "both empty" in error["message"]
    ok(empty, "send_email", to=[DANA], body="body only")
    ok(empty, "send_email", to=[DANA], subject="subject only")


def test_send_email_too_many_recipients(empty: EmailEnv, refused: Refused) -> None:
    to = [f"a{i}@example.com" for i in range(30)]
    cc = [f"b{i}@example.com" for i in range(21)]
    error = refused(empty, "send_email", to=to, cc=cc, subject="Newsletter")
    assert error["field"] == "to" and "51 recipients" in error["message"]


def test_send_email_duplicate_recipient(empty: EmailEnv, refused: Refused) -> None:
    error = refused(empty, "send_email", to=[DANA], cc=["DANA.KIM@example.com"], subject="x")
    assert error["field"] == "to" and "more than once" in error["message"]


def test_send_email_attachments_over_25_mb(empty: EmailEnv, refused: Refused, ok: Ok) -> None:
    big = [
        {"filename": "a.zip", "mime_type": "application/zip", "size_bytes": 20 * MB},
        {"filename": "b.zip", "mime_type": "application/zip", "size_bytes": 5 * MB + 1},
    ]
    error = refused(empty, "send_email", to=[DANA], subject="files", attachments=big)
    assert error["field"] == "attachments" and "25 MB" in error["message"]
    exactly = [{"filename": "c.zip", "mime_type": "application/zip", "size_bytes": 25 * MB}]
    assert ok(empty, "send_email", to=[DANA], subject="files", attachments=exactly)["attachments"] == exactly


# ---- replying and forwarding ------------------------------------------------------------------------


def test_reply_keeps_thread(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    original = ok(acme, "read_email", email_id=dana_email)
    reply = ok(acme, "reply_email", email_id=dana_email, body="Sorry about the boots! Refund on its way.")
    assert reply["thread_id"] == original["thread_id"]
    assert reply["subject"] == "Re: Boots arrived damaged — refund please"
    assert reply["in_reply_to"] == dana_email
    assert reply["to"] == [DANA] and reply["cc"] == []
    thread = ok(acme, "get_thread", thread_id=original["thread_id"], mailbox=DANA)
    assert [email["id"] for email in thread["emails"]] == [dana_email, reply["id"]]
    assert thread["unread_count"] == 1
    again = ok(acme, "reply_email", email_id=reply["id"], body="One more thing.")
    assert again["subject"] == "Re: Boots arrived damaged — refund please"  # no "Re: Re:"
    assert again["to"] == [DANA]  # answering our own email goes to its recipients


def test_reply_all(acme: EmailEnv, ok: Ok) -> None:
    refund_thread = acme.query("SELECT id FROM emails WHERE subject = 'Re: Refunds: keep billing in the loop'")[0][
        "id"
    ]  # Sam to Priya, cc support
    plain = ok(acme, "reply_email", email_id=refund_thread, body="Noted.")
    assert plain["to"] == ["sam@acme.example"] and plain["cc"] == []
    everyone = ok(acme, "reply_email", email_id=refund_thread, body="Refund ORD-5001, 89.99.", reply_all=True)
    assert everyone["to"] == ["sam@acme.example"]
    assert everyone["cc"] == ["priya@acme.example"]


def test_reply_to_email_not_for_acting_mailbox(acme: EmailEnv, refused: Refused) -> None:
    priya_only = acme.query("SELECT id FROM emails WHERE subject LIKE 'Invoice INV-PP-2211%'")[0]["id"]
    error = refused(acme, "reply_email", email_id=priya_only, body="hi")
    assert error["code"] == "rule_violation" and error["field"] == "email_id"
    assert "neither sent by nor addressed to support@acme.example" in error["message"]


def test_reply_errors(acme: EmailEnv, refused: Refused, dana_email: str) -> None:
    assert refused(acme, "reply_email", email_id="M-5000", body="hi")["code"] == "not_found"
    empty_body = refused(acme, "reply_email", email_id=dana_email, body="   ")
    assert empty_body["field"] == "body"
    missing = refused(acme, "reply_email", email_id=dana_email)
    assert field_of(missing) == "body"
    too_big = [{"filename": "x.bin", "mime_type": "application/octet-stream", "size_bytes": 26 * MB}]
    assert refused(acme, "reply_email", email_id=dana_email, body="x", attachments=too_big)["field"] == "attachments"


def test_forward_email(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    forward = ok(acme, "forward_email", email_id=dana_email, to=["priya@acme.example"], note="Refund request FYI")
    assert forward["subject"] == "Fwd: Boots arrived damaged — refund please"
    assert forward["in_reply_to"] == dana_email
    original_thread = acme.query("SELECT thread_id FROM emails WHERE id = ?", (dana_email,))[0]["thread_id"]
    assert forward["thread_id"] != original_thread
    assert forward["body"].startswith("Refund request FYI\n\n---------- Forwarded message ----------")
    assert "From: Dana Kim <dana.kim@example.com>" in forward["body"]
    assert "Please refund 89.99 USD" in forward["body"]
    assert forward["attachments"][0]["filename"] == "boots_sole_split.jpg"
    bare = ok(acme, "forward_email", email_id=dana_email, to=["sam@acme.example"], include_attachments=False)
    assert bare["attachments"] == [] and bare["body"].startswith("---------- Forwarded")
    assert ok(acme, "list_emails", mailbox="priya@acme.example", unread_only=True)["emails"][0]["id"] == forward["id"]


def test_forward_errors(acme: EmailEnv, refused: Refused, dana_email: str) -> None:
    priya_only = acme.query("SELECT id FROM emails WHERE subject LIKE 'Invoice INV-PP-2211%'")[0]["id"]
    error = refused(acme, "forward_email", email_id=priya_only, to=[DANA])
    assert error["code"] == "rule_violation" and error["field"] == "email_id"
    assert refused(acme, "forward_email", email_id="M-4242", to=[DANA])["code"] == "not_found"
    assert field_of(refused(acme, "forward_email", email_id=dana_email, to=["@example.com"])) == "to.0"
    assert field_of(refused(acme, "forward_email", email_id=dana_email, to=[])) == "to"


# ---- search -----------------------------------------------------------------------------------------


def test_search_finds_danas_email(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    result = ok(acme, "search_emails", query="refund boots")
    assert result["emails"][0]["id"] == dana_email
    assert "refund" in result["emails"][0]["snippet"].lower()


def test_search_ranks_subject_hits_first(acme: EmailEnv, ok: Ok) -> None:
    result = ok(acme, "search_emails", query="ORD-5001")
    subjects = [email["subject"] for email in result["emails"]]
    assert subjects[0] in {"Your order ORD-5001 has shipped", "Your Acme Outfitters order ORD-5001"}
    assert "Boots arrived damaged — refund please" in subjects


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("from:dana", {"Boots arrived damaged — refund please"}),
        ('from:"Kenji Watanabe" is:unread', {"Re: Tent pole replacement"}),
        (
            "has:attachment",
            {"Boots arrived damaged — refund please", "Tent pole replacement", "Re: Invoice copy for order ORD-4950"},
        ),
        ("label:shipping", {"Where is my order ORD-4987?", "Re: Where is my order ORD-4987?"}),
        ("subject:promo", {"Promo code FALL15 not working", "Re: Promo code FALL15 not working"}),
        ('"return label"', {"Return label request", "Re: Exchange for a smaller size"}),
        ("to:kenji", {"Re: Tent pole replacement"}),
        ("boots_sole_split", {"Boots arrived damaged — refund please"}),
        ("zzzz-nothing", set()),
        ("100%_off", set()),  # LIKE wildcards are literal
    ],
)
def test_search_operators(acme: EmailEnv, ok: Ok, query: str, expected: set[str]) -> None:
    result = ok(acme, "search_emails", query=query, limit=100)
    assert {email["subject"] for email in result["emails"]} == expected
    assert result["total"] == len(result["emails"])


def test_search_from_address_and_limit(acme: EmailEnv, ok: Ok) -> None:
    result = ok(acme, "search_emails", query="", from_address="marcus.lee@example.com")
    assert result["total"] == 3
    assert len(ok(acme, "search_emails", query="the", limit=2)["emails"]) == 2


def test_search_errors(acme: EmailEnv, refused: Refused) -> None:
    assert refused(acme, "search_emails", query="is:starred")["field"] == "query"
    assert refused(acme, "search_emails", query="has:pdf")["field"] == "query"
    assert refused(acme, "search_emails", query="   ")["field"] == "query"
    assert field_of(refused(acme, "search_emails", query="x", from_address="dana")) == "from_address"
    assert field_of(refused(acme, "search_emails", query="x", limit=500)) == "limit"


def test_search_other_mailbox(acme: EmailEnv, ok: Ok) -> None:
    result = ok(acme, "search_emails", query="INV-PP-2211", mailbox="priya@acme.example")
    assert result["total"] == 2
    assert ok(acme, "search_emails", query="INV-PP-2211")["total"] == 0


# ---- labels -----------------------------------------------------------------------------------------


def test_user_labels(acme: EmailEnv, ok: Ok, refused: Refused, dana_email: str) -> None:
    labelled = ok(acme, "add_label", email_id=dana_email, label="Refunds")
    assert labelled["labels"] == ["inbox", "refunds"]
    assert refused(acme, "add_label", email_id=dana_email, label="refunds")["field"] == "label"
    assert ok(acme, "list_emails", label="refunds")["emails"][0]["id"] == dana_email
    assert ok(acme, "remove_label", email_id=dana_email, label="refunds")["labels"] == ["inbox"]
    error = refused(acme, "remove_label", email_id=dana_email, label="refunds")
    assert error["field"] == "label" and "its labels: inbox" in error["message"]


def test_archive_and_inbox_exclude_each_other(acme: EmailEnv, ok: Ok, refused: Refused, dana_email: str) -> None:
    assert ok(acme, "archive_email", email_id=dana_email)["labels"] == ["archive"]
    assert refused(acme, "archive_email", email_id=dana_email)["field"] == "email_id"
    assert ok(acme, "add_label", email_id=dana_email, label="inbox")["labels"] == ["inbox"]
    assert ok(acme, "add_label", email_id=dana_email, label="archive")["labels"] == ["archive"]
    assert ok(acme, "remove_label", email_id=dana_email, label="archive")["labels"] == []
    assert ok(acme, "search_emails", query="refund boots")["emails"][0]["id"] == dana_email


def test_system_label_rules(acme: EmailEnv, ok: Ok, refused: Refused, dana_email: str) -> None:
    assert refused(acme, "add_label", email_id=dana_email, label="sent")["field"] == "label"
    error = refused(acme, "remove_label", email_id=dana_email, label="archive")  # not archived
    assert error["code"] == "rule_violation" and error["field"] == "label"
    sent = ok(acme, "list_emails", label="sent", limit=1)["emails"][0]["id"]
    assert "cannot be removed" in refused(acme, "remove_label", email_id=sent, label="sent")["message"]


def test_label_errors(acme: EmailEnv, refused: Refused, dana_email: str) -> None:
    assert refused(acme, "add_label", email_id="M-9999", label="x")["code"] == "not_found"
    assert field_of(refused(acme, "add_label", email_id=dana_email, label="")) == "label"
    assert field_of(refused(acme, "add_label", email_id=dana_email, label="x" * 41)) == "label"
    error = refused(acme, "add_label", email_id=dana_email, label="x", mailbox="sam@acme.example")
    assert (error["code"], error["field"]) == ("not_found", "email_id")


# ---- threads ----------------------------------------------------------------------------------------


def test_list_threads(acme: EmailEnv, ok: Ok) -> None:
    threads = ok(acme, "list_threads", limit=100)
    first = threads["threads"][0]
    assert first["subject"] == "Boots arrived damaged — refund please"
    assert first["participants"] == [DANA, SUPPORT] and first["unread_count"] == 1
    tent = next(t for t in threads["threads"] if t["subject"] == "Tent pole replacement")
    assert tent["message_count"] == 3 and tent["unread_count"] == 1
    unread = ok(acme, "list_threads", unread_only=True)
    assert unread["total"] == 5
    billing = ok(acme, "list_threads", label="billing")
    assert {t["subject"] for t in billing["threads"]} == {
        "Promo code FALL15 not working",
        "Invoice copy for order ORD-4950",
    }


def test_get_thread(acme: EmailEnv, ok: Ok, refused: Refused) -> None:
    tent = next(t for t in ok(acme, "list_threads", limit=100)["threads"] if t["subject"] == "Tent pole replacement")
    thread = ok(acme, "get_thread", thread_id=tent["thread_id"])
    assert [email["from_address"] for email in thread["emails"]] == [
        "kenji.watanabe@example.org",
        SUPPORT,
        "kenji.watanabe@example.org",
    ]
    assert thread["emails"][2]["in_reply_to"] == thread["emails"][1]["id"]
    assert thread["emails"][2]["body"].startswith("Sure, it is ORD-4999.")
    assert thread["unread_count"] == 1  # get_thread does not mark read
    assert ok(acme, "get_thread", thread_id=tent["thread_id"])["unread_count"] == 1
    assert refused(acme, "get_thread", thread_id="TH-9999")["field"] == "thread_id"
    invoice = acme.query("SELECT thread_id FROM emails WHERE subject LIKE 'Invoice INV-PP%'")[0]["thread_id"]
    error = refused(acme, "get_thread", thread_id=invoice)
    assert (error["code"], error["field"]) == ("not_found", "thread_id")
    assert field_of(refused(acme, "get_thread", thread_id="M-1001")) == "thread_id"


# ---- determinism ------------------------------------------------------------------------------------


def test_same_calls_same_results(acme_artifact: Any) -> None:
    from agentenv_email.env import EmailEnv as Env

    def run() -> list[Any]:
        env = Env()
        env.clock = type("Fixed", (), {"now": lambda self: __import__("datetime").datetime(2026, 11, 24, 12)})()
        env.load(acme_artifact)
        calls = [
            ("send_email", {"to": [DANA], "subject": "Hi", "body": "x"}),
            ("reply_email", {"email_id": "M-1033", "body": "Refund issued.", "reply_all": True}),
            ("add_label", {"email_id": "M-1033", "label": "done"}),
            ("search_emails", {"query": "refund"}),
        ]
        return [env.call(name, args) for name, args in calls] + [env.export()]

    assert run() == run()
