"""The email env inside a kernel world: a persona trigger answers the agent's email in the same thread."""

from __future__ import annotations

from agentenv_email.env import EmailEnv
from agentenv_runtime import Artifact, World

DANA = "dana.kim@example.com"


def test_persona_reply_arrives_in_the_thread(acme_artifact: Artifact) -> None:
    env = EmailEnv()
    env.load(acme_artifact)
    world = World([env])
    world.clock.set("2026-11-24T10:00:00Z", mode="frozen")
    world.add_trigger(
        {
            "id": "dana-thanks",
            "kind": "persona",
            "when": {"persona": DANA, "match": r"refund", "env": "email"},
            "actions": [{"reply": {"text": "Thank you, that was quick!"}}],
        }
    )
    dana_email = env.query(
        "SELECT id, thread_id FROM emails WHERE from_address = ? AND subject LIKE 'Boots%'", (DANA,)
    )[0]
    outcome = world.call("reply_email", {"email_id": dana_email["id"], "body": "Your refund of 89.99 is issued."})
    assert outcome.ok, outcome.error
    thread = world.call("get_thread", {"thread_id": dana_email["thread_id"]}).result
    assert [e["from_address"] for e in thread["emails"]] == [DANA, "support@acme.example", DANA]
    answer = thread["emails"][-1]
    assert answer["body"] == "Thank you, that was quick!"
    assert answer["subject"] == "Re: Boots arrived damaged — refund please"
    assert answer["is_read"] is False and answer["labels"] == ["inbox"]
    assert answer["sent_at"] == "2026-11-24T10:00:00Z"
    # the trigger fires once: a second email to Dana gets no answer
    world.call("send_email", {"to": [DANA], "subject": "Refund follow-up", "body": "Did the refund arrive?"})
    assert world.call("list_emails", {"unread_only": True}).result["total"] == 6
