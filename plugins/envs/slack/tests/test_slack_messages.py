"""Messages people can answer: `describe_message` after a post or DM, `deliver_reply` for the answer."""

from __future__ import annotations

import pytest
from agentenv.contracts import Message
from agentenv_runtime import ToolError

SAM_POST = "1795512600.000100"
SAM_DETAILS = "1795512720.000100"


def test_dm_is_described_for_its_recipient(env, ok) -> None:
    arguments = {"user": "priya@acme.example", "text": "May I refund 89.99 to PAY-7001?"}
    sent = ok(env, "send_dm", **arguments)
    message = env.describe_message("send_dm", arguments, sent)
    assert message == Message(
        env="slack",
        sender="U_SUPPORT",
        recipients=("U_PRIYA", "priya@acme.example"),
        text="May I refund 89.99 to PAY-7001?",
        ref={
            "kind": "dm",
            "channel": "D0002",
            "channel_name": None,
            "message_id": sent["id"],
            "thread_id": None,
            "sender_email": "support@acme.example",
            "recipient_ids": ["U_PRIYA"],
            "recipient_emails": ["priya@acme.example"],
        },
    )


def test_channel_post_is_described_for_the_other_members(env, ok) -> None:
    arguments = {"channel": "#support", "text": "Refund for TCK-9001 is on its way", "thread_id": SAM_DETAILS}
    posted = ok(env, "post_message", **arguments)
    message = env.describe_message("post_message", arguments, posted)
    assert message is not None
    assert message.sender == "U_SUPPORT"
    assert message.ref["recipient_ids"] == ["U_JO", "U_LENA", "U_MARCUS", "U_SAM"]
    assert message.recipients == (
        *message.ref["recipient_ids"],
        *["jo@acme.example", "lena@acme.example", "marcus@acme.example", "sam@acme.example"],
    )
    assert message.ref["channel"] == "C_SUPPORT" and message.ref["channel_name"] == "support"
    assert message.ref["thread_id"] == SAM_POST and message.ref["message_id"] == posted["id"]
    top = ok(env, "post_message", channel="billing", text="Refund logged")
    assert env.describe_message("post_message", {}, top).ref["thread_id"] == top["id"]


def test_other_tools_describe_nothing(env, ok) -> None:
    reacted = ok(env, "add_reaction", message_id=SAM_POST, emoji="eyes")
    assert env.describe_message("add_reaction", {}, reacted) is None
    assert env.describe_message("send_dm", {}, None) is None


def test_reply_to_a_dm_comes_back_as_a_dm(env, ok) -> None:
    sent = ok(env, "send_dm", user="U_PRIYA", text="Refund 89.99 for TCK-9001 ok?")
    message = env.describe_message("send_dm", {}, sent)
    env.clock.advance(300)
    reply = env.deliver_reply(message, "priya@acme.example", "Yes, boots only. Go ahead.")
    assert reply["user"] == "U_PRIYA" and reply["channel"] == sent["channel"]
    assert reply["time"] == "2026-11-24T10:05:00Z" and reply["thread_id"] is None
    conversation = ok(env, "read_dm", user="U_PRIYA")["messages"]
    assert [m["text"] for m in conversation] == ["Refund 89.99 for TCK-9001 ok?", "Yes, boots only. Go ahead."]


def test_reply_to_a_channel_post_goes_in_its_thread(env, ok) -> None:
    posted = ok(env, "post_message", channel="support", text="Anyone know if Dana sent photos?")
    message = env.describe_message("post_message", {}, posted)
    reply = env.deliver_reply(message, "U_SAM", "Yes, they are on the ticket.")
    assert reply["thread_id"] == posted["id"] and reply["user"] == "U_SAM"
    thread = ok(env, "get_thread", message_id=posted["id"])
    assert [r["text"] for r in thread["replies"]] == ["Yes, they are on the ticket."]


def test_reply_to_a_thread_reply_stays_in_that_thread(env, ok) -> None:
    posted = ok(env, "post_message", channel="support", text="Taking it", thread_id=SAM_POST)
    reply = env.deliver_reply(env.describe_message("post_message", {}, posted), "sam", "Thanks!")
    assert reply["thread_id"] == SAM_POST


@pytest.mark.parametrize(
    ("sender", "text", "code", "field"),
    [
        ("U_GHOST", "hi", "not_found", "sender"),
        ("dana.kim@example.com", "hi", "not_found", "sender"),
        ("U_OLIVIA", "hi", "deactivated", "sender"),
        ("U_PRIYA", "   ", "empty_text", "text"),
        ("U_PRIYA", "x" * 40_001, "text_too_long", "text"),
        ("U_SUPPORT", "talking to myself", "self_dm", "sender"),
    ],
)
def test_bad_dm_replies_are_refused_and_change_nothing(env, ok, sender, text, code, field) -> None:
    message = env.describe_message("send_dm", {}, ok(env, "send_dm", user="U_PRIYA", text="hello"))
    before = env.export()
    with pytest.raises(ToolError) as caught:
        env.deliver_reply(message, sender, text)
    assert (caught.value.code, caught.value.field) == (code, field)
    assert env.export() == before


def test_channel_reply_rules(env, ok) -> None:
    posted = ok(env, "post_message", channel="billing", text="Logging the refund")
    message = env.describe_message("post_message", {}, posted)
    ok(env, "archive_channel", channel="billing")
    before = env.export()
    with pytest.raises(ToolError) as caught:
        env.deliver_reply(message, "U_PRIYA", "Noted")
    assert caught.value.code == "archived"
    missing = Message(
        "slack",
        "U_SUPPORT",
        ("U_SAM",),
        "x",
        {"kind": "channel", "channel": "C_SUPPORT", "message_id": "1700000000.000001"},
    )
    with pytest.raises(ToolError) as caught:
        env.deliver_reply(missing, "U_SAM", "hello")
    assert caught.value.code == "not_found"
    foreign = Message("email", "support@acme.example", ("sam@acme.example",), "x", {})
    with pytest.raises(ToolError) as caught:
        env.deliver_reply(foreign, "U_SAM", "hello")
    assert caught.value.code == "wrong_env"
    assert env.export() == before
