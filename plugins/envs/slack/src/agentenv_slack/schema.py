"""The workspace's tables, plus an FTS5 index over message text when the local SQLite has FTS5.

The search index lives in the schema (kept current by triggers) so `snapshot()`/`fork()` carry it
with everything else; `export()` leaves it out because it is derived from `messages`.
"""

from __future__ import annotations

import sqlite3

BASE_SCHEMA = """
CREATE TABLE users (
    id          TEXT PRIMARY KEY,            -- "U_SAM"
    name        TEXT NOT NULL UNIQUE,        -- handle, "sam"
    real_name   TEXT NOT NULL,
    email       TEXT UNIQUE,
    title       TEXT NOT NULL DEFAULT '',
    is_bot      INTEGER NOT NULL DEFAULT 0,
    deactivated INTEGER NOT NULL DEFAULT 0
);

-- Channels and DMs are both conversations; a DM has no name and exactly two members.
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,             -- "C_SUPPORT", "C0004", "D0001"
    kind       TEXT NOT NULL CHECK (kind IN ('public', 'private', 'dm')),
    name       TEXT,
    topic      TEXT NOT NULL DEFAULT '',
    purpose    TEXT NOT NULL DEFAULT '',
    created_by TEXT REFERENCES users(id),
    created_at TEXT NOT NULL,                -- ISO 8601 UTC, trailing Z
    archived   INTEGER NOT NULL DEFAULT 0,
    CHECK ((kind = 'dm') = (name IS NULL))
);
CREATE UNIQUE INDEX conversations_by_name ON conversations(name) WHERE name IS NOT NULL;

CREATE TABLE members (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX members_by_user ON members(user_id);

-- `ts` is Slack's "seconds.micros" id, unique across the workspace; a reply names its parent in thread_ts.
CREATE TABLE messages (
    ts              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    text            TEXT NOT NULL,
    thread_ts       TEXT REFERENCES messages(ts)
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, thread_ts, ts);
CREATE INDEX messages_by_thread ON messages(thread_ts, ts);
CREATE INDEX messages_by_user ON messages(user_id);

CREATE TABLE reactions (
    message_ts TEXT NOT NULL REFERENCES messages(ts),
    emoji      TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users(id),
    PRIMARY KEY (message_ts, emoji, user_id)
);
"""

SEARCH_TABLE = "message_search"

FTS_SCHEMA = f"""
CREATE VIRTUAL TABLE {SEARCH_TABLE} USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
    INSERT INTO {SEARCH_TABLE}(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
    DELETE FROM {SEARCH_TABLE} WHERE rowid = old.rowid;
END;
CREATE TRIGGER messages_search_update AFTER UPDATE OF text ON messages BEGIN
    UPDATE {SEARCH_TABLE} SET text = new.text WHERE rowid = new.rowid;
END;
"""


def fts5_available() -> bool:
    """Whether this Python's SQLite was built with FTS5 (almost all are; search falls back to LIKE)."""
    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    return True


SCHEMA = BASE_SCHEMA + (FTS_SCHEMA if fts5_available() else "")
