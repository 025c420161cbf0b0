"""Ticket tools: find, read, open, update, comment on and close support tickets.

Lifecycle: open ⇄ pending, open/pending → solved → open (reopened), and any of them → closed
through `close_ticket`, which needs a resolution. Closed is final: a closed ticket refuses edits and
comments (code `ticket_closed`); the customer has to open a new ticket.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any

from agentenv_runtime import ToolError, tool
from pydantic import Field

from agentenv_helpdesk.base import Body, DeskCore, Email, Limit, Note, OrderId, Subject, TicketId
from agentenv_helpdesk.schema import TRANSITIONS, Priority, TicketStatus

SUMMARY_FIELDS = (
    "ticket_id",
    "subject",
    "status",
    "priority",
    "assignee",
    "account_id",
    "customer_email",
    "customer_name",
    "order_id",
    "created_at",
    "updated_at",
)
"""What a ticket listing shows of each ticket (a full ticket adds its resolution and comments)."""

Customer = Annotated[str, Field(min_length=1, max_length=254, examples=["dana.kim@example.com", "ACC-1001"])]
Resolution = Annotated[str, Field(min_length=1, max_length=2_000)]


class TicketDesk(DeskCore):
    """The ticket half of the desk."""

    # ---- reading -----------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_tickets(
        self, status: TicketStatus | None = None, customer: Customer | None = None, limit: Limit = 20
    ) -> dict[str, Any]:
        """List tickets, newest first, optionally only one status or one customer's.

        Args:
            status: Only tickets in this status (open, pending, solved or closed).
            customer: Only this customer's tickets: their email address or account id (ACC-…).
            limit: At most this many tickets (1-200, default 20); `total` says how many matched.
        """
        where, params = [], []
        if status is not None:
            where.append("t.status = ?")
            params.append(status)
        if customer is not None:
            account = self._customer(customer.strip())
            where.append("t.account_id = ?")
            params.append(account["account_id"])
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        total = self.db.execute(f"SELECT COUNT(*) FROM tickets t {clause}", params).fetchone()[0]
        rows = self.db.execute(
            f"SELECT t.*, a.email AS customer_email, a.name AS customer_name FROM tickets t "
            f"LEFT JOIN accounts a USING (account_id) {clause} "
            "ORDER BY t.created_at DESC, t.ticket_id DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        return {"tickets": [self._summary(row) for row in rows], "total": total}

    @tool(read_only=True)
    def get_ticket(self, ticket_id: TicketId) -> dict[str, Any]:
        """Get one ticket with its customer and full conversation (public and internal comments).

        Args:
            ticket_id: The ticket's id, e.g. TCK-9001.
        """
        full = self._full_or_none(ticket_id)
        if full is None:
            raise self.no_ticket(ticket_id)
        return full

    @tool(read_only=True)
    def list_staff(self) -> dict[str, Any]:
        """The staff members tickets can be assigned or escalated to (not the support bot)."""
        rows = self.db.execute("SELECT email, name, role FROM staff WHERE role != 'bot' ORDER BY name").fetchall()
        return {"staff": [dict(row) for row in rows]}

    # ---- writing -----------------------------------------------------------------------------------
    @tool
    def create_ticket(
        self,
        customer_email: Email,
        subject: Subject,
        body: Body,
        priority: Priority = "normal",
        order_id: OrderId | None = None,
    ) -> dict[str, Any]:
        """Open a new ticket for an existing customer; the body becomes its first public comment.

        Args:
            customer_email: Email address of the customer's account (must already exist).
            subject: One-line summary of the issue.
            body: Description of the issue, visible to the customer.
            priority: low, normal (default), high or urgent.
            order_id: The order the ticket is about, if any; it must belong to this customer.
        """
        account = self.account_by_email(customer_email, field="customer_email")
        if order_id is not None:
            order = self.order_row(order_id)
            if order["account_id"] != account["account_id"]:
                raise ToolError(
                    f"order_id: {order_id} belongs to account {order['account_id']}, not to "
                    f"{customer_email} ({account['account_id']}); use one of list_orders("
                    f"{account['account_id']!r}) or leave order_id out",
                    code="order_mismatch",
                    field="order_id",
                )
        ticket_id = self.next_id("tickets", "ticket_id", "TCK")
        now = self.stamp()
        self.db.execute(
            "INSERT INTO tickets (ticket_id, account_id, order_id, subject, status, priority, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, 'open', ?, ?, ?)",
            (ticket_id, account["account_id"], order_id, subject, priority, now, now),
        )
        self._insert_comment(ticket_id, self.agent_email(), body, public=True, at=now)
        return self._full(ticket_id)

    @tool
    def update_ticket(
        self,
        ticket_id: TicketId,
        status: TicketStatus | None = None,
        priority: Priority | None = None,
        assignee: Email | None = None,
    ) -> dict[str, Any]:
        """Change a ticket's status, priority or assignee (give at least one). Closed tickets cannot change.

        Args:
            ticket_id: The ticket's id, e.g. TCK-9001.
            status: New status: open, pending (waiting on the customer) or solved. To close, use close_ticket.
            priority: New priority: low, normal, high or urgent.
            assignee: Email of the staff member who should own the ticket.
        """
        ticket = self._editable(ticket_id)
        if status is None and priority is None and assignee is None:
            raise ToolError(
                "status: nothing to update; give at least one of status, priority or assignee",
                code="nothing_to_update",
                field="status",
            )
        changes: dict[str, Any] = {}
        if status is not None:
            if status == "closed":
                raise ToolError(
                    "status: a ticket is closed with close_ticket(ticket_id, resolution), which records how "
                    "it was resolved; update_ticket can set open, pending or solved",
                    code="invalid_transition",
                    field="status",
                )
            if status not in TRANSITIONS[ticket["status"]]:
                allowed = ", ".join(sorted(TRANSITIONS[ticket["status"]] - {ticket["status"]}))
                raise ToolError(
                    f"status: {ticket_id} is {ticket['status']} and cannot move to {status}; "
                    f"allowed next: {allowed}, or close it with close_ticket",
                    code="invalid_transition",
                    field="status",
                )
            changes["status"] = status
        if priority is not None:
            changes["priority"] = priority
        if assignee is not None:
            if self.one("SELECT 1 FROM staff WHERE email = ?", (assignee,)) is None:
                staff = ", ".join(r[0] for r in self.db.execute("SELECT email FROM staff ORDER BY email"))
                raise ToolError(
                    f"assignee: {assignee!r} is not a staff member; assign one of: {staff or 'none'}",
                    code="not_found",
                    field="assignee",
                )
            changes["assignee"] = assignee
        changes["updated_at"] = self.stamp()
        sets = ", ".join(f"{column} = ?" for column in changes)
        self.db.execute(f"UPDATE tickets SET {sets} WHERE ticket_id = ?", (*changes.values(), ticket_id))
        return self._full(ticket_id)

    @tool
    def add_ticket_comment(self, ticket_id: TicketId, body: Body, public: bool) -> dict[str, Any]:
        """Add a comment to a ticket: public replies reach the customer, internal notes only staff.

        Args:
            ticket_id: The ticket's id, e.g. TCK-9001.
            body: The comment text.
            public: True to reply to the customer; False for an internal note only staff can see.
        """
        self._editable(ticket_id)
        now = self.stamp()
        comment = self._insert_comment(ticket_id, self.agent_email(), body, public=public, at=now)
        self.db.execute("UPDATE tickets SET updated_at = ? WHERE ticket_id = ?", (now, ticket_id))
        return {"ticket_id": ticket_id, "comment": comment}

    @tool
    def escalate_ticket(self, ticket_id: TicketId, to: Email, reason: Note) -> dict[str, Any]:
        """Escalate a ticket to a staff member: priority urgent, assigned to them, reopened if it was waiting or
        solved, with an internal note saying why.

        Args:
            ticket_id: The ticket's id, e.g. TCK-8998.
            to: Email of the staff member who takes it over, e.g. priya@acme.example.
            reason: Why it needs them, e.g. "Customer's trip starts tomorrow; needs a replacement today".
        """
        ticket = self._editable(ticket_id)
        staff = self.one("SELECT name, role FROM staff WHERE email = ?", (to,))
        if staff is None or staff["role"] == "bot":
            people = ", ".join(
                r[0] for r in self.db.execute("SELECT email FROM staff WHERE role != 'bot' ORDER BY email")
            )
            raise ToolError(
                f"to: {to!r} is not a staff member who can take a ticket; escalate to one of: {people or 'none'}",
                code="not_found",
                field="to",
            )
        if ticket["priority"] == "urgent" and ticket["assignee"] == to:
            raise ToolError(
                f"ticket_id: {ticket_id} is already escalated to {to} (urgent); nothing to do",
                code="already_escalated",
                field="ticket_id",
            )
        now = self.stamp()
        self.db.execute(
            "UPDATE tickets SET priority = 'urgent', assignee = ?, status = 'open', updated_at = ? WHERE ticket_id = ?",
            (to, now, ticket_id),
        )
        self._insert_comment(
            ticket_id, self.agent_email(), f"Escalated to {staff['name']}: {reason}", public=False, at=now
        )
        return self._full(ticket_id)

    @tool
    def close_ticket(self, ticket_id: TicketId, resolution: Resolution) -> dict[str, Any]:
        """Close a ticket for good, recording how it was resolved. Closed tickets cannot be reopened.

        Args:
            ticket_id: The ticket's id, e.g. TCK-9001.
            resolution: How the issue was resolved, e.g. "Refunded 89.99 for the damaged boots".
        """
        self._editable(ticket_id)
        if not resolution.strip():
            raise ToolError(
                "resolution: a ticket cannot be closed without a resolution; say in a sentence how the "
                "issue was resolved",
                code="resolution_required",
                field="resolution",
            )
        now = self.stamp()
        self.db.execute(
            "UPDATE tickets SET status = 'closed', resolution = ?, closed_at = ?, updated_at = ? WHERE ticket_id = ?",
            (resolution.strip(), now, now, ticket_id),
        )
        return self._full(ticket_id)

    # ---- helpers -----------------------------------------------------------------------------------
    def _customer(self, customer: str) -> sqlite3.Row:
        if customer.upper().startswith("ACC-"):
            return self.account_by_id(customer.upper(), field="customer")
        return self.account_by_email(customer.lower(), field="customer")

    def _editable(self, ticket_id: str) -> sqlite3.Row:
        ticket = self.ticket_row(ticket_id)
        if ticket["status"] == "closed":
            raise ToolError(
                f"ticket_id: {ticket_id} is closed ({ticket['closed_at']}) and can no longer be changed or "
                "commented on; open a new ticket with create_ticket if the customer needs more help",
                code="ticket_closed",
                field="ticket_id",
            )
        return ticket

    def _insert_comment(self, ticket_id: str, author: str, body: str, *, public: bool, at: str) -> dict[str, Any]:
        cursor = self.db.execute(
            "INSERT INTO ticket_comments (ticket_id, author, body, public, created_at) VALUES (?, ?, ?, ?, ?)",
            (ticket_id, author, body, int(public), at),
        )
        return {"comment_id": cursor.lastrowid, "author": author, "body": body, "public": public, "created_at": at}

    @staticmethod
    def _summary(row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
        found = row if isinstance(row, dict) else dict(row)  # a Row looks names up one by one, without case
        return {key: found[key] for key in SUMMARY_FIELDS}

    def _full(self, ticket_id: str) -> dict[str, Any]:
        full = self._full_or_none(ticket_id)
        assert full is not None, ticket_id
        return full

    def _full_or_none(self, ticket_id: str) -> dict[str, Any] | None:
        """The ticket with its customer and comments, in two queries (None when there is no such ticket)."""
        row = self.one(
            "SELECT t.*, a.email AS customer_email, a.name AS customer_name FROM tickets t "
            "LEFT JOIN accounts a USING (account_id) WHERE t.ticket_id = ?",
            (ticket_id,),
        )
        if row is None:
            return None
        found = dict(row)
        comments = self.db.execute(
            "SELECT comment_id, author, body, public, created_at FROM ticket_comments WHERE ticket_id = ? "
            "ORDER BY created_at, comment_id",
            (ticket_id,),
        )
        return {
            **self._summary(found),
            "resolution": found["resolution"],
            "closed_at": found["closed_at"],
            "comments": [
                {"comment_id": c[0], "author": c[1], "body": c[2], "public": bool(c[3]), "created_at": c[4]}
                for c in comments
            ],
        }
