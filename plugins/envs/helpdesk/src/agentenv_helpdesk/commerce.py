"""Customer, order, payment and refund tools.

Rules the tools enforce (each refusal is a `ToolError` naming the field and the fix):
- refunds only against a captured payment, and never more than captured minus already refunded;
- optionally (`require_verified_refunds`), only on orders an agent has verified with `verify_order`;
- a payment is captured at most once, for at most the authorized amount.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentenv_runtime import ToolError, tool

from agentenv_helpdesk.base import AccountId, Country, DeskCore, Email, Line, Note, OrderId, PaymentId, PostalCode
from agentenv_helpdesk.money import Money, from_cents, to_cents


class CommerceDesk(DeskCore):
    """The accounts-and-money half of the desk."""

    # ---- accounts ----------------------------------------------------------------------------------
    @tool(read_only=True)
    def lookup_account(self, email: Email | None = None, account_id: AccountId | None = None) -> dict[str, Any]:
        """Find a customer account by email or by account id (give one of the two).

        Args:
            email: The customer's email address, e.g. dana.kim@example.com.
            account_id: The account id, e.g. ACC-1001.
        """
        if email is None and account_id is None:
            raise ToolError(
                "email: give the customer's email or their account_id to look the account up",
                code="missing_argument",
                field="email",
            )
        account = self.account_by_email(email) if email is not None else self.account_by_id(str(account_id))
        if account_id is not None and account["account_id"] != account_id:
            raise ToolError(
                f"account_id: {email} belongs to {account['account_id']}, not {account_id}; give only one of "
                "email or account_id",
                code="conflict",
                field="account_id",
            )
        counts = {
            status: n
            for status, n in self.db.execute(
                "SELECT status, COUNT(*) FROM tickets WHERE account_id = ? GROUP BY status",
                (account["account_id"],),
            )
        }
        orders = self.one("SELECT COUNT(*) FROM orders WHERE account_id = ?", (account["account_id"],))
        return {
            **dict(account),
            "order_count": orders[0] if orders else 0,
            "ticket_counts": counts,
        }

    @tool
    def update_address(
        self, account_id: AccountId, street: Line, city: Line, postal_code: PostalCode, country: Country
    ) -> dict[str, Any]:
        """Set a customer's default shipping address (replacing the one on file).

        Args:
            account_id: The account id, e.g. ACC-1006 (find it with lookup_account).
            street: Street and number, e.g. "88 Harbor Road, Apt 4".
            city: City, with the state or region where one is used, e.g. "Seattle, WA".
            postal_code: Postal or ZIP code, e.g. 98121.
            country: Two-letter country code (ISO 3166), e.g. US.
        """
        self.account_by_id(account_id)
        self.db.execute(
            "UPDATE accounts SET street = ?, city = ?, postal_code = ?, country = ? WHERE account_id = ?",
            (street, city, postal_code, country, account_id),
        )
        return self.lookup_account(account_id=account_id)

    # ---- orders ------------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_orders(self, account_id: AccountId) -> dict[str, Any]:
        """List a customer's orders, newest first, with totals and payment status.

        Args:
            account_id: The account id, e.g. ACC-1001 (find it with lookup_account).
        """
        self.account_by_id(account_id)
        rows = self.db.execute(
            "SELECT o.*, p.payment_id, p.status AS payment_status FROM orders o "
            "LEFT JOIN payments p USING (order_id) WHERE o.account_id = ? ORDER BY o.placed_at DESC, o.order_id DESC",
            (account_id,),
        ).fetchall()
        orders = [
            {
                "order_id": row["order_id"],
                "placed_at": row["placed_at"],
                "status": row["status"],
                "currency": row["currency"],
                "total": from_cents(row["total_cents"]),
                "verified": bool(row["verified"]),
                "payment_id": row["payment_id"],
                "payment_status": row["payment_status"],
                "refunded_amount": from_cents(self.refunded_cents(row["order_id"])),
            }
            for row in rows
        ]
        return {"account_id": account_id, "orders": orders}

    @tool(read_only=True)
    def get_order(self, order_id: OrderId) -> dict[str, Any]:
        """Get an order with its line items, payment, refunds and the amount still refundable.

        Args:
            order_id: The order's id, e.g. ORD-5001.
        """
        return self._order_view(self.order_row(order_id))

    @tool
    def verify_order(self, order_id: OrderId, note: Note) -> dict[str, Any]:
        """Mark an order verified after checking the customer's claim (e.g. photos of damage).

        Args:
            order_id: The order's id, e.g. ORD-5001.
            note: What was checked, e.g. "Photo shows split sole on the boots".
        """
        order = self.order_row(order_id)
        if order["verified"]:
            raise ToolError(
                f"order_id: {order_id} was already verified at {order['verified_at']} by "
                f"{order['verified_by']} ({order['verified_note']!r}); nothing to do",
                code="already_verified",
                field="order_id",
            )
        self.db.execute(
            "UPDATE orders SET verified = 1, verified_note = ?, verified_by = ?, verified_at = ? WHERE order_id = ?",
            (note, self.agent_email(), self.stamp(), order_id),
        )
        return self._order_view(self.order_row(order_id))

    # ---- payments and refunds ----------------------------------------------------------------------
    @tool(read_only=True)
    def get_payment(self, payment_id: PaymentId) -> dict[str, Any]:
        """Get a payment: authorized, captured, refunded and still-refundable amounts.

        Args:
            payment_id: The payment's id, e.g. PAY-7001.
        """
        return self.payment_view(self._payment_row(payment_id))

    @tool
    def capture_payment(self, payment_id: PaymentId, amount: Money | None = None) -> dict[str, Any]:
        """Capture (take) an authorized payment, in full or for a smaller amount.

        Args:
            payment_id: The payment's id, e.g. PAY-7001.
            amount: How much to capture, at most the authorized amount; the full authorization if omitted.
        """
        payment = self._payment_row(payment_id)
        if payment["status"] != "authorized":
            raise ToolError(
                f"payment_id: {payment_id} is {payment['status']}; only an authorized payment can be captured",
                code="invalid_payment_state",
                field="payment_id",
            )
        order = self.order_row(payment["order_id"])
        if order["status"] == "cancelled":
            raise ToolError(
                f"payment_id: order {order['order_id']} is cancelled, so its payment cannot be captured",
                code="order_cancelled",
                field="payment_id",
            )
        cents = payment["authorized_cents"] if amount is None else to_cents(amount)
        if cents > payment["authorized_cents"]:
            raise ToolError(
                f"amount: {from_cents(cents):.2f} is more than the authorized "
                f"{from_cents(payment['authorized_cents']):.2f}; capture at most that",
                code="exceeds_authorized",
                field="amount",
            )
        self.db.execute(
            "UPDATE payments SET status = 'captured', captured_cents = ?, captured_at = ? WHERE payment_id = ?",
            (cents, self.stamp(), payment_id),
        )
        return self.payment_view(self._payment_row(payment_id))

    @tool
    def issue_refund(self, order_id: OrderId, amount: Money, reason: Note) -> dict[str, Any]:
        """Refund money on an order's captured payment; partial refunds add up to at most what was captured.

        Args:
            order_id: The order's id, e.g. ORD-5001.
            amount: Amount to refund, with at most 2 decimals, e.g. 89.99.
            reason: Why, e.g. "Boots arrived with a split sole".
        """
        order = self.order_row(order_id)
        if self.options.require_verified_refunds and not order["verified"]:
            raise ToolError(
                f"order_id: {order_id} is not verified; check the customer's claim and call "
                "verify_order(order_id, note) before refunding",
                code="order_not_verified",
                field="order_id",
            )
        payment = self.payment_of(order_id)
        if payment is None:
            raise ToolError(
                f"order_id: {order_id} has no payment, so there is nothing to refund",
                code="no_payment",
                field="order_id",
            )
        if payment["status"] != "captured":
            raise ToolError(
                f"order_id: payment {payment['payment_id']} of {order_id} is {payment['status']}, not captured; "
                "only captured money can be refunded (an authorization is released, not refunded)",
                code="payment_not_captured",
                field="order_id",
            )
        cents = to_cents(amount)
        remaining = self.refundable_cents(order_id)
        if cents > remaining:
            raise ToolError(
                f"amount: {from_cents(cents):.2f} exceeds what can still be refunded on {order_id}: "
                f"{from_cents(remaining):.2f} (captured {from_cents(payment['captured_cents']):.2f}, already "
                f"refunded {from_cents(self.refunded_cents(order_id)):.2f}); refund at most "
                f"{from_cents(remaining):.2f}",
                code="exceeds_refundable",
                field="amount",
            )
        refund_id = self.next_id("refunds", "refund_id", "REF")
        self.db.execute(
            "INSERT INTO refunds (refund_id, order_id, payment_id, amount_cents, reason, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (refund_id, order_id, payment["payment_id"], cents, reason, self.agent_email(), self.stamp()),
        )
        return {
            "refund": self._refund_view(self._one_refund(refund_id)),
            "order_refunded_amount": from_cents(self.refunded_cents(order_id)),
            "order_refundable_amount": from_cents(self.refundable_cents(order_id)),
        }

    @tool(read_only=True)
    def list_refunds(self, order_id: OrderId) -> dict[str, Any]:
        """List the refunds issued on an order, oldest first, with the total and what is left.

        Args:
            order_id: The order's id, e.g. ORD-5001.
        """
        self.order_row(order_id)
        return {
            "order_id": order_id,
            "refunds": self._refunds_of(order_id),
            "total_refunded": from_cents(self.refunded_cents(order_id)),
            "refundable_amount": from_cents(self.refundable_cents(order_id)),
        }

    # ---- helpers -----------------------------------------------------------------------------------
    def _payment_row(self, payment_id: str) -> sqlite3.Row:
        row = self.one("SELECT * FROM payments WHERE payment_id = ?", (payment_id,))
        if row is None:
            raise ToolError(
                f"payment_id: no payment {payment_id!r}; get_order(order_id) shows an order's payment id",
                code="not_found",
                field="payment_id",
            )
        return row

    def _one_refund(self, refund_id: str) -> sqlite3.Row:
        row = self.one("SELECT * FROM refunds WHERE refund_id = ?", (refund_id,))
        assert row is not None, refund_id
        return row

    @staticmethod
    def _refund_view(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "refund_id": row["refund_id"],
            "order_id": row["order_id"],
            "payment_id": row["payment_id"],
            "amount": from_cents(row["amount_cents"]),
            "reason": row["reason"],
            "created_by": row["created_by"],
            "created_at": row["created_at"],
        }

    def _refunds_of(self, order_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT * FROM refunds WHERE order_id = ? ORDER BY created_at, refund_id", (order_id,)
        ).fetchall()
        return [self._refund_view(row) for row in rows]

    def _order_view(self, order: sqlite3.Row) -> dict[str, Any]:
        order_id = order["order_id"]
        items = self.db.execute(
            "SELECT line_no, sku, description, quantity, unit_price_cents FROM order_items WHERE order_id = ? "
            "ORDER BY line_no",
            (order_id,),
        ).fetchall()
        payment = self.payment_of(order_id)
        return {
            "order_id": order_id,
            "account_id": order["account_id"],
            "placed_at": order["placed_at"],
            "status": order["status"],
            "currency": order["currency"],
            "total": from_cents(order["total_cents"]),
            "items": [
                {
                    "line_no": item["line_no"],
                    "sku": item["sku"],
                    "description": item["description"],
                    "quantity": item["quantity"],
                    "unit_price": from_cents(item["unit_price_cents"]),
                    "line_total": from_cents(item["unit_price_cents"] * item["quantity"]),
                }
                for item in items
            ],
            "verified": bool(order["verified"]),
            "verified_note": order["verified_note"],
            "verified_by": order["verified_by"],
            "verified_at": order["verified_at"],
            "payment": self.payment_view(payment) if payment is not None else None,
            "refunds": self._refunds_of(order_id),
            "refunded_amount": from_cents(self.refunded_cents(order_id)),
            "refundable_amount": from_cents(self.refundable_cents(order_id)),
        }
