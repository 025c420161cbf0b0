"""Lookups, rules and views shared by the Slack tools.

`Workspace` is a mixin over `Env`'s `self.db`: it resolves what callers name (ids, `#names`, emails,
`@handles`), enforces who may read and write where, writes messages, and renders rows as the dicts
tools return. Tools in `env.py` stay short by leaning on it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agentenv_runtime import Env, ToolError

from agentenv_slack.schema import SEARCH_TABLE
from agentenv_slack.timestamps import iso, next_ts, ts_to_iso

MAX_TEXT = 40_000


class Workspace(Env):
    """State access for `SlackEnv` (no tools, no name of its own, so it is never registered)."""

    settings: Any

    # ---- who and where -----------------------------------------------------------------------------
    def _me(self) -> sqlite3.Row:
        """The acting user (settings.user_id); tools act as this person."""
        row: sqlite3.Row | None = self.db.execute(
            "SELECT * FROM users WHERE id = ?", (self.settings.user_id,)
        ).fetchone()
        if row is None:
            raise ToolError(
                f"settings.user_id {self.settings.user_id!r} is not a user of this workspace; "
                "load an artifact that has this user or change settings.user_id",
                code="not_found",
                field="user_id",
            )
        return row

    def _user(self, ref: str, field: str) -> sqlite3.Row:
        """A user by id (U_SAM), email (sam@acme.example) or handle (@sam / sam)."""
        key = ref.strip().removeprefix("@")
        row: sqlite3.Row | None = self.db.execute(
            "SELECT * FROM users WHERE id = ?1 OR lower(email) = lower(?1) OR lower(name) = lower(?1) "
            "ORDER BY id = ?1 DESC LIMIT 1",
            (key,),
        ).fetchone()
        if row is None:
            raise ToolError(
                f"{field}: no user {ref!r}; give a user id (U_SAM), an email or a handle (see list_users)",
                code="not_found",
                field=field,
            )
        return row

    def _active_user(self, ref: str, field: str) -> sqlite3.Row:
        user = self._user(ref, field)
        if user["deactivated"]:
            raise ToolError(
                f"{field}: user {user['id']} ({user['real_name']}) is deactivated and cannot take part",
                code="deactivated",
                field=field,
            )
        return user

    def _conversation(self, ref: str, field: str) -> sqlite3.Row:
        """A channel by id or name (`#support` or `support`), or one of the acting user's DMs by id."""
        key = ref.strip()
        row: sqlite3.Row | None = None
        if not key.startswith("#"):
            row = self.db.execute("SELECT * FROM conversations WHERE id = ?", (key,)).fetchone()
        if row is None:
            name = key.removeprefix("#").lower()
            row = self.db.execute("SELECT * FROM conversations WHERE name = ?", (name,)).fetchone()
        if row is not None and row["kind"] == "dm" and not self._is_member(row["id"], self._me()["id"]):
            row = None  # other people's DMs do not exist as far as the acting user can tell
        if row is None:
            raise ToolError(
                f"{field}: no channel {ref!r}; give a channel id or name (see list_channels)",
                code="not_found",
                field=field,
            )
        return row

    def _is_member(self, conversation_id: str, user_id: str) -> bool:
        found = self.db.execute(
            "SELECT 1 FROM members WHERE conversation_id = ? AND user_id = ?", (conversation_id, user_id)
        ).fetchone()
        return found is not None

    def _require_readable(self, conv: sqlite3.Row, field: str, user_id: str | None = None) -> None:
        """Private channels are readable by members only; public channels and own DMs by anyone."""
        user_id = user_id or self._me()["id"]
        if conv["kind"] == "private" and not self._is_member(conv["id"], user_id):
            raise ToolError(
                f"{field}: #{conv['name']} is a private channel and {user_id} is not a member; "
                "ask a member to invite you (invite_to_channel)",
                code="not_member",
                field=field,
            )

    def _require_writable(self, conv: sqlite3.Row, field: str, user_id: str | None = None) -> None:
        """Archived channels are read-only; private channels take posts from members only."""
        if conv["archived"]:
            raise ToolError(
                f"{field}: #{conv['name']} is archived and read-only; post in an active channel (see list_channels)",
                code="archived",
                field=field,
            )
        self._require_readable(conv, field, user_id)

    def _message(self, ts: str, field: str) -> sqlite3.Row:
        """A message the acting user can see, by its ts id."""
        row: sqlite3.Row | None = self.db.execute("SELECT * FROM messages WHERE ts = ?", (ts,)).fetchone()
        conv = None
        if row is not None:
            conv = self.db.execute("SELECT * FROM conversations WHERE id = ?", (row["conversation_id"],)).fetchone()
            if conv["kind"] == "dm" and not self._is_member(conv["id"], self._me()["id"]):
                row = None
        if row is None or conv is None:
            raise ToolError(
                f"{field}: no message {ts!r}; use the `id` of a message from list_messages, "
                "get_thread, read_dm or search_messages",
                code="not_found",
                field=field,
            )
        self._require_readable(conv, field)
        return row

    # ---- writing -----------------------------------------------------------------------------------
    @contextmanager
    def _atomic(self) -> Iterator[None]:
        """All-or-nothing for writes made outside `Env.call` (which has its own savepoint)."""
        self.db.execute("SAVEPOINT slack_write")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK TO slack_write")
            self.db.execute("RELEASE slack_write")
            raise
        self.db.execute("RELEASE slack_write")

    @staticmethod
    def _clean_text(text: str) -> str:
        cleaned = text.strip()
        if not cleaned:
            raise ToolError("text: the message is empty; write some text", code="empty_text", field="text")
        if len(cleaned) > MAX_TEXT:
            raise ToolError(
                f"text: {len(cleaned):,} characters is over Slack's {MAX_TEXT:,}-character limit; "
                "shorten it or split it into several messages",
                code="text_too_long",
                field="text",
            )
        return cleaned

    def _insert_message(self, conversation_id: str, user_id: str, text: str, thread_ts: str | None) -> str:
        latest = self.db.execute("SELECT max(ts) FROM messages").fetchone()[0]
        ts = next_ts(self.now(), latest)
        self.db.execute(
            "INSERT INTO messages (ts, conversation_id, user_id, text, thread_ts) VALUES (?, ?, ?, ?, ?)",
            (ts, conversation_id, user_id, text, thread_ts),
        )
        return ts

    def _new_conversation_id(self, prefix: str) -> str:
        """`C0004`, `D0001`, …: the next free number, so ids are deterministic."""
        count = self.db.execute("SELECT count(*) FROM conversations WHERE substr(id, 1, 1) = ?", (prefix,)).fetchone()[
            0
        ]
        number = count + 1
        while self.db.execute("SELECT 1 FROM conversations WHERE id = ?", (f"{prefix}{number:04d}",)).fetchone():
            number += 1
        return f"{prefix}{number:04d}"

    def _dm_between(self, a: str, b: str) -> sqlite3.Row | None:
        found: sqlite3.Row | None = self.db.execute(
            "SELECT c.* FROM conversations c WHERE c.kind = 'dm' "
            "AND EXISTS (SELECT 1 FROM members m WHERE m.conversation_id = c.id AND m.user_id = ?) "
            "AND EXISTS (SELECT 1 FROM members m WHERE m.conversation_id = c.id AND m.user_id = ?) "
            "ORDER BY c.id LIMIT 1",
            (a, b),
        ).fetchone()
        return found

    def _open_dm(self, a: str, b: str) -> str:
        """The DM conversation between two users, created on first use."""
        existing = self._dm_between(a, b)
        if existing is not None:
            return str(existing["id"])
        dm_id = self._new_conversation_id("D")
        self.db.execute(
            "INSERT INTO conversations (id, kind, name, created_by, created_at) VALUES (?, 'dm', NULL, ?, ?)",
            (dm_id, a, iso(self.now())),
        )
        self.db.executemany("INSERT INTO members (conversation_id, user_id) VALUES (?, ?)", [(dm_id, a), (dm_id, b)])
        return dm_id

    def _has_search_index(self) -> bool:
        found = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (SEARCH_TABLE,)).fetchone()
        return found is not None

    # ---- views -------------------------------------------------------------------------------------
    def _user_view(self, user: sqlite3.Row) -> dict[str, Any]:
        return {
            "id": user["id"],
            "name": user["name"],
            "real_name": user["real_name"],
            "email": user["email"],
            "title": user["title"],
            "is_bot": bool(user["is_bot"]),
            "deactivated": bool(user["deactivated"]),
        }

    def _channel_view(self, conv: sqlite3.Row) -> dict[str, Any]:
        me = self._me()["id"]
        member_count = self.db.execute(
            "SELECT count(*) FROM members WHERE conversation_id = ?", (conv["id"],)
        ).fetchone()[0]
        return {
            "id": conv["id"],
            "name": conv["name"],
            "kind": conv["kind"],
            "topic": conv["topic"],
            "purpose": conv["purpose"],
            "archived": bool(conv["archived"]),
            "member_count": member_count,
            "is_member": self._is_member(conv["id"], me),
        }

    def _messages_view(self, rows: Sequence[sqlite3.Row]) -> list[dict[str, Any]]:
        """Messages as tools return them, with author names, reactions and reply counts (batched)."""
        if not rows:
            return []
        stamps = [row["ts"] for row in rows]
        marks = ", ".join("?" * len(stamps))
        names = {
            r["id"]: r["real_name"]
            for r in self.db.execute(
                f"SELECT id, real_name FROM users WHERE id IN ({marks})",
                [row["user_id"] for row in rows],
            )
        }
        channels = {
            r["id"]: r["name"]
            for r in self.db.execute(
                f"SELECT id, name FROM conversations WHERE id IN ({marks})",
                [row["conversation_id"] for row in rows],
            )
        }
        reactions: dict[str, dict[str, list[str]]] = {}
        for r in self.db.execute(
            f"SELECT message_ts, emoji, user_id FROM reactions WHERE message_ts IN ({marks}) ORDER BY rowid",
            stamps,
        ):
            reactions.setdefault(r["message_ts"], {}).setdefault(r["emoji"], []).append(r["user_id"])
        replies = {
            r["thread_ts"]: (r["n"], r["latest"])
            for r in self.db.execute(
                f"SELECT thread_ts, count(*) AS n, max(ts) AS latest FROM messages "
                f"WHERE thread_ts IN ({marks}) GROUP BY thread_ts",
                stamps,
            )
        }
        views = []
        for row in rows:
            count, latest = replies.get(row["ts"], (0, None))
            views.append(
                {
                    "id": row["ts"],
                    "channel": row["conversation_id"],
                    "channel_name": channels.get(row["conversation_id"]),
                    "user": row["user_id"],
                    "user_name": names.get(row["user_id"]),
                    "text": row["text"],
                    "time": ts_to_iso(row["ts"]),
                    "thread_id": row["thread_ts"],
                    "reply_count": count,
                    "latest_reply": latest,
                    "reactions": [
                        {"emoji": emoji, "count": len(users), "users": users}
                        for emoji, users in reactions.get(row["ts"], {}).items()
                    ],
                }
            )
        return views

    def _message_view(self, ts: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM messages WHERE ts = ?", (ts,)).fetchone()
        return self._messages_view([row])[0]

    def _page(self, conversation_id: str, limit: int, before: str | None) -> dict[str, Any]:
        """The newest `limit` top-level messages before `before`, oldest first, with a cursor for more."""
        rows = self.db.execute(
            "SELECT * FROM messages WHERE conversation_id = ?1 AND thread_ts IS NULL "
            "AND (?2 IS NULL OR ts < ?2) ORDER BY ts DESC LIMIT ?3",
            (conversation_id, before, limit + 1),
        ).fetchall()
        has_more = len(rows) > limit
        page = list(reversed(rows[:limit]))
        return {
            "messages": self._messages_view(page),
            "has_more": has_more,
            "next_before": page[0]["ts"] if has_more else None,
        }
