"""The email app's tables and the row-level operations the tools share.

One `emails` row is one message as sent. Each mailbox that holds the message (the sender's and every
recipient's) has its own `deliveries` row (read flag) and `labels` rows, so reading or labelling a
message in one mailbox never changes what another mailbox sees, as with real mail.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from agentenv_runtime import ToolError

from agentenv_email.arguments import SYSTEM_LABELS

SCHEMA = """
CREATE TABLE mailboxes (
    address      TEXT PRIMARY KEY,          -- lower-case email address
    display_name TEXT NOT NULL DEFAULT ''
);
CREATE TABLE emails (
    id           TEXT PRIMARY KEY,          -- M-1001
    thread_id    TEXT NOT NULL,             -- TH-1001; a reply keeps its parent's thread
    in_reply_to  TEXT,                      -- the email id this one answers or forwards, if any
    from_address TEXT NOT NULL,
    to_addresses TEXT NOT NULL,             -- JSON array of addresses
    cc_addresses TEXT NOT NULL DEFAULT '[]',-- JSON array of addresses
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    sent_at      TEXT NOT NULL              -- ISO 8601 UTC, trailing Z
);
CREATE INDEX emails_thread ON emails (thread_id);
CREATE TABLE attachments (
    email_id   TEXT NOT NULL,
    position   INTEGER NOT NULL,
    filename   TEXT NOT NULL,
    mime_type  TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    PRIMARY KEY (email_id, position)
);
CREATE TABLE deliveries (
    mailbox  TEXT NOT NULL,                 -- whose copy
    email_id TEXT NOT NULL,
    is_read  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (mailbox, email_id)
);
CREATE INDEX deliveries_email ON deliveries (email_id);
CREATE TABLE labels (
    mailbox  TEXT NOT NULL,
    email_id TEXT NOT NULL,
    label    TEXT NOT NULL,                 -- inbox, sent, archive or a user label
    PRIMARY KEY (mailbox, email_id, label)
);
"""

SNIPPET_CHARS = 120


def iso(moment: datetime) -> str:
    """The app's one timestamp format: UTC, seconds, trailing `Z` (sorts as text)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def label_order(label: str) -> tuple[int, str]:
    """System labels first in their fixed order, then user labels alphabetically."""
    return (SYSTEM_LABELS.index(label), "") if label in SYSTEM_LABELS else (len(SYSTEM_LABELS), label)


def snippet(text: str, around: str | None = None) -> str:
    """A one-line preview of a body, centred on `around` when it occurs."""
    flat = " ".join(text.split())
    start = 0
    if around:
        hit = flat.lower().find(around.lower())
        if hit > SNIPPET_CHARS // 3:
            start = hit - SNIPPET_CHARS // 3
    piece = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(flat) else "")


def not_found(field: str, message: str) -> ToolError:
    return ToolError(message, code="not_found", field=field)


class MailStore:
    """Row-level operations on one env's database. Cheap to build; never cache it across a fork."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    # ---- mailboxes ---------------------------------------------------------------------------------
    def mailbox_exists(self, address: str) -> bool:
        return self.db.execute("SELECT 1 FROM mailboxes WHERE address = ?", (address,)).fetchone() is not None

    def ensure_mailbox(self, address: str, display_name: str = "") -> None:
        """Mail to or from a new address opens a mailbox for it, so that person can read and answer."""
        self.db.execute(
            "INSERT OR IGNORE INTO mailboxes (address, display_name) VALUES (?, ?)", (address, display_name)
        )

    def display_name(self, address: str) -> str:
        row = self.db.execute("SELECT display_name FROM mailboxes WHERE address = ?", (address,)).fetchone()
        return row[0] if row else ""

    # ---- ids ---------------------------------------------------------------------------------------
    def next_email_id(self) -> str:
        row = self.db.execute("SELECT MAX(CAST(SUBSTR(id, 3) AS INTEGER)) FROM emails").fetchone()
        return f"M-{(row[0] or 1000) + 1}"

    def next_thread_id(self) -> str:
        row = self.db.execute("SELECT MAX(CAST(SUBSTR(thread_id, 4) AS INTEGER)) FROM emails").fetchone()
        return f"TH-{(row[0] or 1000) + 1}"

    # ---- emails ------------------------------------------------------------------------------------
    def email(self, email_id: str, field: str = "email_id") -> sqlite3.Row:
        row: sqlite3.Row | None = self.db.execute(
            "SELECT rowid AS seq, * FROM emails WHERE id = ?", (email_id,)
        ).fetchone()
        if row is None:
            raise not_found(field, f"no email {email_id!r}; use list_emails or search_emails to find ids")
        return row

    def delivery(self, mailbox: str, email_id: str) -> sqlite3.Row | None:
        found: sqlite3.Row | None = self.db.execute(
            "SELECT * FROM deliveries WHERE mailbox = ? AND email_id = ?", (mailbox, email_id)
        ).fetchone()
        return found

    def require_copy(self, mailbox: str, email_id: str, field: str = "email_id") -> sqlite3.Row:
        """The email row, if `mailbox` holds a copy of it (not_found otherwise)."""
        row = self.email(email_id, field)
        if self.delivery(mailbox, email_id) is None:
            raise not_found(field, f"email {email_id} is not in mailbox {mailbox}; list_emails shows what it holds")
        return row

    def insert_email(
        self,
        *,
        from_address: str,
        to: Sequence[str],
        cc: Sequence[str],
        subject: str,
        body: str,
        sent_at: str,
        thread_id: str | None = None,
        in_reply_to: str | None = None,
        attachments: Iterable[dict[str, Any]] = (),
    ) -> str:
        """Store a sent message and deliver it: `sent` for the sender, unread in each recipient's inbox."""
        email_id = self.next_email_id()
        thread_id = thread_id or self.next_thread_id()
        self.db.execute(
            "INSERT INTO emails (id, thread_id, in_reply_to, from_address, to_addresses, cc_addresses,"
            " subject, body, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                email_id,
                thread_id,
                in_reply_to,
                from_address,
                json.dumps(list(to)),
                json.dumps(list(cc)),
                subject,
                body,
                sent_at,
            ),
        )
        for position, item in enumerate(attachments, start=1):
            self.db.execute(
                "INSERT INTO attachments (email_id, position, filename, mime_type, size_bytes) VALUES (?, ?, ?, ?, ?)",
                (email_id, position, item["filename"], item["mime_type"], item["size_bytes"]),
            )
        self.ensure_mailbox(from_address)
        self.db.execute(
            "INSERT INTO deliveries (mailbox, email_id, is_read) VALUES (?, ?, 1)", (from_address, email_id)
        )
        self.db.execute("INSERT INTO labels VALUES (?, ?, 'sent')", (from_address, email_id))
        for address in dict.fromkeys([*to, *cc]):
            self.ensure_mailbox(address)
            self.db.execute(
                "INSERT OR IGNORE INTO deliveries (mailbox, email_id, is_read) VALUES (?, ?, 0)",
                (address, email_id),
            )
            self.db.execute("INSERT INTO labels VALUES (?, ?, 'inbox')", (address, email_id))
        return email_id

    # ---- labels and flags --------------------------------------------------------------------------
    def labels(self, mailbox: str, email_id: str) -> list[str]:
        rows = self.db.execute(
            "SELECT label FROM labels WHERE mailbox = ? AND email_id = ?", (mailbox, email_id)
        ).fetchall()
        return sorted((row[0] for row in rows), key=label_order)

    def add_label(self, mailbox: str, email_id: str, label: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO labels VALUES (?, ?, ?)", (mailbox, email_id, label))

    def remove_label(self, mailbox: str, email_id: str, label: str) -> None:
        self.db.execute(
            "DELETE FROM labels WHERE mailbox = ? AND email_id = ? AND label = ?", (mailbox, email_id, label)
        )

    def set_read(self, mailbox: str, email_id: str, is_read: bool) -> None:
        self.db.execute(
            "UPDATE deliveries SET is_read = ? WHERE mailbox = ? AND email_id = ?",
            (int(is_read), mailbox, email_id),
        )

    def attachments(self, email_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT filename, mime_type, size_bytes FROM attachments WHERE email_id = ? ORDER BY position",
            (email_id,),
        )
        return [dict(row) for row in rows]

    # ---- views -------------------------------------------------------------------------------------
    def view(self, row: sqlite3.Row, mailbox: str, *, full: bool, around: str | None = None) -> dict[str, Any]:
        """An email as `mailbox` sees it: full (with body and attachments) or a list summary."""
        delivery = self.delivery(mailbox, row["id"])
        view: dict[str, Any] = {
            "id": row["id"],
            "thread_id": row["thread_id"],
            "in_reply_to": row["in_reply_to"],
            "from_address": row["from_address"],
            "from_name": self.display_name(row["from_address"]),
            "to": json.loads(row["to_addresses"]),
            "cc": json.loads(row["cc_addresses"]),
            "subject": row["subject"],
            "sent_at": row["sent_at"],
            "mailbox": mailbox,
            "labels": self.labels(mailbox, row["id"]),
            "is_read": bool(delivery["is_read"]) if delivery else None,
        }
        if full:
            view["body"] = row["body"]
            view["attachments"] = self.attachments(row["id"])
        else:
            view["snippet"] = snippet(row["body"], around)
            view["attachment_count"] = self.db.execute(
                "SELECT COUNT(*) FROM attachments WHERE email_id = ?", (row["id"],)
            ).fetchone()[0]
        return view
