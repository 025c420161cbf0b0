"""The packaged artifacts: the shared acme story, the large globex workspace, and their generator."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from agentenv_slack.env import SlackEnv, SlackSettings
from agentenv_slack.schema import BASE_SCHEMA
from agentenv_testing.installs import load_file_module

GENERATOR = Path(__file__).resolve().parents[1] / "scripts" / "generate_artifacts.py"


@pytest.fixture(scope="module")
def globex() -> SlackEnv:
    env = SlackEnv()
    env.load(SlackEnv.find_artifact("globex"))
    return env


def test_packaged_artifacts_are_found() -> None:
    assert set(SlackEnv.artifact_paths()) == {"acme", "globex"}
    assert SlackEnv.artifact_paths()["globex"].name == "globex.json.gz"


def test_acme_tells_the_shared_story(env, ok) -> None:
    artifact = SlackEnv.find_artifact("acme")
    assert (artifact.name, artifact.env, artifact.version) == ("acme", "slack", "1.0.0")
    people = {u["id"]: (u["real_name"], u["email"]) for u in ok(env, "list_users")}
    assert people["U_SUPPORT"] == ("Support Bot", "support@acme.example")
    assert people["U_SAM"] == ("Sam Rivera", "sam@acme.example")
    assert people["U_PRIYA"] == ("Priya Patel", "priya@acme.example")
    names = {c["name"] for c in ok(env, "list_channels")}
    assert {"support", "billing", "general"} <= names
    post = ok(env, "search_messages", query="TCK-9001", channel="support")["matches"][0]
    assert post["user"] == "U_SAM" and post["text"] == "Dana Kim's boots arrived damaged, ticket TCK-9001"
    details = ok(env, "get_thread", message_id=post["id"])["replies"][0]["text"]
    for fact in ("ORD-5001", "Trailblazer hiking boots", "89.99", "split sole"):
        assert fact in details
    assert 30 <= len(env.export()["messages"]) <= 60


def referential_problems(env: SlackEnv) -> list[dict[str, Any]]:
    checks = [
        "SELECT 'member' AS what, conversation_id AS id FROM members "
        "WHERE conversation_id NOT IN (SELECT id FROM conversations) OR user_id NOT IN (SELECT id FROM users)",
        "SELECT 'message', ts FROM messages WHERE conversation_id NOT IN (SELECT id FROM conversations) "
        "OR user_id NOT IN (SELECT id FROM users)",
        "SELECT 'reply', r.ts FROM messages r LEFT JOIN messages p ON p.ts = r.thread_ts "
        "WHERE r.thread_ts IS NOT NULL AND (p.ts IS NULL OR p.thread_ts IS NOT NULL "
        "OR p.conversation_id != r.conversation_id OR p.ts >= r.ts)",
        "SELECT 'reaction', message_ts FROM reactions WHERE message_ts NOT IN (SELECT ts FROM messages) "
        "OR user_id NOT IN (SELECT id FROM users)",
        "SELECT 'dm', c.id FROM conversations c WHERE kind = 'dm' "
        "AND (SELECT count(*) FROM members m WHERE m.conversation_id = c.id) != 2",
    ]
    return [row for sql in checks for row in env.query(sql)]


@pytest.mark.parametrize("name", ["acme", "globex"])
def test_artifacts_are_consistent(name: str) -> None:
    env = SlackEnv()
    env.load(SlackEnv.find_artifact(name))
    assert referential_problems(env) == []


def test_globex_is_large(globex: SlackEnv) -> None:
    counts = {table: len(rows) for table, rows in globex.export().items()}
    assert counts["messages"] == 10_000
    assert counts["users"] >= 50
    assert 20 <= globex.query("SELECT count(*) AS n FROM conversations WHERE kind != 'dm'")[0]["n"] <= 25
    assert globex.query("SELECT count(*) AS n FROM messages WHERE thread_ts IS NOT NULL")[0]["n"] > 1_000
    assert counts["reactions"] > 1_000
    assert (
        globex.query("SELECT count(*) AS n FROM users WHERE email LIKE '%@globex.example'")[0]["n"] == counts["users"]
    )


def test_globex_search_returns_relevant_hits(globex: SlackEnv, ok) -> None:
    found = ok(globex, "search_messages", query="postgres failover", limit=50)
    assert found["total"] >= 20
    for match in found["matches"]:
        text = match["text"].lower()
        assert "postgres" in text and "failover" in text
    visible = {c["id"] for c in ok(globex, "list_channels", include_archived=True)}
    assert {m["channel"] for m in found["matches"]} <= visible | {d["channel"] for d in ok(globex, "list_dms")}
    backend = ok(globex, "search_messages", query="failover", channel="eng-backend", limit=100)
    assert backend["total"] > 0 and {m["channel_name"] for m in backend["matches"]} == {"eng-backend"}


def test_globex_search_skips_private_channels_you_are_not_in(globex: SlackEnv, ok) -> None:
    leadership = globex.query("SELECT id FROM conversations WHERE name = 'leadership'")[0]["id"]
    insider = globex.query("SELECT user_id FROM members WHERE conversation_id = ? LIMIT 1", (leadership,))[0]
    assert ok(globex, "search_messages", query="board deck")["total"] == 0  # U_SUPPORT is not in #leadership
    as_insider = globex.fork()
    as_insider.settings = SlackSettings(user_id=insider["user_id"])
    hits = ok(as_insider, "search_messages", query="board deck", limit=100)["matches"]
    assert hits and {m["channel"] for m in hits} == {leadership}


def test_like_fallback_agrees_with_fts(globex: SlackEnv, ok) -> None:
    """Without FTS5 search falls back to LIKE; for whole words both find the same messages."""

    class LikeSlackEnv(SlackEnv):
        schema = BASE_SCHEMA

    plain = LikeSlackEnv()
    plain.load(SlackEnv.find_artifact("globex"))
    assert not plain._has_search_index()
    for query in ("failover", "Initech SSO", "espresso", '"expired TLS"'):
        fts = ok(globex, "search_messages", query=query, limit=100)
        like = ok(plain, "search_messages", query=query, limit=100)
        assert fts["total"] == like["total"] > 0, query
        if fts["total"] <= 100:  # beyond one page the two rank differently (BM25 vs newest first)
            assert {m["id"] for m in fts["matches"]} == {m["id"] for m in like["matches"]}


def test_globex_snapshot_restore_and_fork_after_calls(globex: SlackEnv, ok) -> None:
    env = globex.fork()
    from datetime import UTC, datetime

    class Fixed:
        def now(self) -> datetime:
            return datetime(2026, 12, 1, tzinfo=UTC)

    env.clock = Fixed()
    snap = env.snapshot()
    loaded = env.export()
    posted = ok(env, "post_message", channel="incidents", text="INC-1000: quokka outage resolved")
    twin = env.fork()
    assert twin.export() == env.export()
    assert ok(twin, "search_messages", query="quokka")["matches"][0]["id"] == posted["id"]
    env.restore(snap)
    assert env.export() == loaded
    assert ok(env, "search_messages", query="quokka")["total"] == 0
    assert ok(twin, "search_messages", query="quokka")["total"] == 1


def load_generator() -> Any:
    return load_file_module(GENERATOR, "slack_generate_artifacts")


def test_generator_reproduces_the_packaged_files() -> None:
    generator = load_generator()
    paths = SlackEnv.artifact_paths()
    assert json.loads(paths["acme"].read_text(encoding="utf-8")) == generator.build_acme()
    packed = json.dumps(generator.build_globex(), sort_keys=True, separators=(",", ":")).encode()
    assert gzip.compress(packed, compresslevel=9, mtime=0) == paths["globex"].read_bytes()
