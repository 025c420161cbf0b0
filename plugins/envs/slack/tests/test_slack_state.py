"""Snapshot, restore, fork, reset, determinism, export round trips, and plugin registration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from importlib.metadata import entry_points
from typing import Any

from agentenv_runtime import Artifact
from agentenv_slack.env import SlackEnv

SAM_POST = "1795512600.000100"
START = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


class ManualClock:
    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def act(env: SlackEnv, ok: Any) -> list[Any]:
    """A short session touching every kind of write."""
    results = [
        ok(env, "post_message", channel="support", text="Taking TCK-9001", thread_id=SAM_POST),
        ok(env, "add_reaction", message_id=SAM_POST, emoji="white_check_mark"),
        ok(env, "send_dm", user="U_PRIYA", text="Refund 89.99 to PAY-7001 for the boots?"),
        ok(env, "create_channel", name="refunds", members=["U_PRIYA"]),
        ok(env, "join_channel", channel="warehouse"),
    ]
    env.clock.advance(45)  # type: ignore[attr-defined]  # a ManualClock in these tests
    results.append(ok(env, "post_message", channel="refunds", text="PAY-7001: 89.99 (boots only)"))
    return results


def test_snapshot_and_restore(env, ok) -> None:
    snap = env.snapshot()
    before = env.export()
    act(env, ok)
    assert env.export() != before
    env.restore(snap)
    assert env.export() == before
    assert ok(env, "search_messages", query="PAY-7001")["total"] == 0  # the search index rolled back too


def test_fork_is_equal_and_independent(env, ok) -> None:
    act(env, ok)
    twin = env.fork()
    assert twin.export() == env.export()
    assert twin.snapshot() == env.snapshot()
    assert ok(twin, "search_messages", query="PAY-7001") == ok(env, "search_messages", query="PAY-7001")
    ok(twin, "post_message", channel="general", text="only in the fork")
    assert ok(env, "search_messages", query="fork")["total"] == 0
    assert ok(twin, "search_messages", query="fork")["total"] == 1


def test_forks_continue_identically(env, ok) -> None:
    one, two = env.fork(), env.fork()
    one.clock, two.clock = ManualClock(START), ManualClock(START)  # forks share the parent's clock
    assert act(one, ok) == act(two, ok)
    assert one.export() == two.export()


def test_identical_call_sequences_give_identical_results(make_env, ok) -> None:
    first, second = make_env(), make_env()
    assert act(first, ok) == act(second, ok)
    assert first.snapshot() == second.snapshot()


def test_reset_returns_to_the_loaded_artifact(env, ok) -> None:
    loaded = env.export()
    act(env, ok)
    env.reset()
    assert env.export() == loaded


def test_export_loads_back_with_a_working_search_index(env, ok) -> None:
    act(env, ok)
    exported = env.export()
    assert set(exported) == {"users", "conversations", "members", "messages", "reactions"}
    copy = SlackEnv()
    copy.load(Artifact.build(name="after", env="slack", version="1", data=exported))
    copy.clock = env.clock
    assert copy.export() == exported
    assert ok(copy, "search_messages", query="PAY-7001") == ok(env, "search_messages", query="PAY-7001")


def test_refused_call_leaves_snapshot_bytes_alone(env) -> None:
    snap = env.snapshot()
    _, error = env.call("post_message", {"channel": "bfcm-2025", "text": "hi"})
    assert error is not None and error["code"] == "archived"
    assert env.snapshot() == snap
    _, error = env.call("add_reaction", {"message_id": SAM_POST, "emoji": "eyes"})
    assert error is None
    snap = env.snapshot()
    _, error = env.call("add_reaction", {"message_id": SAM_POST, "emoji": "eyes"})
    assert error is not None and error["code"] == "already_reacted"
    assert env.snapshot() == snap


def test_empty_env_has_no_state() -> None:
    empty = SlackEnv()
    assert all(rows == [] for rows in empty.export().values())
    result, error = empty.call("list_channels", {})
    assert result is None and error is not None and error["field"] == "user_id"


def test_plugin_registers_the_env() -> None:
    found = [ep for ep in entry_points(group="agentenv.plugins") if ep.name == "slack"]
    assert len(found) == 1
    assert found[0].value == "agentenv_slack.plugin"
    assert [ref.load() for ref in found[0].load().agentenv_register_envs()] == [SlackEnv]
    assert SlackEnv.name == "slack"
