"""The packaged artifacts: the shared acme story, the large globex set, their integrity and generator."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_email.env import EmailEnv
from agentenv_runtime import Artifact, ArtifactError

Ok = Callable[..., Any]
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "generate_artifacts.py"


def test_packaged_artifacts() -> None:
    assert set(EmailEnv.artifact_paths()) == {"acme", "globex"}
    assert EmailEnv.artifact_paths()["globex"].name == "globex.json.gz"


# ---- acme: the shared story -------------------------------------------------------------------------


def test_acme_people(acme: EmailEnv) -> None:
    names = {row["address"]: row["display_name"] for row in acme.query("SELECT * FROM mailboxes")}
    assert names["support@acme.example"] == "Acme Support"
    assert names["sam@acme.example"] == "Sam Rivera"
    assert names["priya@acme.example"] == "Priya Patel"
    assert names["dana.kim@example.com"] == "Dana Kim"


def test_acme_danas_email(acme: EmailEnv, ok: Ok, dana_email: str) -> None:
    inbox = ok(acme, "list_emails", label="inbox", unread_only=True)["emails"]
    assert dana_email in [email["id"] for email in inbox]
    email = ok(acme, "read_email", email_id=dana_email)
    assert email["subject"] == "Boots arrived damaged — refund please"
    assert email["to"] == ["support@acme.example"]
    for fact in ("ORD-5001", "Trailblazer hiking boots", "sole", "split", "89.99", "ACC-1001"):
        assert fact in email["body"], fact
    assert email["in_reply_to"] is None
    thread = ok(acme, "get_thread", thread_id=email["thread_id"])
    assert thread["message_count"] == 1  # nobody has answered yet


def test_acme_order_confirmation_matches_the_story(acme: EmailEnv, ok: Ok) -> None:
    found = ok(acme, "search_emails", query="subject:ORD-5001", mailbox="dana.kim@example.com")["emails"]
    confirmation = next(e for e in found if e["subject"] == "Your Acme Outfitters order ORD-5001")
    body = ok(acme, "read_email", email_id=confirmation["id"], mailbox="dana.kim@example.com")["body"]
    for fact in (
        "2026-11-20",
        "Trailblazer hiking boots: 89.99",
        "Merino socks (3-pack): 40.00",
        "129.99",
        "PAY-7001",
        "ACC-1001",
    ):
        assert fact in body, fact


def test_acme_size(acme_artifact: Artifact) -> None:
    emails = acme_artifact.data["emails"]
    assert 30 <= len(emails) <= 45
    assert len({e["thread_id"] for e in emails}) >= 15


# ---- globex: the large set --------------------------------------------------------------------------


def test_globex_size(globex: EmailEnv, ok: Ok) -> None:
    assert globex.query("SELECT COUNT(*) AS n FROM emails")[0]["n"] == 5000
    mailboxes = ok(globex, "list_mailboxes")
    assert 90 <= len(mailboxes) <= 110
    assert all(box["address"].endswith(".example") for box in mailboxes)
    threads = globex.query("SELECT COUNT(DISTINCT thread_id) AS n FROM emails")[0]["n"]
    assert 1000 < threads < 5000
    assert not globex.query("SELECT 1 FROM mailboxes WHERE address LIKE '%acme%'")


def test_globex_search_returns_relevant_hits(globex: EmailEnv, ok: Ok) -> None:
    result = ok(globex, "search_emails", query="escalation outage", limit=10)
    assert result["mailbox"] == "support@globex.example"
    assert result["total"] >= 50
    for email in result["emails"]:
        assert "escalation" in email["subject"].lower() and "outage" in email["subject"].lower()
    # a specific ticket number finds exactly its thread
    ticket = result["emails"][0]["subject"].rsplit(" ", 1)[-1]
    hits = ok(globex, "search_emails", query=ticket, limit=100)["emails"]
    assert hits and len({email["thread_id"] for email in hits}) == 1
    assert all(ticket in email["subject"] or ticket in email["snippet"] for email in hits)


def test_globex_search_in_another_mailbox(globex: EmailEnv, ok: Ok) -> None:
    result = ok(globex, "search_emails", query="invoice has:attachment", mailbox="billing@globex.example", limit=5)
    assert result["total"] > 100
    assert all(email["subject"].startswith("Invoice INV-") for email in result["emails"])
    latency = ok(globex, "search_emails", query='"latency spike" eu-west', mailbox="it@globex.example")
    assert latency["total"] > 0
    assert all("eu-west" in email["subject"] for email in latency["emails"])


def test_globex_tools_work_at_scale(globex: EmailEnv, ok: Ok) -> None:
    threads = ok(globex, "list_threads", limit=5)["threads"]
    assert threads and threads[0]["last_sent_at"] >= threads[-1]["last_sent_at"]
    latest = threads[0]["latest_email_id"]
    reply = ok(globex, "reply_email", email_id=latest, body="Thanks, looking into it.")
    assert reply["thread_id"] == threads[0]["thread_id"] and reply["id"] == "M-6001"
    assert ok(globex, "list_threads", limit=1)["threads"][0]["thread_id"] in {reply["thread_id"]}


# ---- integrity of both --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["acme", "globex"])
def test_artifact_integrity(name: str) -> None:
    """The rows are what the env's own tools would have written."""
    data = EmailEnv.find_artifact(name).data
    mailboxes = {row["address"] for row in data["mailboxes"]}
    emails = {row["id"]: row for row in data["emails"]}
    assert len(emails) == len(data["emails"])
    deliveries = {(row["mailbox"], row["email_id"]): row for row in data["deliveries"]}
    holders: dict[str, set[str]] = {}
    for mailbox, email_id in deliveries:
        holders.setdefault(email_id, set()).add(mailbox)
    labels: dict[tuple[str, str], set[str]] = {}
    for row in data["labels"]:
        labels.setdefault((row["mailbox"], row["email_id"]), set()).add(row["label"])
        assert (row["mailbox"], row["email_id"]) in deliveries
    thread_subjects: dict[str, str] = {}
    for email in data["emails"]:
        to, cc = json.loads(email["to_addresses"]), json.loads(email["cc_addresses"])
        assert email["from_address"] in mailboxes and set(to + cc) <= mailboxes
        assert to and len(to + cc) == len(set(to + cc)) <= 50
        assert email["sent_at"].endswith("Z")
        assert "sent" in labels[(email["from_address"], email["id"])]
        assert deliveries[(email["from_address"], email["id"])]["is_read"] == 1
        for address in to + cc:
            held = labels[(address, email["id"])]
            assert held & {"inbox", "archive"} and not {"inbox", "archive"} <= held
        assert holders[email["id"]] == {email["from_address"], *to, *cc}
        parent = email["in_reply_to"]
        if parent is not None:
            assert parent in emails and emails[parent]["sent_at"] <= email["sent_at"]
        base = email["subject"].removeprefix("Re: ")
        thread_subjects.setdefault(email["thread_id"], base)
        assert thread_subjects[email["thread_id"]] == base
    per_email = Counter(row["email_id"] for row in data["attachments"])
    assert set(per_email) <= set(emails)
    assert all(row["size_bytes"] <= 25 * 1024 * 1024 for row in data["attachments"])


def test_generator_is_deterministic_and_matches_packaged_files() -> None:
    spec = importlib.util.spec_from_file_location("email_generate_artifacts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    paths = EmailEnv.artifact_paths()
    acme_text = json.dumps(module.acme(), indent=1, ensure_ascii=False) + "\n"
    assert acme_text == paths["acme"].read_text(encoding="utf-8")
    globex_raw = json.dumps(module.globex(), sort_keys=True, separators=(",", ":")).encode()
    assert globex_raw == gzip.decompress(paths["globex"].read_bytes())


def test_artifact_for_another_env_is_refused(empty: EmailEnv) -> None:
    other = Artifact.build(name="x", env="slack", version="1", data={})
    with pytest.raises(ArtifactError, match="not 'email'"):
        empty.load(other)


def test_bad_table_is_refused(empty: EmailEnv) -> None:
    bad = Artifact.build(name="x", env="email", version="1", data={"folders": [{"a": 1}]})
    with pytest.raises(ArtifactError, match="no table 'folders'"):
        empty.load(bad)
    assert empty.export()["emails"] == []


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="address"):
        EmailEnv({"address": "support"})
    with pytest.raises(ValueError, match="extra"):
        EmailEnv({"adress": "support@acme.example"})
