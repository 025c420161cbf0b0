"""The helpdesk's tables and the vocabularies its columns allow.

Money is stored as integer cents so sums and comparisons are exact; tools convert at the edge
(see `money.py`). Foreign keys are documented in comments rather than declared: SQLite only
enforces them per connection, and snapshots/forks open new connections, so the tools check them.
"""

from __future__ import annotations

from typing import Literal

TicketStatus = Literal["open", "pending", "solved", "closed"]
Priority = Literal["low", "normal", "high", "urgent"]
PaymentStatus = Literal["authorized", "captured", "voided"]
OrderStatus = Literal["placed", "shipped", "delivered", "cancelled"]

TICKET_STATUSES: tuple[str, ...] = ("open", "pending", "solved", "closed")
PRIORITIES: tuple[str, ...] = ("low", "normal", "high", "urgent")

# Where `update_ticket` may move a ticket. `closed` is reached only through `close_ticket`
# (which demands a resolution) and is final: nothing leaves it.
TRANSITIONS: dict[str, frozenset[str]] = {
    "open": frozenset({"open", "pending", "solved"}),
    "pending": frozenset({"pending", "open", "solved"}),
    "solved": frozenset({"solved", "open"}),
    "closed": frozenset(),
}

SCHEMA = """
-- One row: who this desk belongs to and which mailbox speaks for it.
CREATE TABLE desk (
    company       TEXT NOT NULL,
    domain        TEXT NOT NULL,
    support_email TEXT NOT NULL,
    currency      TEXT NOT NULL DEFAULT 'USD'
);

-- People who can be assigned tickets (agents, leads, the support bot).
CREATE TABLE staff (
    email TEXT PRIMARY KEY,
    name  TEXT NOT NULL,
    role  TEXT NOT NULL
);

CREATE TABLE accounts (
    account_id TEXT PRIMARY KEY,
    email      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name       TEXT NOT NULL,
    phone      TEXT,
    tier       TEXT NOT NULL DEFAULT 'standard' CHECK (tier IN ('standard', 'plus', 'business')),
    created_at TEXT NOT NULL,
    -- The default shipping address (NULL until one is on file).
    street      TEXT,
    city        TEXT,
    postal_code TEXT,
    country     TEXT
);

CREATE TABLE orders (
    order_id      TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL,               -- accounts.account_id
    placed_at     TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('placed', 'shipped', 'delivered', 'cancelled')),
    currency      TEXT NOT NULL DEFAULT 'USD',
    total_cents   INTEGER NOT NULL CHECK (total_cents >= 0),
    verified      INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
    verified_note TEXT,
    verified_by   TEXT,
    verified_at   TEXT
);
CREATE INDEX orders_by_account ON orders (account_id);

CREATE TABLE order_items (
    order_id         TEXT NOT NULL,            -- orders.order_id
    line_no          INTEGER NOT NULL,
    sku              TEXT NOT NULL,
    description      TEXT NOT NULL,
    quantity         INTEGER NOT NULL CHECK (quantity > 0),
    unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents >= 0),
    PRIMARY KEY (order_id, line_no)
);

-- One payment per order: authorized first, then captured (money taken) or voided.
CREATE TABLE payments (
    payment_id       TEXT PRIMARY KEY,
    order_id         TEXT NOT NULL UNIQUE,     -- orders.order_id
    method           TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('authorized', 'captured', 'voided')),
    authorized_cents INTEGER NOT NULL CHECK (authorized_cents >= 0),
    captured_cents   INTEGER NOT NULL DEFAULT 0 CHECK (captured_cents >= 0),
    created_at       TEXT NOT NULL,
    captured_at      TEXT
);

CREATE TABLE refunds (
    refund_id    TEXT PRIMARY KEY,
    order_id     TEXT NOT NULL,                -- orders.order_id
    payment_id   TEXT NOT NULL,                -- payments.payment_id
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    reason       TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX refunds_by_order ON refunds (order_id);

CREATE TABLE tickets (
    ticket_id   TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL,                 -- accounts.account_id (the requester)
    order_id    TEXT,                          -- orders.order_id, when the ticket is about one
    subject     TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('open', 'pending', 'solved', 'closed')),
    priority    TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    assignee    TEXT,                          -- staff.email
    resolution  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    closed_at   TEXT
);
CREATE INDEX tickets_by_account ON tickets (account_id);
CREATE INDEX tickets_by_status ON tickets (status);

-- The conversation on a ticket. Public comments are seen by the customer; internal ones only by staff.
CREATE TABLE ticket_comments (
    comment_id INTEGER PRIMARY KEY,
    ticket_id  TEXT NOT NULL,                  -- tickets.ticket_id
    author     TEXT NOT NULL,                  -- an email: the customer's or a staff member's
    body       TEXT NOT NULL,
    public     INTEGER NOT NULL CHECK (public IN (0, 1)),
    created_at TEXT NOT NULL
);
CREATE INDEX comments_by_ticket ON ticket_comments (ticket_id);
"""
