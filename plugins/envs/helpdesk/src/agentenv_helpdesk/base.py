"""What every part of the desk shares: argument types, id sequences, timestamps and look-ups.

The tool groups (`tickets.py`, `billing.py`) are mixins over `DeskCore`; `env.py` joins them into
the one `HelpdeskEnv` the plugin registers.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC
from typing import Annotated, Any

from agentenv_runtime import Env, ToolError
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agentenv_helpdesk.money import from_cents
from agentenv_helpdesk.schema import SCHEMA

EMAIL_PATTERN = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"

TicketId = Annotated[str, Field(pattern=r"^TCK-\d+$", examples=["TCK-9001"])]
OrderId = Annotated[str, Field(pattern=r"^ORD-\d+$", examples=["ORD-5001"])]
AccountId = Annotated[str, Field(pattern=r"^ACC-\d+$", examples=["ACC-1001"])]
PaymentId = Annotated[str, Field(pattern=r"^PAY-\d+$", examples=["PAY-7001"])]
Email = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, pattern=EMAIL_PATTERN, max_length=254)]
Subject = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Body = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20_000)]
Note = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2_000)]
Limit = Annotated[int, Field(ge=1, le=200)]
Line = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
PostalCode = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9 -]{1,11}$")]
Country = Annotated[str, StringConstraints(strip_whitespace=True, to_upper=True, pattern=r"^[A-Za-z]{2}$")]

# First number of each id sequence when its table is empty; afterwards new ids follow the highest one.
SEQUENCE_START = {"TCK": 9001, "REF": 3001}


class HelpdeskSettings(BaseModel):
    """Options of one helpdesk instance."""

    model_config = ConfigDict(extra="forbid")

    require_verified_refunds: bool = False
    """Refuse `issue_refund` until `verify_order` has marked the order verified. Off by default: worlds
    usually unlock refunds with a state trigger on `orders.verified` instead."""


class DeskCore(Env[HelpdeskSettings]):
    """Shared helpers. Not registered itself; `HelpdeskEnv` is the app."""

    schema = SCHEMA
    Settings = HelpdeskSettings

    @property
    def options(self) -> HelpdeskSettings:
        """`settings` (typed by `Env[HelpdeskSettings]`)."""
        return self.settings

    # ---- time and ids --------------------------------------------------------------------------------
    def stamp(self) -> str:
        """The world's current time as an ISO 8601 UTC string with a trailing Z (second precision)."""
        now = self.now()
        now = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
        return now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def next_id(self, table: str, column: str, prefix: str) -> str:
        """`PREFIX-n` one past the highest existing number, so ids stay sequential and deterministic.

        The pattern is written into the SQL (the prefixes are this module's constants): SQLite prepares a
        statement again on every run when a LIKE pattern is a bound parameter."""
        assert prefix.isalnum(), prefix
        row = self.db.execute(
            f"SELECT MAX(CAST(SUBSTR({column}, {len(prefix) + 2}) AS INTEGER)) FROM {table} "
            f"WHERE {column} LIKE '{prefix}-%'"
        ).fetchone()
        return f"{prefix}-{row[0] + 1 if row[0] is not None else SEQUENCE_START[prefix]}"

    # ---- look-ups that refuse unknown ids --------------------------------------------------------------
    def one(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.db.execute(sql, params).fetchone()
        return row

    def desk(self) -> sqlite3.Row | None:
        return self.one("SELECT * FROM desk LIMIT 1")

    def agent_email(self) -> str:
        """Who the acting agent is: the desk's support mailbox (comments and refunds are signed with it)."""
        desk = self.desk()
        return str(desk["support_email"]) if desk else "support"

    def currency(self) -> str:
        desk = self.desk()
        return str(desk["currency"]) if desk else "USD"

    def ticket_row(self, ticket_id: str) -> sqlite3.Row:
        row = self.one("SELECT * FROM tickets WHERE ticket_id = ?", (ticket_id,))
        if row is None:
            raise self.no_ticket(ticket_id)
        return row

    @staticmethod
    def no_ticket(ticket_id: str) -> ToolError:
        return ToolError(
            f"ticket_id: no ticket {ticket_id!r}; find the id with list_tickets", code="not_found", field="ticket_id"
        )

    def order_row(self, order_id: str, field: str = "order_id") -> sqlite3.Row:
        row = self.one("SELECT * FROM orders WHERE order_id = ?", (order_id,))
        if row is None:
            raise ToolError(
                f"{field}: no order {order_id!r}; find the customer's orders with list_orders(account_id)",
                code="not_found",
                field=field,
            )
        return row

    def account_by_id(self, account_id: str, field: str = "account_id") -> sqlite3.Row:
        row = self.one("SELECT * FROM accounts WHERE account_id = ?", (account_id,))
        if row is None:
            raise ToolError(
                f"{field}: no account {account_id!r}; find it with lookup_account(email=...)",
                code="not_found",
                field=field,
            )
        return row

    def account_by_email(self, email: str, field: str = "email") -> sqlite3.Row:
        row = self.one("SELECT * FROM accounts WHERE email = ?", (email,))
        if row is None:
            raise ToolError(
                f"{field}: no customer account uses {email!r}; check the spelling or ask the customer "
                "for the email address on their account",
                code="not_found",
                field=field,
            )
        return row

    # ---- money on an order -------------------------------------------------------------------------------
    def payment_of(self, order_id: str) -> sqlite3.Row | None:
        return self.one("SELECT * FROM payments WHERE order_id = ?", (order_id,))

    def refunded_cents(self, order_id: str) -> int:
        row = self.one("SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?", (order_id,))
        return int(row[0]) if row else 0

    def refundable_cents(self, order_id: str) -> int:
        """Captured minus already refunded; 0 while the payment is only authorized or voided."""
        payment = self.payment_of(order_id)
        if payment is None or payment["status"] != "captured":
            return 0
        return int(payment["captured_cents"]) - self.refunded_cents(order_id)

    def payment_view(self, payment: sqlite3.Row) -> dict[str, Any]:
        refunded = self.refunded_cents(payment["order_id"])
        refundable = self.refundable_cents(payment["order_id"])
        return {
            "payment_id": payment["payment_id"],
            "order_id": payment["order_id"],
            "method": payment["method"],
            "status": payment["status"],
            "currency": self.currency(),
            "authorized_amount": from_cents(payment["authorized_cents"]),
            "captured_amount": from_cents(payment["captured_cents"]),
            "refunded_amount": from_cents(refunded),
            "refundable_amount": from_cents(refundable),
            "created_at": payment["created_at"],
            "captured_at": payment["captured_at"],
        }
