"""Accounts, orders, payments and refunds: look-ups, verification, captures and the refund rules."""

from __future__ import annotations

import pytest

NOW_ISO = "2026-11-25T10:00:00Z"  # the fixtures' frozen clock

# ---- lookup_account -----------------------------------------------------------------------------------


def test_lookup_account_by_email_or_id(acme, ok):
    by_email = ok(acme, "lookup_account", email="DANA.KIM@example.com")
    by_id = ok(acme, "lookup_account", account_id="ACC-1001")
    both = ok(acme, "lookup_account", email="dana.kim@example.com", account_id="ACC-1001")
    assert by_email == by_id == both
    assert by_email["name"] == "Dana Kim" and by_email["email"] == "dana.kim@example.com"
    assert by_email["order_count"] == 2 and by_email["ticket_counts"] == {"open": 1}


def test_update_address_replaces_the_address_on_file(acme, ok):
    before = ok(acme, "lookup_account", account_id="ACC-1006")
    assert (before["street"], before["city"], before["postal_code"], before["country"]) == (
        "901 Pine Avenue",
        "Seattle, WA",
        "98101",
        "US",
    )
    after = ok(
        acme, "update_address", account_id="ACC-1006", street=" 88 Harbor Road, Apt 4 ", city="Tacoma, WA",
        postal_code="98402", country="us",
    )  # fmt: skip
    assert (after["street"], after["city"], after["postal_code"], after["country"]) == (
        "88 Harbor Road, Apt 4",
        "Tacoma, WA",
        "98402",
        "US",
    )
    assert ok(acme, "lookup_account", email="owen.brooks@example.com") == after


def test_update_address_refusals(acme, refused):
    address = {"street": "1 Main St", "city": "Reno, NV", "postal_code": "89501", "country": "US"}
    refused(acme, "update_address", "not_found", "account_id", account_id="ACC-9999", **address)
    refused(
        acme, "update_address", "invalid_arguments", "country", account_id="ACC-1006", **address | {"country": "USA"}
    )
    refused(
        acme,
        "update_address",
        "invalid_arguments",
        "postal_code",
        account_id="ACC-1006",
        **address | {"postal_code": "#"},
    )
    refused(acme, "update_address", "invalid_arguments", "street", account_id="ACC-1006", **address | {"street": ""})


def test_lookup_account_refusals(acme, refused):
    refused(acme, "lookup_account", "missing_argument", "email")
    refused(acme, "lookup_account", "not_found", "email", email="nobody@example.com")
    refused(acme, "lookup_account", "not_found", "account_id", account_id="ACC-9999")
    refused(acme, "lookup_account", "conflict", "account_id", email="dana.kim@example.com", account_id="ACC-1002")
    refused(acme, "lookup_account", "invalid_arguments", "account_id", account_id="1001")
    refused(acme, "lookup_account", "invalid_arguments", "email", email="not-an-email")


# ---- orders -------------------------------------------------------------------------------------------


def test_list_orders_newest_first(acme, ok):
    result = ok(acme, "list_orders", account_id="ACC-1001")
    assert [o["order_id"] for o in result["orders"]] == ["ORD-5001", "ORD-4993"]
    latest = result["orders"][0]
    assert latest["total"] == 129.99 and latest["payment_id"] == "PAY-7001"
    assert latest["payment_status"] == "captured" and latest["verified"] is False
    assert latest["refunded_amount"] == 0


def test_list_orders_refusals(acme, refused):
    refused(acme, "list_orders", "not_found", "account_id", account_id="ACC-4040")
    refused(acme, "list_orders", "invalid_arguments", "account_id", account_id="dana.kim@example.com")


def test_get_order_shows_items_payment_and_refundable(acme, ok):
    order = ok(acme, "get_order", order_id="ORD-5001")
    assert order["placed_at"].startswith("2026-11-20")
    assert [(i["description"], i["unit_price"], i["quantity"]) for i in order["items"]] == [
        ("Trailblazer hiking boots", 89.99, 1),
        ("Merino socks (3-pack)", 40.0, 1),
    ]
    assert order["total"] == 129.99 and order["currency"] == "USD"
    assert order["payment"]["payment_id"] == "PAY-7001"
    assert order["payment"]["captured_amount"] == 129.99
    assert order["refunds"] == [] and order["refundable_amount"] == 129.99


def test_get_order_line_totals_multiply_quantity(acme, ok):
    order = ok(acme, "get_order", order_id="ORD-4994")
    assert order["items"][0]["quantity"] == 2 and order["items"][0]["line_total"] == 129.9


def test_get_order_refusals(acme, refused):
    refused(acme, "get_order", "not_found", "order_id", order_id="ORD-1")
    refused(acme, "get_order", "invalid_arguments", "order_id", order_id="5001")


def test_verify_order_sets_verified_column(acme, ok):
    assert acme.query("SELECT verified FROM orders WHERE order_id = 'ORD-5001'") == [{"verified": 0}]
    order = ok(acme, "verify_order", order_id="ORD-5001", note="Photo shows the split sole")
    assert order["verified"] is True and order["verified_note"] == "Photo shows the split sole"
    assert order["verified_by"] == "support@acme.example" and order["verified_at"] == NOW_ISO
    assert acme.query("SELECT verified FROM orders WHERE order_id = 'ORD-5001'") == [{"verified": 1}]


def test_verify_order_refusals(acme, ok, refused):
    refused(acme, "verify_order", "invalid_arguments", "note", order_id="ORD-5001", note="  ")
    refused(acme, "verify_order", "not_found", "order_id", order_id="ORD-77", note="checked")
    ok(acme, "verify_order", order_id="ORD-5001", note="checked")
    refused(acme, "verify_order", "already_verified", "order_id", order_id="ORD-5001", note="again")


# ---- payments -----------------------------------------------------------------------------------------


def test_get_payment_amounts(acme, ok):
    payment = ok(acme, "get_payment", payment_id="PAY-7001")
    assert payment["status"] == "captured" and payment["order_id"] == "ORD-5001"
    assert payment["authorized_amount"] == payment["captured_amount"] == 129.99
    assert payment["refunded_amount"] == 0 and payment["refundable_amount"] == 129.99
    partly = ok(acme, "get_payment", payment_id="PAY-6995")
    assert partly["refunded_amount"] == 24.99 and partly["refundable_amount"] == 64.99


def test_get_payment_refusals(acme, refused):
    refused(acme, "get_payment", "not_found", "payment_id", payment_id="PAY-1")
    refused(acme, "get_payment", "invalid_arguments", "payment_id", payment_id="ORD-5001")


def test_capture_payment_full_and_partial(acme, ok):
    full = ok(acme, "capture_payment", payment_id="PAY-7002")
    assert full["status"] == "captured" and full["captured_amount"] == 34.5 and full["captured_at"] == NOW_ISO
    partial = ok(acme, "capture_payment", payment_id="PAY-6997", amount=200)
    assert partial["captured_amount"] == 200 and partial["authorized_amount"] == 229


def test_capture_payment_refusals(acme, refused):
    refused(acme, "capture_payment", "invalid_payment_state", "payment_id", payment_id="PAY-7001")
    refused(acme, "capture_payment", "invalid_payment_state", "payment_id", payment_id="PAY-6992")
    error = refused(acme, "capture_payment", "exceeds_authorized", "amount", payment_id="PAY-6997", amount=229.01)
    assert "229.00" in error["message"]
    refused(acme, "capture_payment", "not_found", "payment_id", payment_id="PAY-1")
    refused(acme, "capture_payment", "invalid_arguments", "amount", payment_id="PAY-6997", amount=1.001)


def test_capture_refused_on_cancelled_order(acme, refused):
    acme.db.execute("UPDATE payments SET status = 'authorized' WHERE payment_id = 'PAY-6992'")
    refused(acme, "capture_payment", "order_cancelled", "payment_id", payment_id="PAY-6992")


# ---- refunds ------------------------------------------------------------------------------------------


def test_issue_refund_for_the_boots(acme, ok):
    result = ok(acme, "issue_refund", order_id="ORD-5001", amount=89.99, reason="Boots arrived with a split sole")
    refund = result["refund"]
    assert refund["refund_id"] == "REF-3001"
    assert (refund["amount"], refund["payment_id"], refund["created_at"]) == (89.99, "PAY-7001", NOW_ISO)
    assert refund["created_by"] == "support@acme.example"
    assert result["order_refunded_amount"] == 89.99 and result["order_refundable_amount"] == 40.0
    assert acme.query("SELECT amount_cents FROM refunds WHERE refund_id = 'REF-3001'") == [{"amount_cents": 8999}]


def test_refund_cannot_exceed_captured(acme, refused, ok):
    error = refused(acme, "issue_refund", "exceeds_refundable", "amount", order_id="ORD-5001", amount=130, reason="x")
    assert "129.99" in error["message"]  # says what can still be refunded
    ok(acme, "issue_refund", order_id="ORD-5001", amount=129.99, reason="Whole order")


def test_cumulative_refunds_are_capped_by_what_is_left(acme, ok, refused):
    ok(acme, "issue_refund", order_id="ORD-5001", amount=89.99, reason="Boots")
    error = refused(acme, "issue_refund", "exceeds_refundable", "amount", order_id="ORD-5001", amount=40.01, reason="x")
    assert "40.00" in error["message"] and "already refunded 89.99" in error["message"]
    second = ok(acme, "issue_refund", order_id="ORD-5001", amount=40, reason="Socks too")
    assert second["refund"]["refund_id"] == "REF-3002" and second["order_refundable_amount"] == 0
    error = refused(acme, "issue_refund", "exceeds_refundable", "amount", order_id="ORD-5001", amount=0.01, reason="x")
    assert "0.00" in error["message"]


def test_existing_refunds_count_toward_the_cap(acme, refused, ok):
    # ORD-4995 captured 89.98 and already refunded 24.99 in the artifact.
    refused(acme, "issue_refund", "exceeds_refundable", "amount", order_id="ORD-4995", amount=65, reason="x")
    assert ok(acme, "issue_refund", order_id="ORD-4995", amount=64.99, reason="rest")["order_refundable_amount"] == 0


def test_sub_cent_sums_stay_exact(acme, ok):
    for _ in range(3):
        ok(acme, "issue_refund", order_id="ORD-5001", amount=0.1, reason="adjustment")
    assert ok(acme, "list_refunds", order_id="ORD-5001")["total_refunded"] == 0.3


@pytest.mark.parametrize(
    ("order_id", "code"),
    [("ORD-4997", "payment_not_captured"), ("ORD-4992", "payment_not_captured"), ("ORD-9999", "not_found")],
)
def test_refund_only_on_captured_payments(acme, refused, order_id, code):
    refused(acme, "issue_refund", code, "order_id", order_id=order_id, amount=1, reason="x")


def test_refund_on_order_without_payment(acme, refused):
    acme.db.execute("DELETE FROM payments WHERE order_id = 'ORD-5001'")
    refused(acme, "issue_refund", "no_payment", "order_id", order_id="ORD-5001", amount=1, reason="x")


@pytest.mark.parametrize(
    ("amount", "why"),
    [
        (89.999, "decimal places"),
        (0, "greater than 0"),
        (-5, "greater than 0"),
        ("89.99", "valid number"),
        (True, "valid number"),
        (2_000_000, "less than or equal"),
    ],
)
def test_refund_amount_schema(acme, refused, amount, why):
    error = refused(acme, "issue_refund", "invalid_arguments", "amount", order_id="ORD-5001", amount=amount, reason="x")
    assert why in error["message"]


def test_refund_reason_required(acme, refused):
    refused(acme, "issue_refund", "invalid_arguments", "reason", order_id="ORD-5001", amount=1, reason=" ")


def test_refund_can_require_verification(make_env, ok, refused):
    env = make_env("acme", require_verified_refunds=True)
    error = refused(
        env, "issue_refund", "order_not_verified", "order_id", order_id="ORD-5001", amount=89.99, reason="x"
    )
    assert "verify_order" in error["message"]
    ok(env, "verify_order", order_id="ORD-5001", note="Photo checked")
    ok(env, "issue_refund", order_id="ORD-5001", amount=89.99, reason="Boots")


def test_list_refunds(acme, ok, refused):
    assert ok(acme, "list_refunds", order_id="ORD-5001") == {
        "order_id": "ORD-5001",
        "refunds": [],
        "total_refunded": 0,
        "refundable_amount": 129.99,
    }
    ok(acme, "issue_refund", order_id="ORD-5001", amount=50, reason="a")
    ok(acme, "issue_refund", order_id="ORD-5001", amount=39.99, reason="b")
    listed = ok(acme, "list_refunds", order_id="ORD-5001")
    assert [(r["refund_id"], r["amount"]) for r in listed["refunds"]] == [("REF-3001", 50), ("REF-3002", 39.99)]
    assert listed["total_refunded"] == 89.99 and listed["refundable_amount"] == 40
    refused(acme, "list_refunds", "not_found", "order_id", order_id="ORD-1")
