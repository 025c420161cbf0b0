"""Messages people can answer: describe_message for sent mail, deliver_reply for a persona's answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from agentenv.contracts import Message
from agentenv_email.env import EmailEnv
from agentenv_runtime import ToolError

Ok = Callable[..., Any]

SUPPORT = "support@acme.example"
DANA = "dana.kim@example.com"


def test_send_describes_a_message(acme: EmailEnv, ok: Ok) -> None:
    args = {"to": [DANA], "cc": ["priya@acme.example"], "subject": "Your refund", "body": "Refund of 89.99 issued."}
    result = ok(acme, "send_email", **args)
    message = acme.describe_message("send_email", args, result)
    assert message == Message(
        env="email",
        sender=SUPPORT,
        recipients=(DANA, "priya@acme.example"),
        text="Your refund\n\nRefund of 89.99 issued.",
        ref={"email_id": result["id"], "thread_id": result["thread_id"]},
    )


def test_reply_and_forward_describe_messages(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    reply = ok(acme, "reply_email", email_id=dana_email, body="We are on it.")
    message = acme.describe_message("reply_email", {}, reply)
    assert message is not None
    assert message.recipients == (DANA,)
    assert message.text == "Re: Boots arrived damaged — refund please\n\nWe are on it."
    assert message.ref == {"email_id": reply["id"], "thread_id": reply["thread_id"]}
    forward = ok(acme, "forward_email", email_id=dana_email, to=["priya@acme.example"])
    fwd_message = acme.describe_message("forward_email", {}, forward)
    assert fwd_message is not None and fwd_message.recipients == ("priya@acme.example",)
    assert fwd_message.text.startswith("Fwd: Boots arrived damaged")


def test_other_tools_describe_nothing(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    result = ok(acme, "read_email", email_id=dana_email)
    assert acme.describe_message("read_email", {"email_id": dana_email}, result) is None
    assert acme.describe_message("add_label", {}, ok(acme, "add_label", email_id=dana_email, label="x")) is None
    assert acme.describe_message("send_email", {}, None) is None


def test_deliver_reply_threads_the_answer(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    sent = ok(acme, "reply_email", email_id=dana_email, body="Would you prefer a refund or a replacement pair?")
    message = acme.describe_message("reply_email", {}, sent)
    assert message is not None
    acme.clock.advance(600)  # type: ignore[attr-defined]
    answer = acme.deliver_reply(message, DANA, "A refund please, thanks!")
    assert answer["from_address"] == DANA and answer["from_name"] == "Dana Kim"
    assert answer["to"] == [SUPPORT]
    assert answer["thread_id"] == sent["thread_id"]
    assert answer["in_reply_to"] == sent["id"]
    assert answer["subject"] == "Re: Boots arrived damaged — refund please"
    assert answer["sent_at"] == "2026-11-24T10:10:00Z"
    assert answer["mailbox"] == SUPPORT and answer["labels"] == ["inbox"] and answer["is_read"] is False
    inbox = ok(acme, "list_emails", label="inbox", unread_only=True)["emails"]
    assert inbox[0]["id"] == answer["id"]
    thread = ok(acme, "get_thread", thread_id=sent["thread_id"])
    assert [e["from_address"] for e in thread["emails"]] == [DANA, SUPPORT, DANA]
    assert ok(acme, "list_emails", mailbox=DANA, label="sent")["emails"][0]["id"] == answer["id"]
    # the agent can answer the persona's reply in turn
    assert ok(acme, "reply_email", email_id=answer["id"], body="Done.")["to"] == [DANA]


def test_deliver_reply_from_a_new_address_creates_a_mailbox(empty: EmailEnv, ok: Ok) -> None:
    sent = ok(empty, "send_email", to=["help@vendor.example"], subject="Question", body="Do you ship to Canada?")
    message = empty.describe_message("send_email", {}, sent)
    assert message is not None
    answer = empty.deliver_reply(message, "Alex@Vendor.example", "Yes, we do.")
    assert answer["from_address"] == "alex@vendor.example"  # a colleague answered
    boxes = {box["address"] for box in ok(empty, "list_mailboxes")}
    assert "alex@vendor.example" in boxes


def test_deliver_reply_through_atomic_like_the_world(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    sent = ok(acme, "reply_email", email_id=dana_email, body="Refund or replacement?")
    message = acme.describe_message("reply_email", {}, sent)
    result, error = acme.atomic("reply", acme.deliver_reply, message=message, sender=DANA, text="Refund.")
    assert error is None and result["body"] == "Refund."
    before = acme.snapshot()
    result, error = acme.atomic("reply", acme.deliver_reply, message=message, sender="not-an-address", text="x")
    assert result is None and error is not None and error["field"] == "sender"
    assert acme.snapshot() == before


def test_deliver_reply_errors(acme: EmailEnv) -> None:
    message = Message(env="email", sender=SUPPORT, recipients=(DANA,), text="hi", ref={})
    with pytest.raises(ToolError) as missing:
        acme.deliver_reply(message, DANA, "hello")
    assert missing.value.field == "ref"
    unknown = Message(env="email", sender=SUPPORT, recipients=(DANA,), text="hi", ref={"email_id": "M-77777"})
    with pytest.raises(ToolError) as not_found:
        acme.deliver_reply(unknown, DANA, "hello")
    assert not_found.value.code == "not_found"
