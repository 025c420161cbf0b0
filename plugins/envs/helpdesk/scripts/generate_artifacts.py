"""Write the helpdesk's packaged artifacts: `acme.json` (the shared story) and `globex.json.gz` (large).

Deterministic: `acme` is written out literally below and `globex` comes from a seeded
`random.Random`, gzip'd with a fixed mtime, so re-running produces identical bytes.

    python plugins/envs/helpdesk/scripts/generate_artifacts.py
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src" / "agentenv_helpdesk" / "artifacts"
VERSION = "1.0.0"

Row = dict[str, Any]


def cents(amount: str) -> int:
    return int(Decimal(amount) * 100)


def words(text: str) -> list[str]:
    return text.split()


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ==== acme: the shared support-desk story ================================================================
# The tables below are data, kept one record per line for reading; the formatter leaves them alone.
# fmt: off

ACME_STAFF = [
    {"email": "support@acme.example", "name": "Support Bot", "role": "bot"},
    {"email": "sam@acme.example", "name": "Sam Rivera", "role": "support"},
    {"email": "priya@acme.example", "name": "Priya Patel", "role": "billing_lead"},
]

ACME_CUSTOMERS = [  # account id, name, email, phone, tier, created
    ("ACC-1001", "Dana Kim", "dana.kim@example.com", "+1-555-0101", "plus", "2024-03-14T18:20:00Z"),
    ("ACC-1002", "Marcus Webb", "marcus.webb@example.com", "+1-555-0102", "standard", "2024-05-02T10:05:00Z"),
    ("ACC-1003", "Lena Okafor", "lena.okafor@example.com", "+1-555-0103", "standard", "2024-07-19T21:44:00Z"),
    ("ACC-1004", "Tomás Herrera", "tomas.herrera@example.com", "+1-555-0104", "standard", "2024-09-08T08:30:00Z"),
    ("ACC-1005", "Aiko Tanaka", "aiko.tanaka@example.com", None, "plus", "2024-11-23T15:12:00Z"),
    ("ACC-1006", "Owen Brooks", "owen.brooks@example.com", "+1-555-0106", "standard", "2025-01-30T12:00:00Z"),
    ("ACC-1007", "Fatima Bennani", "fatima.bennani@example.com", "+1-555-0107", "standard", "2025-03-11T09:41:00Z"),
    ("ACC-1008", "Grace Liu", "grace.liu@example.com", "+1-555-0108", "plus", "2025-04-27T17:03:00Z"),
    ("ACC-1009", "Noah Schmidt", "noah.schmidt@example.com", None, "standard", "2025-06-15T14:55:00Z"),
    ("ACC-1010", "Isabel Moreno", "isabel.moreno@example.com", "+1-555-0110", "standard", "2025-08-04T19:26:00Z"),
    ("ACC-1011", "Ravi Menon", "ravi.menon@example.com", "+1-555-0111", "business", "2025-10-21T11:18:00Z"),
]

ACME_ADDRESSES = {  # account id → street, city, postal code, country (ISO 3166 alpha-2)
    "ACC-1001": ("412 Cedar Lane", "Portland, OR", "97205", "US"),
    "ACC-1002": ("77 Birch Street", "Denver, CO", "80203", "US"),
    "ACC-1003": ("15 Harbour Road", "Bristol", "BS1 4RN", "GB"),
    "ACC-1004": ("Calle Mayor 8", "Madrid", "28013", "ES"),
    "ACC-1005": ("2-14-3 Kita-Aoyama", "Tokyo", "107-0061", "JP"),
    "ACC-1006": ("901 Pine Avenue", "Seattle, WA", "98101", "US"),
    "ACC-1007": ("22 Rue des Lilas", "Lyon", "69003", "FR"),
    "ACC-1008": ("300 Maple Drive", "Austin, TX", "78701", "US"),
    "ACC-1009": ("Lindenstrasse 5", "Berlin", "10969", "DE"),
    "ACC-1010": ("48 Oak Court", "Miami, FL", "33101", "US"),
    "ACC-1011": ("1200 Market Street", "San Francisco, CA", "94103", "US"),
}

ACME_PRODUCTS = {
    "AO-BOOT-TB": ("Trailblazer hiking boots", "89.99"),
    "AO-SOCK-M3": ("Merino socks (3-pack)", "40.00"),
    "AO-PACK-45": ("Summit 45L backpack", "149.00"),
    "AO-JKT-RDG": ("Ridge rain jacket", "119.50"),
    "AO-POLE-TR": ("Trekking poles (pair)", "64.95"),
    "AO-TENT-B2": ("Basecamp 2-person tent", "229.00"),
    "AO-BTL-1L": ("Insulated water bottle 1L", "24.99"),
    "AO-BAG-DWN": ("Down sleeping bag", "189.00"),
    "AO-LAMP-300": ("Headlamp 300lm", "34.50"),
}

# order id, account, placed, status, {sku: qty}, payment method, payment status, captured at.
# Payment ids mirror order ids: ORD-5001 is paid by PAY-7001.
ACME_ORDERS: list[tuple[str, str, str, str, dict[str, int], str, str, str | None]] = [
    ("ORD-4989", "ACC-1002", "2026-09-03T13:10:00Z", "delivered", {"AO-TENT-B2": 1},
     "card", "captured", "2026-09-04T08:00:00Z"),
    ("ORD-4990", "ACC-1003", "2026-09-18T20:31:00Z", "delivered", {"AO-JKT-RDG": 1, "AO-BTL-1L": 1},
     "paypal", "captured", "2026-09-19T08:00:00Z"),
    ("ORD-4991", "ACC-1004", "2026-10-06T07:55:00Z", "shipped", {"AO-PACK-45": 1},
     "card", "captured", "2026-10-07T08:00:00Z"),
    ("ORD-4992", "ACC-1005", "2026-10-12T22:14:00Z", "cancelled", {"AO-BAG-DWN": 1}, "card", "voided", None),
    ("ORD-4993", "ACC-1001", "2026-10-15T18:02:00Z", "delivered", {"AO-LAMP-300": 1},
     "card", "captured", "2026-10-16T08:00:00Z"),
    ("ORD-4994", "ACC-1006", "2026-10-21T12:47:00Z", "delivered", {"AO-POLE-TR": 2},
     "card", "captured", "2026-10-22T08:00:00Z"),
    ("ORD-4995", "ACC-1007", "2026-10-29T16:20:00Z", "delivered", {"AO-BTL-1L": 2, "AO-SOCK-M3": 1},
     "card", "captured", "2026-10-30T08:00:00Z"),
    ("ORD-4996", "ACC-1008", "2026-11-04T10:09:00Z", "delivered", {"AO-BOOT-TB": 1, "AO-SOCK-M3": 1},
     "card", "captured", "2026-11-05T08:00:00Z"),
    ("ORD-4997", "ACC-1009", "2026-11-10T09:36:00Z", "placed", {"AO-TENT-B2": 1}, "card", "authorized", None),
    ("ORD-4998", "ACC-1010", "2026-11-13T15:58:00Z", "shipped", {"AO-JKT-RDG": 1},
     "paypal", "captured", "2026-11-14T08:00:00Z"),
    ("ORD-4999", "ACC-1011", "2026-11-16T11:25:00Z", "delivered", {"AO-PACK-45": 1, "AO-POLE-TR": 1},
     "card", "captured", "2026-11-17T08:00:00Z"),
    ("ORD-5000", "ACC-1002", "2026-11-18T08:44:00Z", "delivered", {"AO-SOCK-M3": 1},
     "card", "captured", "2026-11-19T08:00:00Z"),
    ("ORD-5001", "ACC-1001", "2026-11-20T16:42:00Z", "delivered", {"AO-BOOT-TB": 1, "AO-SOCK-M3": 1},
     "card", "captured", "2026-11-21T08:00:00Z"),
    ("ORD-5002", "ACC-1006", "2026-11-23T19:05:00Z", "placed", {"AO-LAMP-300": 1},
     "card", "authorized", None),
]

ACME_REFUNDS = [  # refund id, order, amount, reason, by, at
    ("REF-2998", "ORD-4989", "50.00", "Goodwill credit for a bent tent pole; customer kept the tent",
     "priya@acme.example", "2026-09-12T15:30:00Z"),
    ("REF-2999", "ORD-4990", "119.50", "Rain jacket returned unworn (wrong size)",
     "priya@acme.example", "2026-10-02T10:15:00Z"),
    ("REF-3000", "ORD-4995", "24.99", "One water bottle arrived dented",
     "priya@acme.example", "2026-11-05T13:40:00Z"),
]

ACME_VERIFIED = {  # order id → (note, by, at)
    "ORD-4989": ("Photo shows the bent pole section", "sam@acme.example", "2026-09-12T14:50:00Z"),
    "ORD-4990": ("Return received at warehouse, tags attached", "sam@acme.example", "2026-10-01T16:00:00Z"),
    "ORD-4995": ("Photo shows a dented bottle", "sam@acme.example", "2026-11-05T13:20:00Z"),
}

# ticket id, account, order, subject, status, priority, assignee, resolution, created,
# then the conversation: (author, public, body, minutes after creation).
ACME_TICKETS: list[tuple[Any, ...]] = [
    ("TCK-8989", "ACC-1002", "ORD-4989", "Tent pole bent on arrival", "closed", "normal", "priya@acme.example",
     "Issued a 50.00 goodwill refund; customer kept the tent.", "2026-09-11T18:22:00Z", [
         ("marcus.webb@example.com", True, "One of the poles of my Basecamp tent is bent. Can you help?", 0),
         ("sam@acme.example", True, "Sorry about that, Marcus! Could you send a photo of the pole?", 95),
         ("marcus.webb@example.com", True, "Photo attached. I'd rather keep the tent if you can give a credit.", 1180),
         ("priya@acme.example", False, "Approved 50.00 goodwill credit, no return needed.", 1230),
         ("priya@acme.example", True, "We've refunded 50.00 to your card. Enjoy the tent!", 1270),
     ]),
    ("TCK-8990", "ACC-1003", "ORD-4990", "Return rain jacket - wrong size", "closed", "normal", "sam@acme.example",
     "Jacket returned unworn; refunded 119.50.", "2026-09-24T09:05:00Z", [
         ("lena.okafor@example.com", True, "The Ridge jacket is too small. How do I return it?", 0),
         ("sam@acme.example", True, "Here is a prepaid return label. We'll refund once it arrives.", 60),
         ("sam@acme.example", False, "Return received 2026-10-01, tags on. Passing to billing.", 10_500),
         ("priya@acme.example", True, "Your return arrived and we've refunded 119.50 to your PayPal.", 11_595),
     ]),
    ("TCK-8991", "ACC-1004", "ORD-4991", "Where is my backpack?", "solved", "normal", "sam@acme.example", None,
     "2026-10-14T11:40:00Z", [
         ("tomas.herrera@example.com", True, "My order ORD-4991 shows shipped a week ago but nothing yet.", 0),
         ("sam@acme.example", False, "Carrier shows a delay at the regional hub.", 25),
         ("sam@acme.example", True, "The carrier had a delay; it is out for delivery tomorrow.", 30),
     ]),
    ("TCK-8992", "ACC-1005", "ORD-4992", "Cancel my sleeping bag order", "closed", "normal", "sam@acme.example",
     "Order cancelled before shipment; card authorization voided.", "2026-10-13T07:02:00Z", [
         ("aiko.tanaka@example.com", True, "Please cancel ORD-4992, I ordered the wrong bag.", 0),
         ("sam@acme.example", True, "Done - the order is cancelled and you were not charged.", 70),
     ]),
    ("TCK-8993", "ACC-1007", "ORD-4995", "Dented water bottle", "closed", "low", "priya@acme.example",
     "Refunded 24.99 for the dented bottle.", "2026-11-04T20:11:00Z", [
         ("fatima.bennani@example.com", True, "One of the two bottles arrived dented.", 0),
         ("priya@acme.example", True, "Refunded 24.99 for that bottle. Sorry about the dent!", 1050),
     ]),
    ("TCK-8994", "ACC-1006", "ORD-4994", "Do the trekking poles fit in carry-on?", "solved", "low",
     "sam@acme.example", None, "2026-11-08T13:27:00Z", [
         ("owen.brooks@example.com", True, "Collapsed length of the poles? Flying next week.", 0),
         ("sam@acme.example", True, "They collapse to 62 cm, which fits most carry-on bags.", 40),
     ]),
    ("TCK-8995", "ACC-1008", None, "Change the email on my account", "pending", "normal", "sam@acme.example", None,
     "2026-11-12T16:48:00Z", [
         ("grace.liu@example.com", True, "I'd like to use a new email address for my account.", 0),
         ("sam@acme.example", True, "Happy to help - please confirm the new address by replying here.", 55),
     ]),
    ("TCK-8996", "ACC-1009", "ORD-4997", "When will my tent ship?", "open", "normal", "sam@acme.example", None,
     "2026-11-17T10:03:00Z", [
         ("noah.schmidt@example.com", True, "Ordered the Basecamp tent a week ago, still not shipped?", 0),
         ("sam@acme.example", False, "Backordered until 2026-11-28; payment still only authorized.", 30),
     ]),
    ("TCK-8997", "ACC-1010", "ORD-4998", "Wrong color jacket shipped?", "pending", "high", "sam@acme.example", None,
     "2026-11-19T08:15:00Z", [
         ("isabel.moreno@example.com", True, "The tracking page says 'Ridge jacket - olive', I ordered navy.", 0),
         ("sam@acme.example", True, "Could you send a photo of the label when it arrives?", 45),
     ]),
    ("TCK-8998", "ACC-1011", "ORD-4999", "Backpack zipper stuck", "open", "high", None, None,
     "2026-11-21T14:36:00Z", [
         ("ravi.menon@example.com", True, "The main zipper of the Summit 45L is stuck halfway.", 0),
     ]),
    ("TCK-8999", "ACC-1002", "ORD-5000", "Invoice for socks order", "solved", "low", "priya@acme.example", None,
     "2026-11-22T09:50:00Z", [
         ("marcus.webb@example.com", True, "Could I get an invoice for ORD-5000 for my expenses?", 0),
         ("priya@acme.example", True, "Invoice sent to your email address.", 120),
     ]),
    ("TCK-9000", "ACC-1006", "ORD-5002", "Add a gift note to my order", "open", "low", None, None,
     "2026-11-23T19:30:00Z", [
         ("owen.brooks@example.com", True, "Can you add a note 'Happy birthday, Jo!' to ORD-5002?", 0),
     ]),
    ("TCK-9001", "ACC-1001", "ORD-5001", "Boots arrived damaged — refund please", "open", "normal", None, None,
     "2026-11-24T09:12:00Z", [
         ("dana.kim@example.com", True,
          "Hi, my Trailblazer hiking boots from order ORD-5001 arrived damaged: the sole is split. "
          "The Merino socks are fine, so I'd like a refund of 89.99 for the boots only, please. Thanks, Dana", 0),
     ]),
]

# fmt: on


def acme() -> dict[str, Any]:
    accounts = [
        {"account_id": a, "email": e, "name": n, "phone": p, "tier": t, "created_at": c}
        | dict(zip(("street", "city", "postal_code", "country"), ACME_ADDRESSES[a], strict=True))
        for a, n, e, p, t, c in ACME_CUSTOMERS
    ]
    orders, items, payments = [], [], []
    for order_id, account_id, placed, status, lines, method, pay_status, captured_at in ACME_ORDERS:
        total = sum(cents(ACME_PRODUCTS[sku][1]) * qty for sku, qty in lines.items())
        note, by, at = ACME_VERIFIED.get(order_id, (None, None, None))
        orders.append(order_row(order_id, account_id, placed, status, total, note, by, at))
        for line_no, (sku, qty) in enumerate(lines.items(), start=1):
            description, price = ACME_PRODUCTS[sku]
            items.append(item_row(order_id, line_no, sku, description, qty, cents(price)))
        payment_id = f"PAY-{int(order_id[4:]) + 2000}"
        captured = total if pay_status == "captured" else 0
        payments.append(payment_row(payment_id, order_id, method, pay_status, total, captured, placed, captured_at))
    refunds = [
        refund_row(rid, order_id, f"PAY-{int(order_id[4:]) + 2000}", cents(amount), reason, by, at)
        for rid, order_id, amount, reason, by, at in ACME_REFUNDS
    ]
    tickets: list[Row] = []
    comments: list[Row] = []
    for tid, account_id, order_id, subject, status, priority, assignee, resolution, created, convo in ACME_TICKETS:
        start = datetime.fromisoformat(created)
        times = [iso(start + timedelta(minutes=m)) for *_, m in convo]
        closed_at = times[-1] if status == "closed" else None
        tickets.append(
            ticket_row(
                tid,
                account_id,
                order_id,
                subject,
                status,
                priority,
                assignee,
                resolution,
                created,
                times[-1],
                closed_at,
            )
        )
        for (author, public, body, _), at in zip(convo, times, strict=True):
            comments.append(comment_row(len(comments) + 1, tid, author, body, public, at))
    return {
        "name": "acme",
        "env": "helpdesk",
        "version": VERSION,
        "description": "Acme Outfitters support desk: Dana Kim's damaged boots (TCK-9001, ORD-5001, PAY-7001) "
        "among a dozen other customers, orders and tickets.",
        "data": {
            "desk": [
                {
                    "company": "Acme Outfitters",
                    "domain": "acme.example",
                    "support_email": "support@acme.example",
                    "currency": "USD",
                }
            ],
            "staff": ACME_STAFF,
            "accounts": accounts,
            "orders": orders,
            "order_items": items,
            "payments": payments,
            "refunds": refunds,
            "tickets": tickets,
            "ticket_comments": comments,
        },
    }


# ==== row builders (one column order for every row of a table) ==========================================


def order_row(
    order_id: str,
    account_id: str,
    placed: str,
    status: str,
    total: int,
    note: str | None,
    by: str | None,
    at: str | None,
) -> Row:
    return {
        "order_id": order_id,
        "account_id": account_id,
        "placed_at": placed,
        "status": status,
        "currency": "USD",
        "total_cents": total,
        "verified": int(note is not None),
        "verified_note": note,
        "verified_by": by,
        "verified_at": at,
    }


def item_row(order_id: str, line_no: int, sku: str, description: str, qty: int, price: int) -> Row:
    return {
        "order_id": order_id,
        "line_no": line_no,
        "sku": sku,
        "description": description,
        "quantity": qty,
        "unit_price_cents": price,
    }


def payment_row(
    payment_id: str,
    order_id: str,
    method: str,
    status: str,
    authorized: int,
    captured: int,
    created: str,
    captured_at: str | None,
) -> Row:
    return {
        "payment_id": payment_id,
        "order_id": order_id,
        "method": method,
        "status": status,
        "authorized_cents": authorized,
        "captured_cents": captured,
        "created_at": created,
        "captured_at": captured_at,
    }


def refund_row(refund_id: str, order_id: str, payment_id: str, amount: int, reason: str, by: str, at: str) -> Row:
    return {
        "refund_id": refund_id,
        "order_id": order_id,
        "payment_id": payment_id,
        "amount_cents": amount,
        "reason": reason,
        "created_by": by,
        "created_at": at,
    }


def ticket_row(
    ticket_id: str,
    account_id: str,
    order_id: str | None,
    subject: str,
    status: str,
    priority: str,
    assignee: str | None,
    resolution: str | None,
    created: str,
    updated: str,
    closed_at: str | None,
) -> Row:
    return {
        "ticket_id": ticket_id,
        "account_id": account_id,
        "order_id": order_id,
        "subject": subject,
        "status": status,
        "priority": priority,
        "assignee": assignee,
        "resolution": resolution,
        "created_at": created,
        "updated_at": updated,
        "closed_at": closed_at,
    }


def comment_row(comment_id: int, ticket_id: str, author: str, body: str, public: bool, at: str) -> Row:
    return {
        "comment_id": comment_id,
        "ticket_id": ticket_id,
        "author": author,
        "body": body,
        "public": int(public),
        "created_at": at,
    }


# ==== globex: a large desk for benchmarks ================================================================

GLOBEX_SEED = 20261201
GLOBEX_END = datetime(2026, 11, 30, 23, 0, tzinfo=UTC)
GLOBEX_START = datetime(2025, 1, 1, tzinfo=UTC)

# fmt: off
FIRST = words("Ada Ben Cara Dev Eli Fay Gus Hana Ivan Jade Kofi Lara Milo Nia Omar Pia Quinn Rosa Sami Tara Umar Vera "
         "Wes Xena Yuri Zoe Abel Bea Cyrus Dina Emil Flor Gabe Hugo Iris Joel Kira Leo Maya Nico Olga Pablo "
         "Rhea Sven Tess Uri Vik Wren Yara Zane")
LAST = words("Abbott Baker Chen Diaz Evans Fischer Garcia Hughes Ito Jensen Khan Lopez Martin Novak Oliveira Park "
        "Quinn Reyes Singh Torres Ueda Vargas Walsh Xu Young Zimmer Adler Brandt Costa Dubois Eriksen Ferreira "
        "Gray Hale Ibrahim Jovanovic Kowalski Lind Moreau Nakamura Ortiz Petrov Rossi Silva Tan Varga Weber "
        "Yilmaz Zhang")
# fmt: on
MAIL_DOMAINS = ("example.com", "example.net", "example.org")

GLOBEX_STAFF = [
    {"email": "support@globex.example", "name": "Globex Support", "role": "bot"},
    *(
        {"email": f"{first.lower()}@globex.example", "name": f"{first} {last}", "role": role}
        for first, last, role in [
            ("Hank", "Scorpio", "lead"),
            ("Alma", "Ruiz", "support"),
            ("Bruno", "Keller", "support"),
            ("Chloe", "Nguyen", "support"),
            ("Dmitri", "Volkov", "support"),
            ("Esme", "Carter", "support"),
            ("Farid", "Haddad", "billing"),
            ("Gwen", "Lowe", "billing"),
        ]
    ),
]

GLOBEX_PRODUCTS = [
    ("GX-DOCK-C", "Hyperlane USB-C dock", "129.00"),
    ("GX-KB-MX", "Tactile mechanical keyboard", "99.50"),
    ("GX-MSE-W", "Wireless ergonomic mouse", "45.99"),
    ("GX-MON-27", "27in 4K monitor", "379.00"),
    ("GX-CAM-HD", "HD webcam", "69.95"),
    ("GX-HS-NC", "Noise-cancelling headset", "149.99"),
    ("GX-CHR-ER", "Ergonomic office chair", "289.00"),
    ("GX-DSK-SS", "Sit-stand desk", "449.00"),
    ("GX-LMP-LED", "LED desk lamp", "39.90"),
    ("GX-CBL-3", "USB-C cable (3-pack)", "19.99"),
    ("GX-SSD-1T", "Portable SSD 1TB", "109.00"),
    ("GX-HUB-7", "7-port USB hub", "34.95"),
    ("GX-PAD-XL", "XL desk mat", "24.50"),
    ("GX-ARM-M", "Monitor arm", "84.00"),
    ("GX-SPK-BT", "Bluetooth speaker", "59.99"),
    ("GX-CHG-65", "65W GaN charger", "49.00"),
    ("GX-RTR-6", "Wi-Fi 6 router", "179.00"),
    ("GX-PRN-LZ", "Compact laser printer", "219.99"),
    ("GX-INK-BK", "Toner cartridge (black)", "64.50"),
    ("GX-BAG-15", "15in laptop backpack", "79.00"),
]

TOPICS = [  # subject template, first message template, needs an order
    ("Damaged item: {product}", "My {product} from {order} arrived damaged. What can you do?", True),
    ("Where is my order {order}?", "Order {order} still hasn't arrived. Can you check the tracking?", True),
    ("Refund request for {order}", "I'd like a refund for the {product} in {order}; it isn't what I expected.", True),
    ("Wrong item received in {order}", "I received something other than the {product} I ordered in {order}.", True),
    ("Cancel order {order}", "Please cancel {order} if it hasn't shipped yet.", True),
    ("Charged twice?", "My bank shows two charges for {order}. Can you check?", True),
    ("{product} stopped working", "The {product} I bought ({order}) stopped working after a few weeks.", True),
    ("Password reset not arriving", "I requested a password reset but the email never came.", False),
    ("Update my shipping address", "Please update the default shipping address on my account.", False),
    ("Question about warranty", "How long is the warranty on your products, and how do I claim it?", False),
    ("Business invoice needed", "Can you send VAT invoices for my recent purchases?", False),
]
AGENT_REPLIES = [
    "Thanks for reaching out - I'm looking into this now.",
    "Could you send a photo or a few more details so we can help?",
    "I've checked with the warehouse and will update you shortly.",
    "Sorry for the trouble! We've taken care of it on our side.",
    "Here is what we found: the carrier scanned the parcel yesterday.",
]
INTERNAL_NOTES = [
    "Checked order history, customer is in good standing.",
    "Escalating to billing for review.",
    "Carrier claim opened.",
    "Possible duplicate of an earlier ticket.",
    "Waiting on warehouse confirmation.",
]
CUSTOMER_FOLLOWUPS = [
    "Thanks, any update?",
    "Photo attached.",
    "That works for me, thank you.",
    "Still waiting on this, please help.",
]
RESOLUTIONS = [
    "Replacement shipped at no charge.",
    "Refund issued to the original payment method.",
    "Answered the customer's question.",
    "Customer confirmed the issue is resolved.",
    "Order cancelled and authorization released.",
    "Duplicate ticket; merged into the earlier one.",
]
REFUND_REASONS = [
    "Item arrived damaged",
    "Returned unopened",
    "Price adjustment",
    "Wrong item shipped",
    "Goodwill credit",
]


def moments(rng: random.Random, count: int, start: datetime, end: datetime) -> Iterator[datetime]:
    """`count` sorted whole-minute times between start and end."""
    span = int((end - start).total_seconds() // 60)
    for minute in sorted(rng.randrange(span) for _ in range(count)):
        yield start + timedelta(minutes=minute)


def globex(n_accounts: int = 2000, n_orders: int = 5000, n_tickets: int = 3000) -> dict[str, Any]:
    rng = random.Random(GLOBEX_SEED)
    accounts: list[Row] = []
    seen: set[str] = set()
    for i, created in enumerate(moments(rng, n_accounts, GLOBEX_START - timedelta(days=700), GLOBEX_START)):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        email = f"{first}.{last}@{rng.choice(MAIL_DOMAINS)}".lower()
        if email in seen:
            email = email.replace("@", f"{i}@")
        seen.add(email)
        accounts.append(
            {
                "account_id": f"ACC-{10001 + i}",
                "email": email,
                "name": f"{first} {last}",
                "phone": f"+1-555-{rng.randrange(10_000):04d}" if rng.random() < 0.8 else None,
                "tier": rng.choices(["standard", "plus", "business"], [80, 15, 5])[0],
                "created_at": iso(created),
            }
        )

    orders, items, payments, refunds = [], [], [], []
    orders_of: dict[str, list[Row]] = {}
    for i, placed in enumerate(moments(rng, n_orders, GLOBEX_START, GLOBEX_END)):
        order_id, payment_id = f"ORD-{50001 + i}", f"PAY-{70001 + i}"
        account = rng.choice(accounts)
        age_days = (GLOBEX_END - placed).days
        if age_days < 3:
            status = rng.choice(["placed", "placed", "shipped"])
        elif age_days < 8:
            status = rng.choice(["shipped", "delivered"])
        else:
            status = rng.choices(["delivered", "cancelled"], [95, 5])[0]
        total = 0
        for line_no, (sku, description, price) in enumerate(rng.sample(GLOBEX_PRODUCTS, rng.randint(1, 4)), 1):
            qty = rng.choices([1, 2, 3], [80, 15, 5])[0]
            items.append(item_row(order_id, line_no, sku, description, qty, cents(price)))
            total += cents(price) * qty
        pay_status = {"placed": "authorized", "cancelled": "voided"}.get(status, "captured")
        captured_at = iso(placed + timedelta(hours=rng.randint(1, 30))) if pay_status == "captured" else None
        payments.append(
            payment_row(
                payment_id,
                order_id,
                rng.choices(["card", "paypal", "bank_transfer"], [75, 20, 5])[0],
                pay_status,
                total,
                total if pay_status == "captured" else 0,
                iso(placed),
                captured_at,
            )
        )
        verified: tuple[str | None, str | None, str | None] = (None, None, None)
        if pay_status == "captured" and status == "delivered" and rng.random() < 0.07:
            agent = rng.choice(GLOBEX_STAFF[1:])["email"]
            at = placed + timedelta(days=rng.randint(3, 20))
            verified = ("Customer claim checked against photos and carrier scan", agent, iso(at))
            left = total
            for n in range(rng.randint(1, 2)):
                amount = min(left, rng.choice([left, left // 2, cents("10.00"), cents("25.00")]))
                if amount <= 0:
                    break
                refunds.append(
                    (
                        iso(at + timedelta(hours=1 + n)),
                        order_id,
                        payment_id,
                        amount,
                        rng.choice(REFUND_REASONS),
                        rng.choice(GLOBEX_STAFF[7:])["email"],
                    )
                )
                left -= amount
        order = order_row(order_id, account["account_id"], iso(placed), status, total, *verified)
        orders.append(order)
        orders_of.setdefault(account["account_id"], []).append(order)
    refunds.sort()
    refund_rows = [
        refund_row(f"REF-{30001 + i}", o, p, a, reason, by, at) for i, (at, o, p, a, reason, by) in enumerate(refunds)
    ]

    drafts = []
    for _ in range(n_tickets):
        account = rng.choice(accounts)
        mine = orders_of.get(account["account_id"], [])
        topic = rng.choice(TOPICS if mine else [t for t in TOPICS if not t[2]])
        about = rng.choice(mine) if topic[2] else None
        start = datetime.fromisoformat(about["placed_at"]) if about else GLOBEX_START
        created = start + timedelta(minutes=rng.randrange(max(1, int((GLOBEX_END - start).total_seconds() // 60))))
        drafts.append((created, account, topic, about))
    drafts.sort(key=lambda draft: draft[0])
    products_of: dict[str, list[str]] = {}
    for item in items:
        products_of.setdefault(item["order_id"], []).append(item["description"])
    tickets: list[Row] = []
    comments: list[Row] = []
    agents = [s["email"] for s in GLOBEX_STAFF[1:]]
    for i, (created, account, (subject_t, body_t, _), about) in enumerate(drafts):
        ticket_id = f"TCK-{90001 + i}"
        about_id = about["order_id"] if about else None
        product = rng.choice(products_of[about_id]) if about_id else ""
        fill = {"product": product, "order": about_id or ""}
        status = rng.choices(["closed", "solved", "open", "pending"], [45, 20, 20, 15])[0]
        priority = rng.choices(["low", "normal", "high", "urgent"], [20, 55, 20, 5])[0]
        assignee = None if status == "open" and rng.random() < 0.4 else rng.choice(agents)
        at = created
        convo = [(account["email"], True, body_t.format(**fill), at)]
        for _ in range(rng.randint(0, 3) if status == "open" else rng.randint(1, 4)):
            at += timedelta(minutes=rng.randint(5, 2000))
            kind = rng.random()
            who = assignee or rng.choice(agents)
            if kind < 0.5:
                convo.append((who, True, rng.choice(AGENT_REPLIES), at))
            elif kind < 0.75:
                convo.append((who, False, rng.choice(INTERNAL_NOTES), at))
            else:
                convo.append((account["email"], True, rng.choice(CUSTOMER_FOLLOWUPS), at))
        last = iso(min(at, GLOBEX_END))
        resolution = rng.choice(RESOLUTIONS) if status == "closed" else None
        tickets.append(
            ticket_row(
                ticket_id,
                account["account_id"],
                about_id,
                subject_t.format(**fill),
                status,
                priority,
                assignee,
                resolution,
                iso(created),
                last,
                last if status == "closed" else None,
            )
        )
        for author, public, body, when in convo:
            comments.append(comment_row(len(comments) + 1, ticket_id, author, body, public, iso(min(when, GLOBEX_END))))
    return {
        "name": "globex",
        "env": "helpdesk",
        "version": VERSION,
        "description": f"Globex Corp support desk (synthetic, seed {GLOBEX_SEED}): {n_accounts} customers, "
        f"{n_orders} orders, {n_tickets} tickets, for benchmarks.",
        "data": {
            "desk": [
                {
                    "company": "Globex Corp",
                    "domain": "globex.example",
                    "support_email": "support@globex.example",
                    "currency": "USD",
                }
            ],
            "staff": GLOBEX_STAFF,
            "accounts": accounts,
            "orders": orders,
            "order_items": items,
            "payments": payments,
            "refunds": refund_rows,
            "tickets": tickets,
            "ticket_comments": comments,
        },
    }


def encode(document: dict[str, Any], *, indent: int | None) -> bytes:
    separators = (",", ": ") if indent else (",", ":")
    return (json.dumps(document, indent=indent, separators=separators, ensure_ascii=False) + "\n").encode()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "acme.json").write_bytes(encode(acme(), indent=1))
    (OUT / "globex.json.gz").write_bytes(gzip.compress(encode(globex(), indent=None), compresslevel=9, mtime=0))
    for path in sorted(OUT.iterdir()):
        print(f"{path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
