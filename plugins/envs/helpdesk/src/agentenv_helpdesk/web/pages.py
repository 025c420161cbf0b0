"""The support desk's pages as plain HTML, built from tool results.

Written for people and for browser agents alike: every field has a `<label>`, every action is a `<button>` with its
verb, choices are `<select>`s, alerts and notices carry `role="alert"` / `role="status"`, and records link to each
other by their ids (`TCK-9001`, `ORD-5001`, `ACC-1001`), so an accessibility snapshot of a page reads as the page.
Everything shown is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

STYLE = """
body { font: 15px/1.45 "Liberation Sans", Arial, sans-serif; margin: 0; color: #1d2733; background: #f6f7f9; }
header { background: #23405f; padding: 10px 24px; } header a { color: #fff; margin-right: 18px; font-weight: bold; }
main { padding: 16px 24px; max-width: 960px; } h1 { font-size: 22px; margin: 4px 0 12px; } h2 { font-size: 17px; }
table { border-collapse: collapse; width: 100%; background: #fff; } th, td { text-align: left; padding: 5px 8px;
border-bottom: 1px solid #dde2e8; } form { background: #fff; padding: 10px 12px; margin: 10px 0;
border: 1px solid #dde2e8; } label { display: inline-block; min-width: 110px; } input, select, textarea {
margin: 3px 8px 3px 0; } [role=alert] { background: #fde8e8; border: 1px solid #e0a0a0; padding: 8px; }
[role=status] { background: #e6f4ea; border: 1px solid #9fd0ad; padding: 8px; } dt { font-weight: bold; float: left;
width: 130px; } dd { margin: 0 0 4px 140px; } .comment { background: #fff; border-left: 4px solid #8aa; padding: 6px
10px; margin: 6px 0; } .internal { border-color: #d9a400; background: #fffbea; }
"""
STATUSES = ("open", "pending", "solved", "closed")


def e(value: Any) -> str:
    return escape("" if value is None else str(value))


def money(amount: Any, currency: str = "USD") -> str:
    return f"{float(amount):.2f} {currency}" if amount is not None else "—"


def layout(base: str, title: str, body: str, *, notice: str = "") -> str:
    shown = f'<p role="status">{e(notice)}</p>' if notice else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{e(title)} · Support desk</title>'
        f"<style>{STYLE}</style></head><body>"
        f'<header><nav aria-label="Main"><a href="{base}/tickets">Tickets</a><a href="{base}/customers">Customers</a>'
        f"</nav></header><main><h1>{e(title)}</h1>{shown}{body}</main></body></html>"
    )


def alert(text: str) -> str:
    return f'<p role="alert">{e(text)}</p>' if text else ""


def problem(text: str) -> str:
    return alert(text)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], empty: str) -> str:
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        return f"<p>{e(empty)}</p>"
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def details(pairs: Iterable[tuple[str, str]]) -> str:
    return "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def field(name: str, label: str, value: Any = "", **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{e(v)}"' for k, v in attrs.items())
    return f'<label for="{name}">{e(label)}</label><input id="{name}" name="{name}" value="{e(value)}"{extra}>'


def select(name: str, label: str, options: Iterable[tuple[str, str]], chosen: str = "") -> str:
    shown = "".join(
        f'<option value="{e(value)}"{" selected" if value == chosen else ""}>{e(text)}</option>'
        for value, text in options
    )
    return f'<label for="{name}">{e(label)}</label><select id="{name}" name="{name}">{shown}</select>'


def form(action: str, label: str, inner: str, button: str, method: str = "post") -> str:
    return (
        f'<form method="{method}" action="{action}" aria-label="{e(label)}">{inner}'
        f'<button type="submit">{e(button)}</button></form>'
    )


def link(base: str, kind: str, record_id: Any, text: Any = None) -> str:
    if not record_id:
        return "—"
    return f'<a href="{base}/{kind}/{e(record_id)}">{e(text if text is not None else record_id)}</a>'


# ---- tickets ----------------------------------------------------------------------------------------------
def tickets(base: str, found: Mapping[str, Any], status: str, customer: str, problem_text: str) -> str:
    options = [("", "Any status"), *((s, s.capitalize()) for s in STATUSES)]
    search = form(
        f"{base}/tickets",
        "Filter tickets",
        select("status", "Status", options, status)
        + field("customer", "Customer", customer, placeholder="email or ACC-…"),
        "Filter",
        method="get",
    )
    rows = [
        (
            link(base, "tickets", t["ticket_id"]),
            e(t["subject"]),
            link(base, "customers", t["account_id"], t["customer_name"]),
            e(t["status"]),
            e(t["priority"]),
            e(t["assignee"] or "unassigned"),
        )
        for t in found["tickets"]
    ]
    listing = table(("Ticket", "Subject", "Customer", "Status", "Priority", "Assignee"), rows, "No tickets match.")
    return search + alert(problem_text) + f"<p>{found['total']} ticket(s)</p>" + listing


def ticket(base: str, found: Mapping[str, Any], staff: Sequence[Mapping[str, Any]], problem_text: str) -> str:
    ticket_id = found["ticket_id"]
    facts = details(
        [
            ("Status", e(found["status"])),
            ("Priority", e(found["priority"])),
            ("Assignee", e(found["assignee"] or "unassigned")),
            ("Customer", link(base, "customers", found["account_id"], found["customer_name"])),
            ("Email", e(found["customer_email"])),
            ("Order", link(base, "orders", found["order_id"])),
            *([("Resolution", e(found["resolution"]))] if found.get("resolution") else []),
        ]
    )
    comments = "".join(
        f'<article class="comment{"" if c["public"] else " internal"}" aria-label="Comment {c["comment_id"]}">'
        f"<p><strong>{e(c['author'])}</strong> · {e(c['created_at'])} · {'public' if c['public'] else 'internal note'}"
        f"</p><p>{e(c['body'])}</p></article>"
        for c in found["comments"]
    )
    actions = ""
    if found["status"] != "closed":
        visibility = [("public", "Public reply to the customer"), ("internal", "Internal note")]
        people = [(p["email"], f"{p['name']} ({p['role']})") for p in staff]
        actions = (
            form(
                f"{base}/tickets/{ticket_id}/comment",
                "Comment",
                '<label for="body">Comment</label><textarea id="body" name="body" rows="3" cols="60"></textarea><br>'
                + select("visibility", "Visibility", visibility),
                "Add comment",
            )
            + form(
                f"{base}/tickets/{ticket_id}/escalate",
                "Escalate",
                select("to", "Escalate to", [("", "Choose a person"), *people]) + field("reason", "Reason", size="50"),
                "Escalate",
            )
            + form(
                f"{base}/tickets/{ticket_id}/close",
                "Close ticket",
                field("resolution", "Resolution", size="50"),
                "Close ticket",
            )
        )
    return alert(problem_text) + facts + "<h2>Conversation</h2>" + comments + actions


# ---- customers --------------------------------------------------------------------------------------------
def customer_search(base: str, wanted: str, problem_text: str) -> str:
    inner = field("q", "Email or account id", wanted, placeholder="dana.kim@example.com or ACC-1001", size="40")
    return form(f"{base}/customers", "Find a customer", inner, "Find customer", method="get") + alert(problem_text)


def where(account: Mapping[str, Any]) -> str:
    parts = [account.get(k) for k in ("street", "city", "postal_code", "country")]
    return ", ".join(e(p) for p in parts if p) or "No address on file"


def customer(
    base: str, account: Mapping[str, Any], orders: Sequence[Mapping[str, Any]], opened: Sequence[Mapping[str, Any]]
) -> str:
    account_id = account["account_id"]
    facts = details(
        [
            ("Account", e(account_id)),
            ("Email", e(account["email"])),
            ("Phone", e(account.get("phone") or "—")),
            ("Tier", e(account["tier"])),
            ("Address", where(account) + f' <a href="{base}/customers/{account_id}/address">Change address</a>'),
        ]
    )
    order_rows = [
        (
            link(base, "orders", o["order_id"]),
            e(o["placed_at"]),
            e(o["status"]),
            money(o["total"], o["currency"]),
            e(o["payment_status"]),
            money(o["refunded_amount"], o["currency"]),
        )
        for o in orders
    ]
    ticket_rows = [
        (link(base, "tickets", t["ticket_id"]), e(t["subject"]), e(t["status"]), e(t["priority"])) for t in opened
    ]
    return (
        facts
        + "<h2>Orders</h2>"
        + table(("Order", "Placed", "Status", "Total", "Payment", "Refunded"), order_rows, "No orders.")
        + "<h2>Tickets</h2>"
        + table(("Ticket", "Subject", "Status", "Priority"), ticket_rows, "No tickets.")
    )


def address(base: str, account: Mapping[str, Any], values: Mapping[str, Any], problem_text: str) -> str:
    account_id = account["account_id"]
    inner = (
        field("street", "Street", values.get("street") or "", size="40")
        + "<br>"
        + field("city", "City", values.get("city") or "", size="30")
        + "<br>"
        + field("postal_code", "Postal code", values.get("postal_code") or "", size="12")
        + "<br>"
        + field("country", "Country code", values.get("country") or "", size="4", maxlength="2")
        + "<br>"
    )
    back = f'<p><a href="{base}/customers/{account_id}">Back to {e(account["name"])}</a></p>'
    current = f"<p>On file: {where(account)}</p>"
    return (
        alert(problem_text)
        + current
        + form(f"{base}/customers/{account_id}/address", "Address", inner, "Save address")
        + back
    )


# ---- orders -----------------------------------------------------------------------------------------------
def order(base: str, found: Mapping[str, Any], values: Mapping[str, Any], problem_text: str) -> str:
    order_id, currency = found["order_id"], found["currency"]
    payment = found.get("payment") or {}
    facts = details(
        [
            ("Customer", link(base, "customers", found["account_id"])),
            ("Placed", e(found["placed_at"])),
            ("Status", e(found["status"])),
            ("Total", money(found["total"], currency)),
            ("Payment", e(f"{payment.get('payment_id', '—')} ({payment.get('status', 'none')})")),
            ("Verified", "yes" if found["verified"] else "no"),
            ("Refunded", money(found["refunded_amount"], currency)),
            ("Refundable", money(found["refundable_amount"], currency)),
        ]
    )
    items = table(
        ("Item", "SKU", "Quantity", "Unit price", "Line total"),
        [
            (
                e(i["description"]),
                e(i["sku"]),
                e(i["quantity"]),
                money(i["unit_price"], currency),
                money(i["line_total"], currency),
            )
            for i in found["items"]
        ],
        "No items.",
    )
    refunds = table(
        ("Refund", "Amount", "Reason", "By", "At"),
        [
            (e(r["refund_id"]), money(r["amount"], currency), e(r["reason"]), e(r["created_by"]), e(r["created_at"]))
            for r in found["refunds"]
        ],
        "No refunds yet.",
    )
    refund_form = form(
        f"{base}/orders/{order_id}/refund",
        "Refund",
        field("amount", "Amount", values.get("amount", ""), inputmode="decimal", placeholder="0.00")
        + field("reason", "Reason", values.get("reason", ""), size="40"),
        "Issue refund",
    )
    verify_form = ""
    if not found["verified"]:
        verify_form = form(
            f"{base}/orders/{order_id}/verify", "Verify", field("note", "Note", size="40"), "Mark verified"
        )
    return (
        alert(problem_text)
        + facts
        + "<h2>Items</h2>"
        + items
        + "<h2>Refunds</h2>"
        + refunds
        + refund_form
        + verify_form
    )
