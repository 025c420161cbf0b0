"""Snapshot, restore, reset and fork after tool calls; plugin registration."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from agentenv_email.env import EmailEnv

Ok = Callable[..., Any]
DANA = "dana.kim@example.com"


def act(env: EmailEnv, ok: Ok, email_id: str) -> None:
    ok(env, "read_email", email_id=email_id)
    ok(env, "reply_email", email_id=email_id, body="Refund on its way.")
    ok(env, "add_label", email_id=email_id, label="refunds")
    ok(env, "archive_email", email_id=email_id)


def test_snapshot_restore_after_tool_calls(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    start, start_export = acme.snapshot(), acme.export()
    act(acme, ok, dana_email)
    after, after_export = acme.snapshot(), acme.export()
    assert after_export != start_export
    acme.restore(start)
    assert acme.export() == start_export
    assert ok(acme, "list_emails", unread_only=True)["total"] == 5
    acme.restore(after)
    assert acme.export() == after_export
    assert ok(acme, "list_emails", label="refunds")["total"] == 1


def test_reset_returns_to_loaded_artifact(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    loaded = acme.export()
    act(acme, ok, dana_email)
    acme.reset()
    assert acme.export() == loaded


def test_fork_is_equal_then_independent(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    act(acme, ok, dana_email)
    clone = acme.fork()
    assert clone.export() == acme.export()
    assert clone.settings == acme.settings
    assert ok(clone, "search_emails", query="refund") == ok(acme, "search_emails", query="refund")
    # the same next call gives the same result in both
    args = {"to": [DANA], "subject": "Follow-up", "body": "Did the refund arrive?"}
    assert ok(clone, "send_email", **args) == ok(acme, "send_email", **args)
    assert clone.export() == acme.export()
    # and then they diverge independently
    ok(clone, "send_email", to=[DANA], subject="Only in the clone")
    assert ok(acme, "search_emails", query="only in the clone")["total"] == 0
    assert ok(clone, "search_emails", query="only in the clone")["total"] == 1
    clone.reset()
    acme.reset()
    assert clone.export() == acme.export()


def test_export_loads_back(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    from agentenv_runtime import Artifact

    act(acme, ok, dana_email)
    data = acme.export()
    copy = EmailEnv()
    copy.load(Artifact.build(name="acme-after", env="email", version="0", data=data))
    assert copy.export() == data


def test_refused_call_changes_nothing(acme: EmailEnv, dana_email: str) -> None:
    before = acme.export()
    result, error = acme.call("remove_label", {"email_id": dana_email, "label": "archive"})
    assert result is None and error is not None
    assert acme.export() == before


def test_plugin_registers_env() -> None:
    found = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "email"]
    assert len(found) == 1 and found[0].value == "agentenv_email.plugin"
    plugin = found[0].load()
    assert [ref.load() for ref in plugin.agentenv_register_envs()] == [EmailEnv]
    assert EmailEnv.name == "email"
    assert EmailEnv.Settings().model_dump() == {"address": "support@acme.example", "display_name": "Acme Support"}


def test_settings_choose_the_acting_mailbox(acme_artifact: Any) -> None:
    env = EmailEnv({"address": "Sam@Acme.example"})
    env.load(acme_artifact)
    result, error = env.call("list_emails", {})
    assert error is None and result["mailbox"] == "sam@acme.example"
    sent, error = env.call("send_email", {"to": [DANA], "subject": "Hi from Sam"})
    assert error is None and sent["from_address"] == "sam@acme.example" and sent["from_name"] == "Sam Rivera"
