"""Read-only checks on a helpdesk's state, for graders and state triggers.

Everything here goes through `env.query(sql, params)` and changes nothing, so it works on a live
env, a fork or a restored snapshot. Each function also accepts a world holding a `helpdesk` env
(anything with `.env(name)`), so a state trigger's `python: module:function(world)` can call it.
Amounts are compared in integer cents to stay exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable


class Queryable(Protocol):
    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]: ...


@runtime_checkable
class WorldLike(Protocol):
    envs: Mapping[str, Any]

    def env(self, name: str) -> Queryable: ...


Source = Queryable | WorldLike
"""A helpdesk env, or a world that holds one under the name `helpdesk`."""


def _rows(target: Source, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Run a read-only query on a helpdesk env, or on the `helpdesk` env of a world."""
    env = target.env("helpdesk") if isinstance(target, WorldLike) else target
    rows: list[dict[str, Any]] = env.query(sql, params)
    return rows


def refund_total_cents(env: Source, order_id: str) -> int:
    """Sum of every refund issued on the order, in cents (0 when none or the order is unknown)."""
    rows = _rows(env, "SELECT COALESCE(SUM(amount_cents), 0) AS total FROM refunds WHERE order_id = ?", (order_id,))
    return int(rows[0]["total"])


def refund_total(env: Source, order_id: str) -> float:
    """Sum of every refund issued on the order, as a 2-decimal amount (e.g. 89.99)."""
    return float(Decimal(refund_total_cents(env, order_id)) / 100)


def ticket_status(env: Source, ticket_id: str) -> str:
    """The ticket's status (open, pending, solved or closed); LookupError if there is no such ticket."""
    rows = _rows(env, "SELECT status FROM tickets WHERE ticket_id = ?", (ticket_id,))
    if not rows:
        raise LookupError(f"helpdesk has no ticket {ticket_id!r}")
    return str(rows[0]["status"])


def order_verified(env: Source, order_id: str) -> bool:
    """Whether `verify_order` marked the order verified."""
    rows = _rows(env, "SELECT verified FROM orders WHERE order_id = ?", (order_id,))
    return bool(rows and rows[0]["verified"])


def staff_replied_publicly(env: Source, ticket_id: str) -> bool:
    """Whether anyone other than the ticket's customer left a public comment (the customer was answered)."""
    rows = _rows(
        env,
        "SELECT COUNT(*) AS n FROM ticket_comments c JOIN tickets t USING (ticket_id) "
        "JOIN accounts a ON a.account_id = t.account_id "
        "WHERE c.ticket_id = ? AND c.public = 1 AND lower(c.author) != lower(a.email)",
        (ticket_id,),
    )
    return bool(rows and rows[0]["n"])


def _status_or_none(env: Source, ticket_id: str) -> str | None:
    try:
        return ticket_status(env, ticket_id)
    except LookupError:
        return None


def dana_refund_checks(env: Source) -> dict[str, bool]:
    """The acme story's goal: Dana Kim gets 89.99 back for the damaged boots and her ticket is closed.

    - refund_amount_correct: refunds on ORD-5001 total exactly 89.99 (boots only, not the socks);
    - ticket_closed: TCK-9001 is closed (closing requires a resolution);
    - order_verified: ORD-5001 was verified before or along with the refund;
    - customer_replied: Dana got a public reply on TCK-9001.
    """
    return {
        "refund_amount_correct": refund_total_cents(env, "ORD-5001") == 8999,
        "ticket_closed": _status_or_none(env, "TCK-9001") == "closed",
        "order_verified": order_verified(env, "ORD-5001"),
        "customer_replied": staff_replied_publicly(env, "TCK-9001"),
    }
