"""Write the slack env's packaged artifacts: `acme.json` (the shared story) and `globex.json.gz` (large).

Deterministic: a seeded `random.Random`, fixed times, and gzip with mtime 0, so re-running gives
identical bytes. Run from anywhere: `python plugins/envs/slack/scripts/generate_artifacts.py`.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "src" / "agentenv_slack" / "artifacts"
sys.path.insert(0, str(HERE))

from acme_story import CHANNELS, MESSAGES, USERS  # noqa: E402

VERSION = "1.0.0"
GLOBEX_SEED = 20261101
GLOBEX_MESSAGES = 10_000


def parse(when: str) -> datetime:
    return datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def ts_of(moment: datetime, micro: int = 100) -> str:
    return f"{int(moment.timestamp()):010d}.{micro:06d}"


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def user_row(uid: str, handle: str, real: str, email: str, title: str, bot: int, off: int) -> dict[str, Any]:
    return {
        "id": uid,
        "name": handle,
        "real_name": real,
        "email": email,
        "title": title,
        "is_bot": bot,
        "deactivated": off,
    }


def channel_row(
    cid: str, kind: str, name: str | None, topic: str, purpose: str, by: str, at: str, archived: int
) -> dict[str, Any]:
    return {
        "id": cid,
        "kind": kind,
        "name": name,
        "topic": topic,
        "purpose": purpose,
        "created_by": by,
        "created_at": at,
        "archived": archived,
    }


def message_row(ts: str, channel: str, user: str, text: str, thread_ts: str | None) -> dict[str, Any]:
    return {"ts": ts, "conversation_id": channel, "user_id": user, "text": text, "thread_ts": thread_ts}


# ---- acme ----------------------------------------------------------------------------------------------
def build_acme() -> dict[str, Any]:
    users = [user_row(*u) for u in USERS]
    conversations, members = [], []
    for cid, kind, name, topic, purpose, by, at, archived, people in CHANNELS:
        conversations.append(channel_row(cid, kind, name, topic, purpose, by, at, archived))
        members += [{"conversation_id": cid, "user_id": uid} for uid in people]
    stamps: dict[str, str] = {}
    messages, reactions = [], []
    for key, when, channel, author, text, parent, reacts in sorted(MESSAGES, key=lambda m: m[1]):
        stamps[key] = ts_of(parse(when))
        messages.append(message_row(stamps[key], channel, author, text, stamps[parent] if parent else None))
        for emoji, people in reacts.items():
            reactions += [{"message_ts": stamps[key], "emoji": emoji, "user_id": uid} for uid in people]
    return {
        "name": "acme",
        "env": "slack",
        "version": VERSION,
        "description": (
            "Acme Outfitters' Slack (acme.example): #general, #support, #billing, #warehouse, private "
            "#cx-leads, archived #bfcm-2025; Sam Rivera's #support post about Dana Kim's damaged boots "
            "(TCK-9001, ORD-5001). The agent is U_SUPPORT (Support Bot)."
        ),
        "data": {
            "users": users,
            "conversations": conversations,
            "members": members,
            "messages": messages,
            "reactions": reactions,
        },
    }


def words(text: str) -> list[str]:
    return text.split()


# ---- globex --------------------------------------------------------------------------------------------
FIRST = words(
    "Ava Ben Carla Dmitri Elena Farid Grace Hiro Ines Jamal Keiko Liam Mona Nikhil Omar Paula Quinn Rosa "
    "Stefan Tara Umar Vera Wes Xiu Yara Zane Abel Bianca Chidi Dora Emil Fatima Goran Hana Ivan Julia Kofi "
    "Leah Mateo Nora Oscar Pia Rafael Sofia Theo Uma Viktor Wanda Yusuf Zoe"
)
LAST = words(
    "Novak Reyes Lindqvist Okoye Tanaka Haddad Moreau Kowalski Baptiste Santos Fischer Nakamura Ibrahim "
    "Larsen Costa Duarte Mensah Petrov Quispe Romano Schmidt Turner Usman Varga Walsh Xu Yilmaz Zhou Adler "
    "Brennan Castillo Dubois Eriksen Ferreira Gupta Horvat Iqbal Jensen Kaur Lopez Murphy Nilsen Ortiz "
    "Park Quinlan Rossi Sato Tran Ueda Vidal"
)
TEAMS = [
    ("Engineering", ["Backend Engineer", "Frontend Engineer", "Staff Engineer", "Engineering Manager"]),
    ("SRE", ["Site Reliability Engineer", "SRE Lead"]),
    ("Product", ["Product Manager", "Product Designer"]),
    ("Sales", ["Account Executive", "Sales Engineer", "Sales Director"]),
    ("Support", ["Support Engineer", "Customer Success Manager"]),
    ("Finance", ["Financial Analyst", "Controller"]),
    ("People", ["People Partner", "Recruiter"]),
    ("Data", ["Data Engineer", "Data Scientist"]),
]
SERVICES = [
    "billing-api",
    "auth-service",
    "search-indexer",
    "checkout",
    "notifications",
    "ledger",
    "gateway",
    "reporting",
    "inventory-sync",
    "webhooks",
]
CUSTOMERS = ["Initech", "Umbrella Health", "Hooli", "Vandelay Industries", "Stark Freight", "Wayne Logistics"]
CUSTOMERS += ["Tyrell Labs", "Soylent Foods", "Cyberdyne Retail", "Pied Piper", "Wonka Confections"]
FEATURES = ["SSO", "audit log", "bulk export", "usage dashboard", "dark mode", "webhook retries", "SCIM"]
FEATURES += ["rate limits", "invoice PDFs", "multi-currency"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
EMOJI = ["thumbsup", "eyes", "white_check_mark", "tada", "pray", "rocket", "fire", "100", "heart", "joy"]

TEMPLATES: dict[str, list[str]] = {
    "engineering": [
        "Can someone review PR #{pr} for {service}? It touches the retry logic.",
        "Heads up: {service} now requires Python 3.11, please rebuild your dev images.",
        "Design doc for {feature} in {service} is up for comments until {day}.",
        "Flaky test in {service} again: test_timeout_handling. Quarantining it for now.",
        "Who owns the {service} client library these days?",
    ],
    "eng-backend": [
        "Postgres failover drill for {service} went fine, replication lag peaked at {n}s.",
        "Migrating {service} to the new connection pool this week; expect a short read-only window.",
        "Query plan for the {service} orders lookup regressed, adding an index on customer_id.",
        "PR #{pr}: idempotency keys for {service} writes. Reviews welcome.",
        "The {service} queue backlog is at {n}k messages, scaling consumers up.",
    ],
    "eng-frontend": [
        "New {feature} screens are behind the flag, try them on staging.",
        "Bundle size went up {n}% after the chart library upgrade, looking into it.",
        "PR #{pr} fixes the date picker in Safari.",
        "Accessibility audit flagged contrast on the {feature} page, fixing this sprint.",
    ],
    "incidents": [
        "INC-{inc}: elevated 5xx on {service}, investigating.",
        "INC-{inc}: {service} latency p99 above {n}00ms since {hour}:00 UTC. Mitigation: rolled back the last deploy.",
        "INC-{inc} resolved. Root cause: expired TLS certificate on {service}. Postmortem on {day}.",
        "INC-{inc}: Postgres failover on the {service} primary, writes paused for {n} minutes.",
        "INC-{inc}: customers at {customer} report failed logins via {feature}. Auth team paged.",
    ],
    "deploys": [
        "Deploying {service} v{major}.{minor}.{patch} to production.",
        "{service} v{major}.{minor}.{patch} is live. Canary looks healthy.",
        "Rolling back {service} v{major}.{minor}.{patch}: error rate doubled on canary.",
        "Deploy freeze starts {day} at 18:00 UTC for the quarter close.",
    ],
    "sre": [
        "On-call handoff: {n} pages this week, most from {service} disk alerts.",
        "Kubernetes node pool upgrade for {service} scheduled {day} 02:00 UTC.",
        "Error budget for {service} is at {n}% for the quarter.",
        "Added a runbook for Postgres failover, please read before your next on-call.",
    ],
    "product": [
        "{customer} asked again about {feature}. Adding it to the Q1 roadmap discussion.",
        "Roadmap review moved to {day}. Bring your top three asks.",
        "Beta feedback on {feature}: {n} of 12 customers use it weekly.",
        "Spec for {feature} is ready for eng review.",
    ],
    "design": [
        "New icons for {feature} are in Figma, feedback welcome.",
        "User interviews for {feature} are booked for {day}.",
        "Updated the design system tokens, spacing scale changed slightly.",
    ],
    "sales": [
        "Closed-won: {customer}, {n}0 seats, annual contract. Great work team!",
        "{customer} wants a security review before renewal. Who can join a call {day}?",
        "Pipeline review {day}: please update your forecasts.",
        "{customer} is evaluating a competitor; they mainly want {feature}.",
    ],
    "sales-emea": [
        "{customer} EMEA asked for invoices in EUR, does billing support multi-currency yet?",
        "GDPR data processing agreement signed with {customer}.",
        "Booth at the Berlin expo is confirmed for {day}.",
    ],
    "marketing": [
        "Webinar on {feature} drew {n}00 signups.",
        "Case study with {customer} is approved, publishing {day}.",
        "Newsletter draft is in the shared drive, edits by {day} please.",
    ],
    "support": [
        "{customer} reports invoices missing line items since the last {service} deploy.",
        "Ticket volume is up {n}% this week, mostly password resets.",
        "{customer} can't export reports; looks like a {service} timeout. Filed GLX-{jira}.",
        "Macro for {feature} questions updated with the new docs link.",
        "Escalating GLX-{jira}: {customer} double-charged on renewal, needs a refund.",
    ],
    "customer-success": [
        "QBR with {customer} on {day}: health score is green.",
        "{customer} adoption of {feature} dropped, scheduling a training session.",
        "Renewal risk: {customer}. Their champion left the company.",
    ],
    "finance": [
        "Quarter close checklist is out, due {day}.",
        "Refund approved for {customer}: {n}00 USD credited to the original payment.",
        "Expense reports for November are due {day}.",
        "Vendor invoice from the cloud provider is {n}% over budget, investigating with SRE.",
    ],
    "hr-announcements": [
        "Open enrollment for benefits closes {day}.",
        "Welcome our new teammates starting {day}!",
        "Office closed for the holiday on the last {day} of the month.",
    ],
    "security": [
        "Reminder: rotate your access keys for {service} by {day}.",
        "Phishing email going around pretending to be from payroll, do not click.",
        "Pen test findings for {service} are in GLX-{jira}, {n} medium severity.",
    ],
    "data": [
        "Nightly ETL for {service} failed, backfilling now.",
        "New dashboard: {feature} usage by plan tier.",
        "Warehouse costs down {n}% after partition pruning.",
    ],
    "general": [
        "All-hands is {day} at 17:00 UTC, questions in the doc.",
        "Happy {day} everyone!",
        "Lunch and learn on {feature} this {day}.",
        "Reminder: the office Wi-Fi password changed.",
    ],
    "random": [
        "Who's up for a coffee run?",
        "Photos from the team hike are in the shared album.",
        "Anyone have a favorite podcast recommendation?",
        "The espresso machine is fixed!",
    ],
    "leadership": [
        "Board deck draft for Q4 is ready, comments by {day}.",
        "Hiring plan: {n} engineering roles approved for next quarter.",
        "{customer} renewal is the top priority this month.",
    ],
    "platform-oncall": [
        "Paging: {service} disk usage at 9{n}% on the primary.",
        "Silenced the {service} flapping alert until {day}, ticket GLX-{jira}.",
    ],
    "offsite-2025": [
        "Offsite agenda is final, see you in Lisbon.",
        "Bus leaves the hotel at 08:30 on {day}.",
    ],
}
REPLIES = [
    "On it.",
    "Thanks for the heads up!",
    "Looking now.",
    "I can take this one.",
    "+1, seeing the same thing.",
    "Fixed in PR #{pr}.",
    "Can you share the logs?",
    "Done, let me know if it happens again.",
    "Let's discuss on {day}.",
    "Nice work!",
    "Added to GLX-{jira}.",
    "Confirmed resolved on our side.",
    "Which customer is affected? {customer}?",
    "Rolled back, monitoring {service}.",
]
CHANNEL_SPECS = [
    # name, kind, archived, member share, topic
    ("general", "public", 0, 1.0, "Company-wide announcements"),
    ("random", "public", 0, 0.8, "Non-work banter"),
    ("engineering", "public", 0, 0.5, "Engineering at large"),
    ("eng-backend", "public", 0, 0.3, "APIs, databases, queues"),
    ("eng-frontend", "public", 0, 0.25, "Web app"),
    ("incidents", "public", 0, 0.5, "Active incidents: one message per INC"),
    ("deploys", "public", 0, 0.4, "Production deploys"),
    ("sre", "public", 0, 0.25, "Reliability and on-call"),
    ("product", "public", 0, 0.4, "Roadmap and specs"),
    ("design", "public", 0, 0.2, "Design reviews"),
    ("sales", "public", 0, 0.35, "Deals and pipeline"),
    ("sales-emea", "public", 0, 0.15, "EMEA deals"),
    ("marketing", "public", 0, 0.25, "Campaigns and content"),
    ("support", "public", 0, 0.35, "Customer issues; link the GLX ticket"),
    ("customer-success", "public", 0, 0.25, "Accounts, QBRs, renewals"),
    ("finance", "public", 0, 0.2, "Close, refunds, budgets"),
    ("hr-announcements", "public", 0, 1.0, "People team news"),
    ("security", "public", 0, 0.5, "Security notices"),
    ("data", "public", 0, 0.2, "Data platform and analytics"),
    ("leadership", "private", 0, 0.12, "Leadership team"),
    ("platform-oncall", "private", 0, 0.15, "Pager noise"),
    ("offsite-2025", "public", 1, 0.6, "2025 company offsite"),
]
WEIGHTS = {
    "general": 4,
    "random": 3,
    "incidents": 6,
    "eng-backend": 8,
    "engineering": 7,
    "support": 8,
    "sales": 6,
}


def fill(rng: random.Random, template: str) -> str:
    return template.format(
        pr=rng.randint(1000, 9999),
        service=rng.choice(SERVICES),
        feature=rng.choice(FEATURES),
        customer=rng.choice(CUSTOMERS),
        day=rng.choice(DAYS),
        n=rng.randint(2, 9),
        inc=rng.randint(100, 999),
        hour=f"{rng.randint(0, 23):02d}",
        major=rng.randint(1, 4),
        minor=rng.randint(0, 30),
        patch=rng.randint(0, 9),
        jira=rng.randint(1000, 4999),
    )


def build_globex() -> dict[str, Any]:
    rng = random.Random(GLOBEX_SEED)
    users = [user_row("U_SUPPORT", "support", "Support Bot", "support@globex.example", "Support agent", 1, 0)]
    for index in range(50):
        first, last = FIRST[index], LAST[(index * 7) % len(LAST)]
        team, titles = TEAMS[index % len(TEAMS)]
        handle = f"{first}.{last}".lower()
        users.append(
            user_row(
                f"U{index + 1:04d}",
                handle,
                f"{first} {last}",
                f"{handle}@globex.example",
                f"{rng.choice(titles)}, {team}",
                0,
                1 if index in (17, 42) else 0,
            )
        )
    people = [u["id"] for u in users[1:]]
    active = [u["id"] for u in users[1:] if not u["deactivated"]]

    start = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)
    conversations, members, channel_members = [], [], {}
    for number, (name, kind, archived, share, topic) in enumerate(CHANNEL_SPECS, start=1):
        cid = f"C{number:04d}"
        chosen = sorted(rng.sample(people, max(3, round(share * len(people)))))
        if name in ("general", "hr-announcements", "support", "incidents") or (kind == "public" and number % 3 == 0):
            chosen.append("U_SUPPORT")
        channel_members[cid] = chosen
        created = start - timedelta(days=400 - number * 5)
        conversations.append(
            channel_row(cid, kind, name, topic, f"#{name} at Globex", chosen[0], iso(created), archived)
        )
        members += [{"conversation_id": cid, "user_id": uid} for uid in chosen]

    dm_pairs: list[tuple[str, str, str]] = []
    for number in range(1, 31):
        a = "U_SUPPORT" if number <= 6 else rng.choice(active)
        b = rng.choice([p for p in active if p != a])
        if any({a, b} == {x, y} for _, x, y in dm_pairs):
            continue
        did = f"D{len(dm_pairs) + 1:04d}"
        dm_pairs.append((did, a, b))
        conversations.append(channel_row(did, "dm", None, "", "", a, iso(start), 0))
        members += [{"conversation_id": did, "user_id": a}, {"conversation_id": did, "user_id": b}]
        channel_members[did] = [a, b]

    names = [spec[0] for spec in CHANNEL_SPECS]
    channel_ids = [f"C{n:04d}" for n in range(1, len(names) + 1)]
    weights = [WEIGHTS.get(name, 2) for name in names]
    deactivated = {u["id"] for u in users if u["deactivated"]}
    messages: list[dict[str, Any]] = []
    reactions: list[dict[str, Any]] = []
    parents: list[tuple[str, str]] = []  # (ts, channel) of recent top-level messages that can get replies
    moment = start
    while len(messages) < GLOBEX_MESSAGES:
        moment += timedelta(seconds=rng.randint(60, 1440))
        ts = ts_of(moment, rng.randint(1, 999_999))
        roll = rng.random()
        if roll < 0.3 and parents:
            parent_ts, cid = rng.choice(parents[-40:])
            thread = parent_ts
            text = fill(rng, rng.choice(REPLIES))
        elif roll < 0.33 and dm_pairs:
            cid, thread = rng.choice(dm_pairs)[0], None
            text = fill(rng, rng.choice(REPLIES + TEMPLATES["random"]))
        else:
            index = rng.choices(range(len(names)), weights)[0]
            cid, thread = channel_ids[index], None
            text = fill(rng, rng.choice(TEMPLATES[names[index]]))
        archived = cid == channel_ids[names.index("offsite-2025")]
        if archived and moment > start + timedelta(days=30):
            continue  # nothing new once the offsite channel was archived
        authors = [p for p in channel_members[cid] if p != "U_SUPPORT" and p not in deactivated]
        if cid.startswith("D"):
            authors = channel_members[cid]
        author = rng.choice(authors)
        messages.append(message_row(ts, cid, author, text, thread))
        if thread is None and not cid.startswith("D"):
            parents.append((ts, cid))
        if rng.random() < 0.25:
            for emoji in rng.sample(EMOJI, rng.randint(1, 3)):
                for reactor in sorted(
                    rng.sample(channel_members[cid], min(len(channel_members[cid]), rng.randint(1, 4)))
                ):
                    reactions.append({"message_ts": ts, "emoji": emoji, "user_id": reactor})
    return {
        "name": "globex",
        "env": "slack",
        "version": VERSION,
        "description": (
            f"Globex Corp's Slack (globex.example): {len(users)} users, {len(CHANNEL_SPECS)} channels and "
            f"{len(dm_pairs)} DMs, {len(messages):,} messages Sep-Nov 2026 with threads and reactions. "
            "The agent is U_SUPPORT. For load and search benchmarks."
        ),
        "data": {
            "users": users,
            "conversations": conversations,
            "members": members,
            "messages": messages,
            "reactions": reactions,
        },
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    acme = build_acme()
    (OUT / "acme.json").write_text(json.dumps(acme, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    globex = json.dumps(build_globex(), sort_keys=True, separators=(",", ":")).encode()
    (OUT / "globex.json.gz").write_bytes(gzip.compress(globex, compresslevel=9, mtime=0))
    for path in sorted(OUT.iterdir()):
        print(f"{path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
