"""Mail search: a small query language over one mailbox, ranked by where the words occur.

Plain words and "quoted phrases" must all occur (case-insensitive) in the subject, body, sender,
recipients or an attachment file name. Operators narrow further: `from:`, `to:`, `subject:`,
`label:`, `is:unread` / `is:read`, `has:attachment`. Ranking puts subject hits above body hits and,
among equals, newer mail first, so results are deterministic.
"""

from __future__ import annotations

import re
import shlex
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from agentenv_runtime import ToolError

OPERATORS = ("from", "to", "subject", "label", "is", "has")
MAX_QUERY_CHARS = 500
MAX_QUERY_PARTS = 32
"""Words, phrases and operators in one query: SQLite refuses expressions deeper than 1,000 nodes, and a
many-word search is never what a person types."""


@dataclass
class ParsedQuery:
    terms: list[str] = field(default_factory=list)
    senders: list[str] = field(default_factory=list)
    recipients: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    is_read: bool | None = None
    has_attachment: bool = False


def parse_query(query: str) -> ParsedQuery:
    """Split a query into words, phrases and operators; a bad operator value is a ToolError on `query`."""
    try:
        tokens = shlex.split(query)
    except ValueError:
        tokens = query.replace('"', " ").split()  # an unbalanced quote: fall back to plain words
    if len(tokens) > MAX_QUERY_PARTS:
        raise ToolError(
            f"query has {len(tokens)} words, phrases and operators; use at most {MAX_QUERY_PARTS}", field="query"
        )
    parsed = ParsedQuery()
    for token in tokens:
        name, sep, value = token.partition(":")
        name = name.lower()
        if not sep or name not in OPERATORS or not value:
            parsed.terms.append(token)
        elif name == "from":
            parsed.senders.append(value)
        elif name == "to":
            parsed.recipients.append(value)
        elif name == "subject":
            parsed.subjects.append(value)
        elif name == "label":
            parsed.labels.append(value.lower())
        elif name == "is":
            if value.lower() not in ("read", "unread"):
                raise ToolError(f"unknown 'is:{value}'; use is:unread or is:read", field="query")
            parsed.is_read = value.lower() == "read"
        elif name == "has":
            if value.lower() not in ("attachment", "attachments"):
                raise ToolError(f"unknown 'has:{value}'; use has:attachment", field="query")
            parsed.has_attachment = True
    return parsed


def _like(text: str) -> str:
    return "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"


_TERM_SQL = (
    "(e.subject LIKE ? ESCAPE '\\' OR e.body LIKE ? ESCAPE '\\' OR e.from_address LIKE ? ESCAPE '\\'"
    " OR m.display_name LIKE ? ESCAPE '\\' OR e.to_addresses LIKE ? ESCAPE '\\'"
    " OR e.cc_addresses LIKE ? ESCAPE '\\'"
    " OR EXISTS (SELECT 1 FROM attachments a WHERE a.email_id = e.id AND a.filename LIKE ? ESCAPE '\\'))"
)


def find(db: sqlite3.Connection, mailbox: str, parsed: ParsedQuery, from_address: str | None) -> list[sqlite3.Row]:
    """Every email in `mailbox` that matches, best first."""
    where = ["d.mailbox = ?"]
    params: list[Any] = [mailbox]
    for term in parsed.terms:
        where.append(_TERM_SQL)
        params.extend([_like(term)] * 7)
    for sender in parsed.senders:
        where.append("(e.from_address LIKE ? ESCAPE '\\' OR m.display_name LIKE ? ESCAPE '\\')")
        params.extend([_like(sender)] * 2)
    for recipient in parsed.recipients:
        where.append("(e.to_addresses LIKE ? ESCAPE '\\' OR e.cc_addresses LIKE ? ESCAPE '\\')")
        params.extend([_like(recipient)] * 2)
    for words in parsed.subjects:
        where.append("e.subject LIKE ? ESCAPE '\\'")
        params.append(_like(words))
    for label in parsed.labels:
        where.append(
            "EXISTS (SELECT 1 FROM labels l WHERE l.mailbox = d.mailbox AND l.email_id = e.id AND l.label = ?)"
        )
        params.append(label)
    if parsed.is_read is not None:
        where.append("d.is_read = ?")
        params.append(int(parsed.is_read))
    if parsed.has_attachment:
        where.append("EXISTS (SELECT 1 FROM attachments a WHERE a.email_id = e.id)")
    if from_address:
        where.append("e.from_address = ?")
        params.append(from_address)
    rows = db.execute(
        "SELECT e.rowid AS seq, e.*, m.display_name AS from_name FROM deliveries d"
        " JOIN emails e ON e.id = d.email_id LEFT JOIN mailboxes m ON m.address = e.from_address"
        f" WHERE {' AND '.join(where)}",
        params,
    ).fetchall()
    return sorted(rows, key=lambda row: (-score(row, parsed), _negate(row["sent_at"]), -row["seq"]))


def score(row: sqlite3.Row, parsed: ParsedQuery) -> int:
    """Subject hits weigh most, then sender, then how often the body mentions each word."""
    subject, body = row["subject"].lower(), row["body"].lower()
    sender = f"{row['from_address']} {row['from_name'] or ''}".lower()
    total = 0
    for term in [*parsed.terms, *parsed.subjects]:
        needle = term.lower()
        total += 5 * (needle in subject) + 2 * (needle in sender) + min(body.count(needle), 5)
    return total


def _negate(text: str) -> tuple[int, ...]:
    """Sort key that orders ISO timestamps newest first inside an ascending sort."""
    return tuple(-ord(ch) for ch in text)
