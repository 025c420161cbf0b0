"""The slack env inside a kernel `World`: persona triggers see its messages and their replies land."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_runtime import World
from agentenv_slack.env import SlackEnv

SAM_POST = "1795512600.000100"


@pytest.fixture
def world() -> World:
    env = SlackEnv()
    env.load(SlackEnv.find_artifact("acme"))
    world = World([env])
    world.clock.set("2026-11-24T10:00:00Z", mode="frozen")
    return world


def persona(trigger_id: str, who: str, match: str, text: str) -> dict[str, Any]:
    return {
        "id": trigger_id,
        "kind": "persona",
        "when": {"persona": who, "match": match, "env": "slack"},
        "actions": [{"reply": {"text": text}}],
    }


def test_persona_by_email_answers_a_dm(world: World) -> None:
    world.add_trigger(persona("priya-ok", "priya@acme.example", r"PAY-7001", "Approved, boots only."))
    sent = world.call("send_dm", {"user": "U_PRIYA", "text": "Can I refund 89.99 to PAY-7001?"})
    assert sent.ok, sent.error
    dm = world.call("read_dm", {"user": "U_PRIYA"}).result
    assert [(m["user"], m["text"]) for m in dm["messages"]] == [
        ("U_SUPPORT", "Can I refund 89.99 to PAY-7001?"),
        ("U_PRIYA", "Approved, boots only."),
    ]


def test_persona_by_user_id_answers_in_the_thread(world: World) -> None:
    world.add_trigger(persona("sam-thanks", "U_SAM", r"TCK-9001", "Thanks for taking it!"))
    posted = world.call("post_message", {"channel": "support", "text": "Refunding TCK-9001", "thread_id": SAM_POST})
    assert posted.ok, posted.error
    replies = world.call("get_thread", {"message_id": SAM_POST}).result["replies"]
    assert [(r["user"], r["text"]) for r in replies[-2:]] == [
        ("U_SUPPORT", "Refunding TCK-9001"),
        ("U_SAM", "Thanks for taking it!"),
    ]


def test_no_reply_when_the_text_does_not_match(world: World) -> None:
    world.add_trigger(persona("priya-ok", "U_PRIYA", r"PAY-7001", "Approved."))
    world.call("send_dm", {"user": "U_PRIYA", "text": "Lunch?"})
    assert len(world.call("read_dm", {"user": "U_PRIYA"}).result["messages"]) == 1
