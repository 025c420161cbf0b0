"""The `email` env: mailboxes, threaded messages, read flags, labels, attachment metadata and search.

The agent acts as one mailbox, `Settings.address` (support@acme.example by default): everything it
sends is from that address. Reading and labelling take an optional `mailbox` so a delegate can look
after another mailbox too; each mailbox keeps its own read flags and labels.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, ClassVar

from agentenv.contracts import Message
from agentenv_runtime import Env, ToolError, tool
from pydantic import BaseModel, ConfigDict, Field

from agentenv_email import search
from agentenv_email.arguments import (
    ADDRESS_RE,
    MAX_ATTACHMENT_BYTES,
    MAX_RECIPIENTS,
    SYSTEM_LABELS,
    Address,
    AddressList,
    Attachments,
    Body,
    EmailId,
    LabelName,
    Limit,
    Offset,
    OptionalAddressList,
    Subject,
    ThreadId,
)
from agentenv_email.mailstore import SCHEMA, MailStore, iso, label_order, not_found, snippet

MESSAGE_TOOLS = ("send_email", "reply_email", "forward_email")


class EmailSettings(BaseModel):
    """Who the agent is in this app."""

    model_config = ConfigDict(extra="forbid")

    address: Address = Field(
        default="support@acme.example", description="The acting mailbox: all mail the agent sends is from it."
    )
    display_name: str = Field(
        default="Acme Support", description="Name given to the acting mailbox if the data has none for it."
    )


def reply_subject(subject: str) -> str:
    return subject if re.match(r"\s*re:", subject, re.IGNORECASE) else f"Re: {subject}".rstrip()


def forward_subject(subject: str) -> str:
    return subject if re.match(r"\s*(fwd?):", subject, re.IGNORECASE) else f"Fwd: {subject}".rstrip()


class EmailEnv(Env[EmailSettings]):
    """Simulated email: mailboxes, threads, labels, attachments (metadata only) and search."""

    name = "email"
    description = "Email: mailboxes, threaded messages, read/unread, labels, attachment metadata and search."
    schema = SCHEMA
    Settings: ClassVar[type[BaseModel]] = EmailSettings

    # ---- helpers -----------------------------------------------------------------------------------
    @property
    def store(self) -> MailStore:
        return MailStore(self.db)  # built per use: a fork gets a new `db`

    @property
    def me(self) -> str:
        return self.settings.address

    def _mailbox(self, mailbox: str | None) -> str:
        """The mailbox a call works on: the acting one by default, or an existing one named."""
        if mailbox is None or mailbox == self.me:
            return self.me
        if not self.store.mailbox_exists(mailbox):
            raise not_found("mailbox", f"no mailbox {mailbox!r}; list_mailboxes shows the addresses")
        return mailbox

    def _stamp(self) -> str:
        return iso(self.now())

    def _check_outgoing(
        self, to: list[str], cc: list[str], attachments: list[dict[str, Any]], recipients_field: str = "to"
    ) -> None:
        """Rules every outgoing message obeys: distinct recipients, at most 50, attachments ≤ 25 MB."""
        seen: set[str] = set()
        for address in [*to, *cc]:
            if address in seen:
                raise ToolError(
                    f"{address} is listed more than once in to/cc; name each recipient once",
                    field=recipients_field,
                )
            seen.add(address)
        if len(seen) > MAX_RECIPIENTS:
            raise ToolError(
                f"{len(seen)} recipients (to + cc); at most {MAX_RECIPIENTS} per email, so split the mailing",
                field=recipients_field,
            )
        total = sum(item["size_bytes"] for item in attachments)
        if total > MAX_ATTACHMENT_BYTES:
            raise ToolError(
                f"attachments total {total} bytes ({total / 1048576:.1f} MB); the limit is 25 MB"
                f" ({MAX_ATTACHMENT_BYTES} bytes): send fewer or smaller files",
                field="attachments",
            )

    def _send(self, **fields: Any) -> dict[str, Any]:
        store = self.store
        store.ensure_mailbox(self.me, self.settings.display_name)
        email_id = store.insert_email(from_address=self.me, sent_at=self._stamp(), **fields)
        return store.view(store.email(email_id), self.me, full=True)

    def _summaries(self, rows: list[Any], mailbox: str, around: str | None = None) -> list[dict[str, Any]]:
        return [self.store.view(row, mailbox, full=False, around=around) for row in rows]

    # ---- mailboxes and labels ----------------------------------------------------------------------
    @tool(read_only=True)
    def list_mailboxes(self) -> list[dict[str, Any]]:
        """List every mailbox (address and display name) with its message and unread counts."""
        rows = self.db.execute(
            "SELECT m.address, m.display_name, COUNT(d.email_id) AS total,"
            " COALESCE(SUM(d.is_read = 0), 0) AS unread FROM mailboxes m"
            " LEFT JOIN deliveries d ON d.mailbox = m.address GROUP BY m.address ORDER BY m.address"
        ).fetchall()
        return [{**dict(row), "is_acting": row["address"] == self.me} for row in rows]

    @tool(read_only=True)
    def list_labels(self, mailbox: Address | None = None) -> list[dict[str, Any]]:
        """List the labels of a mailbox (system labels inbox, sent, archive first) with counts.

        Args:
            mailbox: Whose labels; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        rows = self.db.execute(
            "SELECT l.label, COUNT(*) AS total, SUM(d.is_read = 0) AS unread FROM labels l"
            " JOIN deliveries d ON d.mailbox = l.mailbox AND d.email_id = l.email_id"
            " WHERE l.mailbox = ? GROUP BY l.label",
            (owner,),
        ).fetchall()
        counts = {row["label"]: (row["total"], row["unread"]) for row in rows}
        names = sorted(set(SYSTEM_LABELS) | set(counts), key=label_order)
        return [
            {
                "label": name,
                "system": name in SYSTEM_LABELS,
                "total": counts.get(name, (0, 0))[0],
                "unread": counts.get(name, (0, 0))[1],
            }
            for name in names
        ]

    # ---- reading -----------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_emails(
        self,
        mailbox: Address | None = None,
        label: LabelName | None = None,
        unread_only: bool = False,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """List emails in a mailbox, newest first, as summaries (use read_email for the body).

        Args:
            mailbox: Whose mail; defaults to the acting mailbox.
            label: Only emails with this label (e.g. inbox, sent, archive or a user label); default all.
            unread_only: Only emails not yet read in this mailbox.
            limit: At most this many emails (1-100).
            offset: Skip this many of the newest first, to page through.
        """
        owner = self._mailbox(mailbox)
        where, params = ["d.mailbox = ?"], [owner]
        if label is not None:
            known = self.db.execute(
                "SELECT 1 FROM labels WHERE mailbox = ? AND label = ? LIMIT 1", (owner, label)
            ).fetchone()
            if known is None and label not in SYSTEM_LABELS:
                raise not_found("label", f"mailbox {owner} has no label {label!r}; list_labels shows its labels")
            where.append(
                "EXISTS (SELECT 1 FROM labels l WHERE l.mailbox = d.mailbox AND l.email_id = e.id AND l.label = ?)"
            )
            params.append(label)
        if unread_only:
            where.append("d.is_read = 0")
        condition = " AND ".join(where)
        total = self.db.execute(
            f"SELECT COUNT(*) FROM deliveries d JOIN emails e ON e.id = d.email_id WHERE {condition}", params
        ).fetchone()[0]
        rows = self.db.execute(
            "SELECT e.rowid AS seq, e.* FROM deliveries d JOIN emails e ON e.id = d.email_id"
            f" WHERE {condition} ORDER BY e.sent_at DESC, e.rowid DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ).fetchall()
        return {"mailbox": owner, "label": label, "total": total, "emails": self._summaries(rows, owner)}

    @tool
    def read_email(self, email_id: EmailId, mailbox: Address | None = None) -> dict[str, Any]:
        """Open one email (body and attachment list) and mark it read in the mailbox.

        Args:
            email_id: The email's id, e.g. M-1001.
            mailbox: Whose copy to open; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        row = self.store.require_copy(owner, email_id)
        self.store.set_read(owner, email_id, True)
        return self.store.view(row, owner, full=True)

    @tool
    def mark_unread(self, email_id: EmailId, mailbox: Address | None = None) -> dict[str, Any]:
        """Mark an email unread again in the mailbox, e.g. to come back to it later.

        Args:
            email_id: The email's id, e.g. M-1001.
            mailbox: Whose copy; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        row = self.store.require_copy(owner, email_id)
        delivery = self.store.delivery(owner, email_id)
        if delivery is not None and not delivery["is_read"]:
            raise ToolError(f"email {email_id} is already unread in {owner}", field="email_id")
        self.store.set_read(owner, email_id, False)
        return self.store.view(row, owner, full=False)

    @tool(read_only=True)
    def search_emails(
        self,
        query: Annotated[str, Field(max_length=search.MAX_QUERY_CHARS)],
        from_address: Address | None = None,
        mailbox: Address | None = None,
        limit: Limit = 20,
    ) -> dict[str, Any]:
        """Search a mailbox: every word or "quoted phrase" must match; best matches first.

        Words match the subject, body, sender, recipients and attachment names. Operators narrow the
        search: from:, to:, subject:, label:, is:unread, is:read, has:attachment.

        Args:
            query: Words, "phrases" and operators, e.g. 'refund boots from:dana is:unread'.
            from_address: Only emails sent by exactly this address.
            mailbox: Whose mail to search; defaults to the acting mailbox.
            limit: At most this many results (1-100).
        """
        if not query.strip() and from_address is None:
            raise ToolError("query is empty; give words to look for or a from_address", field="query")
        owner = self._mailbox(mailbox)
        parsed = search.parse_query(query)
        rows = search.find(self.db, owner, parsed, from_address)
        around = next(iter(parsed.terms + parsed.subjects), None)
        return {
            "query": query,
            "mailbox": owner,
            "total": len(rows),
            "emails": self._summaries(rows[:limit], owner, around=around),
        }

    # ---- threads -----------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_threads(
        self,
        mailbox: Address | None = None,
        label: LabelName | None = None,
        unread_only: bool = False,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> dict[str, Any]:
        """List conversations in a mailbox, most recent activity first.

        Args:
            mailbox: Whose mail; defaults to the acting mailbox.
            label: Only threads where some email has this label in the mailbox.
            unread_only: Only threads with at least one unread email.
            limit: At most this many threads (1-100).
            offset: Skip this many of the most recent first, to page through.
        """
        owner = self._mailbox(mailbox)
        having = ["1"]
        params: list[Any] = [owner]
        if label is not None:
            having.append(
                "SUM(EXISTS (SELECT 1 FROM labels l WHERE l.mailbox = d.mailbox"
                " AND l.email_id = e.id AND l.label = ?)) > 0"
            )
            params.append(label)
        if unread_only:
            having.append("SUM(d.is_read = 0) > 0")
        grouped = (
            "SELECT e.thread_id, COUNT(*) AS message_count, SUM(d.is_read = 0) AS unread_count,"
            " MAX(e.sent_at) AS last_sent_at, MAX(e.rowid) AS last_seq FROM deliveries d"
            f" JOIN emails e ON e.id = d.email_id WHERE d.mailbox = ? GROUP BY e.thread_id"
            f" HAVING {' AND '.join(having)}"
        )
        total = self.db.execute(f"SELECT COUNT(*) FROM ({grouped})", params).fetchone()[0]
        rows = self.db.execute(
            f"{grouped} ORDER BY last_sent_at DESC, last_seq DESC LIMIT ? OFFSET ?", [*params, limit, offset]
        ).fetchall()
        return {
            "mailbox": owner,
            "total": total,
            "threads": [self._thread_summary(row, owner) for row in rows],
        }

    def _thread_summary(self, row: Any, mailbox: str) -> dict[str, Any]:
        emails = self.db.execute(
            "SELECT e.* FROM deliveries d JOIN emails e ON e.id = d.email_id"
            " WHERE d.mailbox = ? AND e.thread_id = ? ORDER BY e.sent_at, e.rowid",
            (mailbox, row["thread_id"]),
        ).fetchall()
        participants: dict[str, None] = {}
        for email in emails:
            for address in [
                email["from_address"],
                *json.loads(email["to_addresses"]),
                *json.loads(email["cc_addresses"]),
            ]:
                participants[address] = None
        return {
            "thread_id": row["thread_id"],
            "subject": emails[0]["subject"],
            "message_count": row["message_count"],
            "unread_count": row["unread_count"],
            "last_sent_at": row["last_sent_at"],
            "participants": list(participants),
            "latest_email_id": emails[-1]["id"],
            "latest_snippet": snippet(emails[-1]["body"]),
        }

    @tool(read_only=True)
    def get_thread(self, thread_id: ThreadId, mailbox: Address | None = None) -> dict[str, Any]:
        """Show a whole conversation in the mailbox, oldest first, with bodies (does not mark read).

        Args:
            thread_id: The thread's id, e.g. TH-1001 (every email shows its thread_id).
            mailbox: Whose copies; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        if self.db.execute("SELECT 1 FROM emails WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone() is None:
            raise not_found("thread_id", f"no thread {thread_id!r}; list_threads shows thread ids")
        rows = self.db.execute(
            "SELECT e.rowid AS seq, e.* FROM deliveries d JOIN emails e ON e.id = d.email_id"
            " WHERE d.mailbox = ? AND e.thread_id = ? ORDER BY e.sent_at, e.rowid",
            (owner, thread_id),
        ).fetchall()
        if not rows:
            raise not_found("thread_id", f"thread {thread_id} has no emails in mailbox {owner}")
        emails = [self.store.view(row, owner, full=True) for row in rows]
        return {
            "thread_id": thread_id,
            "mailbox": owner,
            "subject": emails[0]["subject"],
            "message_count": len(emails),
            "unread_count": sum(not email["is_read"] for email in emails),
            "emails": emails,
        }

    # ---- sending -----------------------------------------------------------------------------------
    @tool
    def send_email(
        self,
        to: AddressList,
        subject: Subject = "",
        body: Body = "",
        cc: OptionalAddressList | None = None,
        attachments: Attachments | None = None,
    ) -> dict[str, Any]:
        """Send a new email from the acting mailbox, starting a new thread.

        Args:
            to: Recipient addresses (1-50), e.g. ["dana.kim@example.com"].
            subject: Subject line; may be empty only if the body is not.
            body: Plain-text body; may be empty only if the subject is not.
            cc: Carbon-copy addresses; to and cc together at most 50, each address once.
            attachments: File metadata (filename, mime_type, size_bytes), 25 MB in total at most.
        """
        cc = cc or []
        files = [item.model_dump() for item in attachments or []]
        if not subject.strip() and not body.strip():
            raise ToolError("subject and body are both empty; write a subject, a body or both", field="subject")
        self._check_outgoing(to, cc, files)
        return self._send(to=to, cc=cc, subject=subject, body=body, attachments=files)

    @tool
    def reply_email(
        self,
        email_id: EmailId,
        body: Body,
        reply_all: bool = False,
        attachments: Attachments | None = None,
    ) -> dict[str, Any]:
        """Reply in the same thread ("Re: " subject) to an email sent by or to the acting mailbox.

        Replying to a received email goes to its sender; replying to one you sent goes to its recipients.
        With reply_all, everyone else on the email (to and cc, except you) is copied.

        Args:
            email_id: The email to answer, e.g. M-1001.
            body: Plain-text reply; must not be empty.
            reply_all: Also copy every other recipient of the original.
            attachments: File metadata (filename, mime_type, size_bytes), 25 MB in total at most.
        """
        original = self.store.email(email_id)
        sender = original["from_address"]
        to_list: list[str] = json.loads(original["to_addresses"])
        cc_list: list[str] = json.loads(original["cc_addresses"])
        if self.me != sender and self.me not in to_list + cc_list:
            raise ToolError(
                f"email {email_id} was neither sent by nor addressed to {self.me}; you can only reply to"
                " your own conversations (use forward_email to pass it on)",
                field="email_id",
            )
        if not body.strip():
            raise ToolError("body is empty; write the reply text", field="body")
        # Answering someone else's email goes to them; answering your own goes to its recipients again.
        primary = [sender] if sender != self.me else ([a for a in to_list if a != self.me] or to_list)
        copied = [a for a in dict.fromkeys(to_list + cc_list) if a != self.me and a not in primary]
        to, cc = (primary, copied) if reply_all else (primary, [])
        files = [item.model_dump() for item in attachments or []]
        self._check_outgoing(to, cc, files, recipients_field="reply_all")
        return self._send(
            to=to,
            cc=cc,
            subject=reply_subject(original["subject"]),
            body=body,
            thread_id=original["thread_id"],
            in_reply_to=email_id,
            attachments=files,
        )

    @tool
    def forward_email(
        self,
        email_id: EmailId,
        to: AddressList,
        note: Body = "",
        cc: OptionalAddressList | None = None,
        include_attachments: bool = True,
    ) -> dict[str, Any]:
        """Forward an email from the acting mailbox to new recipients, as a new "Fwd: " thread.

        Args:
            email_id: The email to pass on; it must be in the acting mailbox.
            to: Recipient addresses (1-50).
            note: Your text above the forwarded message.
            cc: Carbon-copy addresses; to and cc together at most 50, each address once.
            include_attachments: Carry the original's attachments along.
        """
        cc = cc or []
        original = self.store.email(email_id)
        if self.store.delivery(self.me, email_id) is None:
            raise ToolError(
                f"email {email_id} is not in {self.me}'s mailbox; you can only forward mail you hold",
                field="email_id",
            )
        files = self.store.attachments(email_id) if include_attachments else []
        self._check_outgoing(to, cc, files)
        header = "\n".join(
            [
                "---------- Forwarded message ----------",
                f"From: {self._named(original['from_address'])}",
                f"Date: {original['sent_at']}",
                f"Subject: {original['subject']}",
                f"To: {', '.join(json.loads(original['to_addresses']))}",
            ]
        )
        body = (
            f"{note.rstrip()}\n\n{header}\n\n{original['body']}" if note.strip() else f"{header}\n\n{original['body']}"
        )
        return self._send(
            to=to,
            cc=cc,
            subject=forward_subject(original["subject"]),
            body=body,
            in_reply_to=email_id,
            attachments=files,
        )

    def _named(self, address: str) -> str:
        name = self.store.display_name(address)
        return f"{name} <{address}>" if name else address

    # ---- labels ------------------------------------------------------------------------------------
    @tool
    def add_label(self, email_id: EmailId, label: LabelName, mailbox: Address | None = None) -> dict[str, Any]:
        """Put a label on an email in a mailbox; `archive` and `inbox` move it out of / back into the inbox.

        Args:
            email_id: The email's id, e.g. M-1001.
            label: A user label (created on first use) or inbox / archive; `sent` is set only by sending.
            mailbox: Whose copy; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        row = self.store.require_copy(owner, email_id)
        if label == "sent":
            raise ToolError("the sent label is set by sending and cannot be added", field="label")
        if label in self.store.labels(owner, email_id):
            raise ToolError(f"email {email_id} already has label {label!r} in {owner}", field="label")
        if label in ("inbox", "archive"):  # an email is in the inbox or archived, never both
            self.store.remove_label(owner, email_id, "archive" if label == "inbox" else "inbox")
        self.store.add_label(owner, email_id, label)
        return self.store.view(row, owner, full=False)

    @tool
    def remove_label(self, email_id: EmailId, label: LabelName, mailbox: Address | None = None) -> dict[str, Any]:
        """Take a label off an email in a mailbox (removing `inbox` leaves it in all mail only).

        Args:
            email_id: The email's id, e.g. M-1001.
            label: The label to remove; it must be on the email. `sent` cannot be removed.
            mailbox: Whose copy; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        row = self.store.require_copy(owner, email_id)
        current = self.store.labels(owner, email_id)
        if label not in current:
            raise ToolError(
                f"email {email_id} has no label {label!r} in {owner} (its labels: {', '.join(current) or 'none'})",
                field="label",
            )
        if label == "sent":
            raise ToolError(
                "the sent label records that this mailbox sent the email; it cannot be removed", field="label"
            )
        self.store.remove_label(owner, email_id, label)
        return self.store.view(row, owner, full=False)

    @tool
    def archive_email(self, email_id: EmailId, mailbox: Address | None = None) -> dict[str, Any]:
        """Archive an email: out of the inbox, labelled `archive`, still found by search.

        Args:
            email_id: The email's id, e.g. M-1001.
            mailbox: Whose copy; defaults to the acting mailbox.
        """
        owner = self._mailbox(mailbox)
        row = self.store.require_copy(owner, email_id)
        if "archive" in self.store.labels(owner, email_id):
            raise ToolError(f"email {email_id} is already archived in {owner}", field="email_id")
        self.store.remove_label(owner, email_id, "inbox")
        self.store.add_label(owner, email_id, "archive")
        return self.store.view(row, owner, full=False)

    # ---- messages people can answer ----------------------------------------------------------------
    def describe_message(self, tool_name: str, arguments: dict[str, Any], result: Any) -> Message | None:
        """Mail the agent sent (send, reply, forward) is a message its recipients may answer."""
        if tool_name not in MESSAGE_TOOLS or not isinstance(result, dict) or "id" not in result:
            return None
        return Message(
            env=self.name,
            sender=result["from_address"],
            recipients=tuple([*result["to"], *result["cc"]]),
            text=f"{result['subject']}\n\n{result['body']}",
            ref={"email_id": result["id"], "thread_id": result["thread_id"]},
        )

    def deliver_reply(self, message: Message, sender: str, text: str) -> Any:
        """`sender` answers `message`: a "Re:" email in the same thread, unread in the sender's inbox."""
        address = sender.strip().lower()
        if not ADDRESS_RE.fullmatch(address):
            raise ToolError(f"{sender!r} is not an email address; write it as name@domain.tld", field="sender")
        email_id = message.ref.get("email_id")
        store = self.store
        if email_id is None:
            raise ToolError("the message has no ref.email_id to reply to", code="invalid_message", field="ref")
        original = store.email(str(email_id), field="ref.email_id")
        recipient = message.sender.strip().lower()
        new_id = store.insert_email(  # the world runs this inside `atomic`, so a failure changes nothing
            from_address=address,
            to=[recipient],
            cc=[],
            subject=reply_subject(original["subject"]),
            body=text,
            sent_at=self._stamp(),
            thread_id=original["thread_id"],
            in_reply_to=original["id"],
        )
        return store.view(store.email(new_id), recipient, full=True)
