"""Generate the email app's packaged artifacts, deterministically.

    python plugins/envs/email/scripts/generate_artifacts.py

writes `acme.json` (the hand-written support-desk story shared with the Slack and helpdesk apps) and
`globex.json.gz` (5,000 generated emails across ~100 mailboxes, for benchmarks) into
`src/agentenv_email/artifacts/`. Re-running produces identical bytes: the only randomness is a
seeded `random.Random`, timestamps are computed, and gzip is written with mtime 0.

Rows follow the env's rules for mail sent through its tools: the sender's copy is read and labelled
`sent`; each recipient's copy is labelled `inbox` (unread unless the story says it was read).
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src" / "agentenv_email" / "artifacts"
VERSION = "1.0.0"


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def reply_subject(subject: str) -> str:
    return subject if subject.lower().startswith("re:") else f"Re: {subject}"


@dataclass
class Mail:
    """One message of a thread as the story tells it, before ids are given out."""

    sent_at: datetime
    sender: str
    to: list[str]
    subject: str
    body: str
    cc: list[str] = field(default_factory=list)
    attachments: list[tuple[str, str, int]] = field(default_factory=list)
    unread: set[str] = field(default_factory=set)  # mailboxes whose copy is still unread
    labels: dict[str, list[str]] = field(default_factory=dict)  # mailbox → extra user labels
    archived: set[str] = field(default_factory=set)  # mailboxes that archived their copy
    thread: int = 0
    parent: int | None = None  # index (within the thread) of the mail this answers
    forward_of: tuple[int, int] | None = None  # (thread, index) of the mail this forwards


class Builder:
    """Collects mailboxes and threads, then lays out the env's tables in chronological id order."""

    def __init__(self) -> None:
        self.mailboxes: dict[str, str] = {}
        self.threads: list[list[Mail]] = []

    def mailbox(self, address: str, name: str) -> str:
        self.mailboxes[address] = name
        return address

    def thread(self, mails: list[Mail]) -> None:
        for index, mail in enumerate(mails):
            mail.thread = len(self.threads)
            if index and mail.parent is None:
                mail.parent = index - 1
        self.threads.append(mails)

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        order = sorted(
            ((mail.sent_at, t, i) for t, mails in enumerate(self.threads) for i, mail in enumerate(mails)),
        )
        thread_ids: dict[int, str] = {}
        email_ids: dict[tuple[int, int], str] = {}
        for n, (_, t, i) in enumerate(order):
            email_ids[(t, i)] = f"M-{1001 + n}"
            thread_ids.setdefault(t, f"TH-{1001 + len(thread_ids)}")
        emails, attachments, deliveries, labels = [], [], [], []
        for _, t, i in order:
            mail = self.threads[t][i]
            email_id = email_ids[(t, i)]
            for address in [mail.sender, *mail.to, *mail.cc]:
                if address not in self.mailboxes:
                    raise ValueError(f"{address} has no mailbox (thread {t}: {mail.subject})")
            emails.append(
                {
                    "id": email_id,
                    "thread_id": thread_ids[t],
                    "in_reply_to": (
                        email_ids[mail.forward_of]
                        if mail.forward_of
                        else None
                        if mail.parent is None
                        else email_ids[(t, mail.parent)]
                    ),
                    "from_address": mail.sender,
                    "to_addresses": json.dumps(mail.to),
                    "cc_addresses": json.dumps(mail.cc),
                    "subject": mail.subject,
                    "body": mail.body,
                    "sent_at": stamp(mail.sent_at),
                }
            )
            for position, (filename, mime, size) in enumerate(mail.attachments, start=1):
                attachments.append(
                    {
                        "email_id": email_id,
                        "position": position,
                        "filename": filename,
                        "mime_type": mime,
                        "size_bytes": size,
                    }
                )
            holders = {mail.sender: "sent"}
            for address in [*mail.to, *mail.cc]:
                holders.setdefault(address, "inbox")
            for address, system in holders.items():
                deliveries.append(
                    {"mailbox": address, "email_id": email_id, "is_read": int(address not in mail.unread)}
                )
                place = "archive" if address in mail.archived and system == "inbox" else system
                names = [place] + (["archive"] if address in mail.archived and system == "sent" else [])
                for name in [*names, *mail.labels.get(address, [])]:
                    labels.append({"mailbox": address, "email_id": email_id, "label": name})
        return {
            "mailboxes": [{"address": a, "display_name": n} for a, n in sorted(self.mailboxes.items())],
            "emails": emails,
            "attachments": attachments,
            "deliveries": deliveries,
            "labels": labels,
        }


def document(name: str, description: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "env": "email", "version": VERSION, "description": description, "data": data}


# ---- acme: the shared support-desk story --------------------------------------------------------------


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def text(*paragraphs: str) -> str:
    """A plain-text body: paragraphs separated by a blank line."""
    return "\n\n".join(paragraphs)


# The story is data; keep it laid out by hand.
# fmt: off
def acme() -> dict[str, Any]:
    b = Builder()
    support = b.mailbox("support@acme.example", "Acme Support")
    sam = b.mailbox("sam@acme.example", "Sam Rivera")
    priya = b.mailbox("priya@acme.example", "Priya Patel")
    dana = b.mailbox("dana.kim@example.com", "Dana Kim")
    marcus = b.mailbox("marcus.lee@example.com", "Marcus Lee")
    olivia = b.mailbox("olivia.chen@example.net", "Olivia Chen")
    raj = b.mailbox("raj.mehta@example.org", "Raj Mehta")
    elena = b.mailbox("elena.garcia@example.com", "Elena Garcia")
    tom = b.mailbox("tom.becker@example.net", "Tom Becker")
    aisha = b.mailbox("aisha.okafor@example.com", "Aisha Okafor")
    kenji = b.mailbox("kenji.watanabe@example.org", "Kenji Watanabe")
    trailgear = b.mailbox("orders@trailgear-supply.example", "TrailGear Supply")
    parcel = b.mailbox("billing@parcelpoint.example", "ParcelPoint Shipping")
    spam = b.mailbox("prizes@deals-galore.example", "Deals Galore")

    subject = "Holiday returns window"
    b.thread([
        Mail(at(10, 9, 5), sam, [support], subject, cc=[priya], labels={support: ["policies"]}, body=text(
            "Hi team,",
            "Reminder for the season: orders placed between November 1 and December 31 can be returned "
            "until January 31. Damaged or defective items are handled as usual: refund or replacement, "
            "customer's choice, and no need to send the item back if they send a photo.",
            "Sam")),
        Mail(at(10, 10, 40), priya, [sam], reply_subject(subject), cc=[support],
             labels={support: ["policies"]}, body=text(
            "Thanks Sam. One addition from billing: refunds go back to the original payment method, never "
            "as store credit unless the customer asks for it.",
            "Priya")),
    ])

    subject = "Where is my order ORD-4987?"
    shipping = {support: ["shipping"]}
    b.thread([
        Mail(at(12, 14, 2), marcus, [support], subject, archived={support}, labels=shipping, body=text(
            "Hello,",
            "I ordered a rain shell (ORD-4987) a week ago and the tracking page still says 'label created'. "
            "Can you check what is going on?",
            "Thanks,\nMarcus Lee")),
        Mail(at(12, 15, 30), support, [marcus], reply_subject(subject), archived={support}, labels=shipping,
             body=text(
            "Hi Marcus,",
            "Sorry for the wait. ParcelPoint picked the parcel up this morning; tracking number PP-88410273 "
            "should update tonight. Expected delivery is Friday, November 14.",
            "Best,\nAcme Support")),
        Mail(at(14, 18, 12), marcus, [support], reply_subject(subject), archived={support}, labels=shipping,
             body=text("Got it today, thanks for checking!", "Marcus")),
    ])

    subject = "Exchange for a smaller size"
    exchanges = {support: ["exchanges"]}
    b.thread([
        Mail(at(13, 8, 55), olivia, [support], subject, labels=exchanges, body=text(
            "Hi there,",
            "The Summit insulated jacket from order ORD-4962 is too big. Could I exchange the medium for "
            "a small?",
            "Olivia")),
        Mail(at(13, 11, 20), support, [olivia], reply_subject(subject), labels=exchanges, body=text(
            "Hi Olivia,",
            "Of course. Small is in stock. Please confirm the color you want and we will send a prepaid "
            "return label for the medium.",
            "Acme Support")),
        Mail(at(13, 12, 3), olivia, [support], reply_subject(subject), labels=exchanges,
             body=text("Same color please, the forest green. Thank you!", "Olivia")),
    ])

    subject = "Invoice INV-PP-2211 for October shipments"
    b.thread([
        Mail(at(14, 7, 0), parcel, [priya], subject,
             attachments=[("INV-PP-2211.pdf", "application/pdf", 184_320)], body=text(
            "Dear Acme Outfitters,",
            "Please find attached invoice INV-PP-2211 for 412 parcels shipped in October, total "
            "3,296.00 USD, due December 14.",
            "ParcelPoint Billing")),
        Mail(at(14, 9, 45), priya, [parcel], reply_subject(subject), body=text(
            "Received, thank you. It is scheduled for payment on December 10.",
            "Priya Patel\nBilling lead, Acme Outfitters")),
    ])

    subject = "Restock: Trailblazer hiking boots"
    b.thread([
        Mail(at(15, 16, 10), trailgear, [sam], subject, cc=[support], body=text(
            "Hi Sam,",
            "The next shipment of Trailblazer hiking boots (all sizes) leaves our warehouse on December 1 "
            "and should reach you by December 5. Sizes 8 to 10 are currently out of stock on our side.",
            "TrailGear Supply, order desk")),
        Mail(at(15, 17, 2), sam, [trailgear], reply_subject(subject), cc=[support], body=text(
            "Thanks for the heads-up. Please reserve 40 pairs for us from that shipment.",
            "Sam Rivera")),
    ])

    subject = "Promo code FALL15 not working"
    billing = {support: ["billing"]}
    b.thread([
        Mail(at(16, 20, 31), raj, [support], subject, archived={support}, labels=billing, body=text(
            "Hi,",
            "The code FALL15 from your newsletter says 'expired' at checkout, but the email said it is "
            "valid until November 30. Can you help?",
            "Raj Mehta")),
        Mail(at(17, 9, 14), support, [raj], reply_subject(subject), archived={support}, labels=billing,
             body=text(
            "Hi Raj,",
            "Sorry about that, the code was switched off by mistake. It works again now; please try once "
            "more.",
            "Acme Support")),
        Mail(at(17, 10, 2), raj, [support], reply_subject(subject), archived={support}, labels=billing,
             body=text("Worked, thanks!", "Raj")),
    ])

    subject = "Refunds: keep billing in the loop"
    policies = {support: ["policies"]}
    b.thread([
        Mail(at(17, 13, 0), priya, [support, sam], subject, labels=policies, body=text(
            "Hi both,",
            "When you refund a customer, please email me the order number, the payment id and the amount "
            "the same day, so billing can reconcile payments at the end of the month.",
            "Priya")),
        Mail(at(17, 13, 25), sam, [priya], reply_subject(subject), cc=[support], labels=policies, body=text(
            "Will do. Support, please reply-all on this thread for each refund.",
            "Sam")),
    ])

    subject = "Invoice copy for order ORD-4950"
    b.thread([
        Mail(at(18, 10, 6), elena, [support], subject, labels=billing, body=text(
            "Hello,",
            "Could you send me an invoice for order ORD-4950? I need it for my expense report.",
            "Elena Garcia")),
        Mail(at(18, 11, 48), support, [elena], reply_subject(subject), labels=billing,
             attachments=[("invoice-ORD-4950.pdf", "application/pdf", 96_512)],
             body=text("Hi Elena,", "The invoice for ORD-4950 is attached.", "Acme Support")),
    ])

    subject = "Wholesale inquiry for our hiking club"
    inquiry = text(
        "Hi Acme,",
        "I run the Ridgeline Hiking Club (about 60 members). Do you offer group or wholesale pricing on "
        "boots and socks?",
        "Tom Becker")
    wholesale = {support: ["wholesale"]}
    b.thread([Mail(at(19, 15, 33), tom, [support], subject, labels=wholesale, body=inquiry)])
    b.thread([
        Mail(at(19, 16, 1), support, [sam], f"Fwd: {subject}", labels=wholesale,
             forward_of=(len(b.threads) - 1, 0), body=text(
            "Sam, can you take this one? Group pricing is your call.",
            "---------- Forwarded message ----------\nFrom: Tom Becker <tom.becker@example.net>\n"
            f"Date: 2026-11-19T15:33:00Z\nSubject: {subject}\nTo: support@acme.example",
            inquiry)),
    ])

    subject = "Q4 billing reconciliation"
    b.thread([
        Mail(at(20, 9, 0), sam, [priya], subject, body=text(
            "Hi Priya,",
            "Do you have the November refund totals yet? I want them for the support review on "
            "December 2.",
            "Sam")),
        Mail(at(20, 11, 30), priya, [sam], reply_subject(subject), body=text(
            "Not yet, I close the month on December 1. I will send them then.",
            "Priya")),
    ])

    b.thread([
        Mail(at(20, 18, 22), support, [dana], "Your Acme Outfitters order ORD-5001", body=text(
            "Hi Dana,",
            "Thanks for your order! Here is your summary.",
            "Order: ORD-5001 (placed 2026-11-20)\n"
            "- Trailblazer hiking boots: 89.99 USD\n"
            "- Merino socks (3-pack): 40.00 USD\n"
            "Total: 129.99 USD, paid (payment PAY-7001)",
            "Account: ACC-1001",
            "Acme Outfitters")),
    ])

    b.thread([
        Mail(at(21, 7, 48), aisha, [support], "Socks sizing question", unread={support}, body=text(
            "Hi,",
            "I wear a women's size 9 shoe. Should I get the M or L Merino socks?",
            "Thanks,\nAisha")),
    ])

    b.thread([
        Mail(at(21, 16, 5), sam, [support], "Shift swap Saturday", body=text(
            "FYI: I'm covering the inbox this Saturday instead of Sunday.", "Sam")),
    ])

    b.thread([
        Mail(at(21, 19, 10), support, [dana], "Your order ORD-5001 has shipped", body=text(
            "Hi Dana,",
            "Good news: order ORD-5001 is on its way with ParcelPoint, tracking number PP-88533190. "
            "Expected delivery: November 23.",
            "Acme Outfitters")),
    ])

    b.thread([
        Mail(at(22, 12, 40), marcus, [support], "Return label request", unread={support}, body=text(
            "Hi again,",
            "The rain shell from ORD-4987 leaks at the zipper. Could you send me a return label? I would "
            "like a replacement.",
            "Marcus")),
    ])

    b.thread([
        Mail(at(22, 3, 14), spam, [support], "Congratulations!!! You've won a $500 gift card",
             unread={support}, body=text(
            "CLAIM YOUR PRIZE NOW! Click the link and enter your card details to receive your $500 gift "
            "card. Offer expires in 24 hours!!!")),
    ])

    subject = "Tent pole replacement"
    b.thread([
        Mail(at(23, 10, 12), kenji, [support], subject,
             attachments=[("bent_pole.jpg", "image/jpeg", 1_804_288)], body=text(
            "Hello,",
            "One pole of my Basecamp 2 tent bent on the first night (photo attached). Can I get a "
            "replacement pole?",
            "Kenji Watanabe")),
        Mail(at(23, 13, 5), support, [kenji], reply_subject(subject), body=text(
            "Hi Kenji,",
            "Sorry to hear that. Could you tell us your order number so we can ship a replacement pole?",
            "Acme Support")),
        Mail(at(23, 21, 47), kenji, [support], reply_subject(subject), unread={support},
             body=text("Sure, it is ORD-4999.", "Kenji")),
    ])

    b.thread([
        Mail(at(24, 8, 47), dana, [support], DANA_SUBJECT, unread={support},
             attachments=[("boots_sole_split.jpg", "image/jpeg", 2_348_112)], body=text(
            "Hi Acme Support,",
            "My order ORD-5001 arrived yesterday, but the Trailblazer hiking boots are damaged: the sole "
            "of the left boot is split along the side (photo attached). The Merino socks are fine and I'm "
            "keeping them.",
            "Please refund 89.99 USD for the boots only.",
            "Thanks,\nDana Kim\nAccount ACC-1001")),
    ])

    return document(
        "acme",
        "Acme Outfitters support mailbox and colleagues, November 2026: Dana Kim's damaged-boots email "
        "(ORD-5001) is unread in support@acme.example's inbox among ~30 other customer and internal emails.",
        b.tables(),
    )
# fmt: on


DANA_SUBJECT = "Boots arrived damaged — refund please"  # the same subject as helpdesk ticket TCK-9001


# ---- globex: a large generated company mailbox --------------------------------------------------------

FIRST = (
    "Alex",
    "Bianca",
    "Carlos",
    "Deepa",
    "Ethan",
    "Fatima",
    "George",
    "Hana",
    "Ivan",
    "Julia",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Oscar",
    "Paula",
    "Quinn",
    "Rosa",
    "Stefan",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Amir",
    "Beatriz",
    "Chen",
    "Diana",
    "Emil",
    "Freya",
    "Gustavo",
    "Helena",
    "Igor",
    "Jonas",
)
LAST = (
    "Andersen",
    "Barros",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Gupta",
    "Horvat",
    "Ibrahim",
    "Jansen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Novak",
    "Okoye",
    "Petrov",
    "Quintero",
    "Rossi",
    "Sato",
    "Tanaka",
    "Usman",
    "Varga",
    "Walsh",
    "Xu",
    "Yamamoto",
    "Zimmer",
)
DEPARTMENTS = ("engineering", "sales", "finance", "hr", "marketing", "operations", "legal")
PARTNERS = (
    ("initech.example", "Initech"),
    ("hooli.example", "Hooli"),
    ("vandelay.example", "Vandelay Industries"),
    ("soylent.example", "Soylent Foods"),
    ("wonka.example", "Wonka Confections"),
)
SERVICES = (
    "billing-api",
    "checkout",
    "search",
    "auth",
    "reporting",
    "notifications",
    "inventory",
    "payments",
)
REGIONS = ("us-east", "us-west", "eu-west", "eu-central", "ap-south")
PROJECTS = ("Atlas", "Borealis", "Cobalt", "Delta Migration", "Evergreen", "Falcon", "Granite", "Helix")
PRODUCTS = ("Globex Hub", "Globex Sensor Kit", "Globex Analytics seat", "Globex Gateway", "Globex Edge node")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October")

REPLIES = (
    "Thanks, {first}. I'll take a look today and get back to you.",
    "Agreed. Let's go with that plan.",
    "Could you share more details? In particular the numbers for {topic}.",
    "Done on my side. Anything else needed for {topic}?",
    "I looped in the team; expect an update by end of week.",
    "Looks good to me. Approved.",
    "Not quite; see my comments inline and let's discuss at the next sync.",
    "Following up on this: any news about {topic}?",
)


class Globex:
    """Seeded generator of Globex Corp's mail: people, then threads drawn from topic templates."""

    def __init__(self, seed: int = 20260101) -> None:
        self.rng = random.Random(seed)
        self.b = Builder()
        self.staff: dict[str, list[str]] = {dept: [] for dept in DEPARTMENTS}
        self.externals: list[str] = []
        self.counter = 0

    def people(self) -> None:
        b, rng = self.b, self.rng
        self.support = b.mailbox("support@globex.example", "Globex Support")
        self.billing = b.mailbox("billing@globex.example", "Globex Billing")
        self.it = b.mailbox("it@globex.example", "Globex IT")
        self.hr = b.mailbox("hr@globex.example", "Globex People Team")
        names = [(f, last) for f in FIRST for last in LAST]
        rng.shuffle(names)
        for n, (first, last) in enumerate(names[:80]):
            address = b.mailbox(f"{first.lower()}.{last.lower()}@globex.example", f"{first} {last}")
            self.staff[DEPARTMENTS[n % len(DEPARTMENTS)]].append(address)
        for domain, company in PARTNERS:
            for first, last in names[80 + len(self.externals) : 83 + len(self.externals)]:
                self.externals.append(
                    b.mailbox(f"{first.lower()}.{last.lower()}@{domain}", f"{first} {last} ({company})")
                )

    def pick(self, dept: str) -> str:
        return self.rng.choice(self.staff[dept])

    def serial(self) -> int:
        self.counter += 1
        return self.counter

    def topic(self) -> tuple[str, str, list[str], str, str, list[tuple[str, str, int]]]:
        """(topic, starter, recipients, subject, body, attachments) of one new thread."""
        rng = self.rng
        kind = rng.choice(
            (
                "invoice",
                "incident",
                "sync",
                "pto",
                "escalation",
                "renewal",
                "budget",
                "onboarding",
                "security",
                "quote",
            )
        )
        if kind == "invoice":
            partner = rng.choice(self.externals)
            number = f"INV-{40000 + self.serial()}"
            amount = rng.randint(800, 90000) + rng.choice((0, 0.5, 0.25))
            month = rng.choice(MONTHS)
            return (
                number,
                partner,
                [self.billing, self.pick("finance")],
                f"Invoice {number} for {month} services",
                f"Hello Globex Billing,\n\nPlease find attached invoice {number} for services delivered in "
                f"{month} 2026. Amount due: {amount:,.2f} USD, payable within 30 days "
                f"(PO-{rng.randint(1000, 9999)})."
                "\n\nKind regards",
                [(f"{number}.pdf", "application/pdf", rng.randint(40_000, 400_000))],
            )
        if kind == "incident":
            service, region = rng.choice(SERVICES), rng.choice(REGIONS)
            oncall = self.pick("engineering")
            return (
                f"{service} in {region}",
                oncall,
                [self.pick("engineering"), self.pick("engineering"), self.it],
                f"Incident: {service} latency spike in {region}",
                f"Team,\n\nWe are seeing elevated p99 latency on {service} in {region} since "
                f"{rng.randint(0, 23):02d}:{rng.choice(('00', '15', '30', '45'))} UTC. Error rate is "
                f"{rng.randint(2, 19)}%. I am rolling back the last deploy; please hold merges to {service}.",
                [],
            )
        if kind == "sync":
            project = rng.choice(PROJECTS)
            lead = self.pick("engineering")
            team = [self.pick(rng.choice(DEPARTMENTS)) for _ in range(rng.randint(2, 5))]
            return (
                f"project {project}",
                lead,
                team,
                f"Meeting notes: {project} weekly sync",
                f"Hi all,\n\nNotes from today's {project} sync:\n- milestone {rng.randint(2, 6)} is "
                f"{rng.choice(('on track', 'at risk', 'two days late'))}\n- open bugs: "
                f"{rng.randint(3, 40)}\n- "
                f"next demo on {rng.choice(MONTHS)} {rng.randint(1, 28)}\n\nAction items are in the tracker.",
                [("notes.md", "text/markdown", rng.randint(2_000, 9_000))] if rng.random() < 0.3 else [],
            )
        if kind == "pto":
            person = self.pick(rng.choice(DEPARTMENTS))
            month, day = rng.choice(MONTHS), rng.randint(1, 20)
            return (
                f"leave in {month}",
                person,
                [self.hr],
                f"PTO request: {month} {day}-{day + rng.randint(1, 7)}",
                f"Hello People Team,\n\nI would like to request paid time off from {month} {day}. My manager "
                "has agreed and my projects are covered.\n\nThanks",
                [],
            )
        if kind == "escalation":
            partner = rng.choice(self.externals)
            ticket = f"GX-{70000 + self.serial()}"
            product = rng.choice(PRODUCTS)
            return (
                f"ticket {ticket}",
                partner,
                [self.support],
                f"Escalation: {product} outage, ticket {ticket}",
                f"Hello Globex Support,\n\nOur {product} has been failing since yesterday (ticket {ticket}). "
                f"We have {rng.randint(2, 300)} devices offline. Please escalate; this is blocking our "
                "operations.",
                [("logs.zip", "application/zip", rng.randint(200_000, 9_000_000))] if rng.random() < 0.4 else [],
            )
        if kind == "renewal":
            partner = rng.choice(self.externals)
            return (
                "the renewal",
                self.pick("sales"),
                [partner],
                f"Contract renewal for {rng.choice(PRODUCTS)}",
                f"Hi,\n\nYour contract renews on {rng.choice(MONTHS)} {rng.randint(1, 28)}. We can offer a "
                f"{rng.choice((5, 8, 10, 12))}% discount for a two-year term. Shall I send the paperwork?",
                [("renewal-quote.pdf", "application/pdf", rng.randint(60_000, 300_000))],
            )
        if kind == "budget":
            dept = rng.choice(DEPARTMENTS)
            quarter = rng.randint(1, 4)
            return (
                f"the Q{quarter} {dept} budget",
                self.pick("finance"),
                [self.pick(dept), self.pick(dept)],
                f"Budget review Q{quarter}: {dept}",
                f"Hi,\n\nThe Q{quarter} budget for {dept} is at {rng.randint(70, 125)}% of plan. Please send "
                "the forecast for the rest of the year and flag any spend above 10,000 USD.",
                [
                    (
                        "budget.xlsx",
                        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                        rng.randint(30_000, 500_000),
                    )
                ],
            )
        if kind == "onboarding":
            first, last = rng.choice(FIRST), rng.choice(LAST)
            dept = rng.choice(DEPARTMENTS)
            return (
                f"{first}'s onboarding",
                self.hr,
                [self.pick(dept), self.it],
                f"New hire onboarding: {first} {last} ({dept})",
                f"Hi,\n\n{first} {last} joins {dept} on {rng.choice(MONTHS)} {rng.randint(1, 28)}. IT, "
                "please "
                "prepare a laptop and accounts; manager, please schedule the first-week plan.",
                [],
            )
        if kind == "security":
            system = rng.choice(("VPN", "SSO", "email", "the wiki", "the build server"))
            return (
                f"the {system} reset",
                self.it,
                [self.pick(rng.choice(DEPARTMENTS))],
                f"Security notice: password reset required for {system}",
                f"Hello,\n\nAs part of our quarterly rotation, please reset your {system} password within "
                "7 days. Never share your password by email; Globex IT will never ask for it.",
                [],
            )
        product = rng.choice(PRODUCTS)
        quantity = rng.choice((5, 10, 25, 50, 100, 250))
        return (
            f"the {product} quote",
            rng.choice(self.externals),
            [self.support, self.pick("sales")],
            f"Quote request: {product} x{quantity}",
            f"Hi Globex,\n\nWe are interested in {quantity} units of {product}. Could you send a quote with "
            "delivery times and volume pricing?",
            [],
        )

    def threads(self, total: int) -> None:
        rng = self.rng
        start, end = datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 10, 30, tzinfo=UTC)
        span = int((end - start).total_seconds())
        made = 0
        while made < total:
            topic, starter, recipients, subject, body, files = self.topic()
            recipients = [r for r in dict.fromkeys(recipients) if r != starter] or [self.support]
            when = start + timedelta(seconds=rng.randrange(span))
            size = min(rng.choice((1, 1, 2, 2, 3, 3, 4, 5, 6)), total - made)
            mails = [self.mail(when, starter, recipients, subject, body, files)]
            people = [starter, *recipients]
            for _ in range(size - 1):
                when += timedelta(minutes=rng.randint(5, 3 * 24 * 60))
                previous = mails[-1]
                sender = rng.choice([p for p in people if p != previous.sender])
                others = [p for p in dict.fromkeys([previous.sender, *previous.to, *previous.cc]) if p != sender]
                first_name = self.b.mailboxes[previous.sender].split()[0]
                text = rng.choice(REPLIES).format(first=first_name, topic=topic)
                quoted = "\n".join(f"> {line}" for line in previous.body.splitlines()[:4])
                mails.append(
                    self.mail(
                        when,
                        sender,
                        others[:1],
                        reply_subject(subject),
                        f"{text}\n\n{quoted}",
                        [],
                        cc=others[1:],
                    )
                )
            self.b.thread(mails)
            made += len(mails)

    def mail(
        self,
        when: datetime,
        sender: str,
        to: list[str],
        subject: str,
        body: str,
        files: list[tuple[str, str, int]],
        cc: list[str] | None = None,
    ) -> Mail:
        rng = self.rng
        mail = Mail(when, sender, to, subject, body, cc=cc or [], attachments=files)
        recent = when > datetime(2026, 10, 1, tzinfo=UTC)
        for address in [*to, *(cc or [])]:
            if rng.random() < (0.5 if recent else 0.05):
                mail.unread.add(address)
            if not recent and rng.random() < 0.4:
                mail.archived.add(address)
            if rng.random() < 0.15:
                mail.labels[address] = [rng.choice(("follow-up", "important", "projects", "customers", "finance"))]
        return mail


def globex() -> dict[str, Any]:
    generator = Globex()
    generator.people()
    generator.threads(5000)
    return document(
        "globex",
        "Globex Corp, January-October 2026: 5,000 generated emails in threads across ~100 mailboxes "
        "(staff, role mailboxes such as support@globex.example, partner companies). For benchmarks.",
        generator.b.tables(),
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "acme.json").write_text(json.dumps(acme(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    raw = json.dumps(globex(), sort_keys=True, separators=(",", ":")).encode()
    (OUT / "globex.json.gz").write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    for path in sorted(OUT.iterdir()):
        print(f"{path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
