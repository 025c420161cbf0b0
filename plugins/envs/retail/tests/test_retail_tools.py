"""The retail tools on τ²'s own database: results, τ²'s error texts, and refused calls that change nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentenv_retail.api import RetailEnv, policy

PENDING = "#W5918442"  # sofia_rossi_8776, 4 items, paid by credit_card_5051208
PENDING_USER = "sofia_rossi_8776"
DELIVERED = "#W4817420"  # ava_moore_2033, paid by gift_card_8168843


@pytest.fixture
def env() -> RetailEnv:
    store = RetailEnv()
    store.load(RetailEnv.find_artifact("tau2"))
    return store


def ok(env: RetailEnv, tool: str, **args: Any) -> Any:
    result, error = env.call(tool, args)
    assert error is None, error
    return result


def refused(env: RetailEnv, tool: str, **args: Any) -> dict[str, Any]:
    before = env.state_digest()
    result, error = env.call(tool, args)
    assert result is None and error is not None
    assert env.state_digest() == before, "a refused call changed the database"
    return error


def test_the_database_is_tau2s_and_the_policy_is_its_policy(env: RetailEnv) -> None:
    dump = env.dump()
    assert (len(dump["products"]), len(dump["users"]), len(dump["orders"])) == (50, 500, 1000)
    assert "retail agent" in policy().lower()


def test_lookups(env: RetailEnv) -> None:
    assert ok(env, "find_user_id_by_name_zip", first_name="YUSUF", last_name="rossi", zip="19122") == "yusuf_rossi_9620"
    assert ok(env, "find_user_id_by_email", email="Sofia.Rossi2645@example.com") == PENDING_USER
    assert ok(env, "get_order_details", order_id=PENDING)["user_id"] == PENDING_USER
    assert ok(env, "get_item_details", item_id="7706410293")["options"]["switch type"] == "clicky"
    products = json.loads(ok(env, "list_all_product_types"))
    assert len(products) == 50 and list(products) == sorted(products)
    assert ok(env, "calculate", expression="(2 + 3) * 1.5") == "7.5"
    assert ok(env, "transfer_to_human_agents", summary="wants a human") == "Transfer successful"


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("get_order_details", {"order_id": "W5918442"}, "Order not found"),
        ("get_user_details", {"user_id": "nobody_1"}, "User not found"),
        ("get_product_details", {"product_id": "1"}, "Product not found"),
        ("get_item_details", {"item_id": "1"}, "Item not found"),
        ("find_user_id_by_email", {"email": "no@example.com"}, "User not found"),
        ("calculate", {"expression": "2 ^ 3"}, "Invalid characters in expression"),
        (
            "cancel_pending_order",
            {"order_id": DELIVERED, "reason": "no longer needed"},
            "Non-pending order cannot be cancelled",
        ),
        ("cancel_pending_order", {"order_id": PENDING, "reason": "too expensive"}, "Invalid reason"),
        (
            "return_delivered_order_items",
            {"order_id": PENDING, "item_ids": [], "payment_method_id": "x"},
            "Non-delivered order cannot be returned",
        ),
        (
            "return_delivered_order_items",
            {"order_id": DELIVERED, "item_ids": ["6777246137"], "payment_method_id": "credit_card_0"},
            "Payment method not found",
        ),
        (
            "return_delivered_order_items",
            {"order_id": DELIVERED, "item_ids": ["6777246137", "6777246137"], "payment_method_id": "gift_card_8168843"},
            "Some item not found",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": PENDING,
                "item_ids": ["1725100896"],
                "new_item_ids": ["1725100896"],
                "payment_method_id": "credit_card_5051208",
            },
            "The new item id should be different from the old item id",
        ),
        (
            "modify_pending_order_items",
            {
                "order_id": PENDING,
                "item_ids": ["1725100896"],
                "new_item_ids": ["1002370030"],
                "payment_method_id": "credit_card_5051208",
            },
            "New item 1002370030 not found or available",
        ),
        (
            "modify_pending_order_payment",
            {"order_id": PENDING, "payment_method_id": "credit_card_5051208"},
            "The new payment method should be different from the current one",
        ),
        (
            "exchange_delivered_order_items",
            {"order_id": DELIVERED, "item_ids": ["6777246137"], "new_item_ids": [], "payment_method_id": "x"},
            "The number of items to be exchanged should match.",
        ),
    ],
)
def test_refusals_use_tau2s_texts_and_change_nothing(
    env: RetailEnv, tool: str, args: dict[str, Any], message: str
) -> None:
    assert refused(env, tool, **args)["message"] == message


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (
            {
                "order_id": PENDING,
                "item_ids": "1725100896",
                "new_item_ids": ["1325156478"],
                "payment_method_id": "credit_card_5051208",
            },
            "item_ids",
        ),
        (
            {"order_id": 5918442, "item_ids": [], "new_item_ids": [], "payment_method_id": "credit_card_5051208"},
            "order_id",
        ),
        ({"order_id": PENDING, "item_ids": [], "new_item_ids": []}, "payment_method_id"),
    ],
)
def test_wrong_argument_types_are_refused_before_the_tool_runs(
    env: RetailEnv, args: dict[str, Any], field: str
) -> None:
    error = refused(env, "modify_pending_order_items", **args)
    assert error["code"] == "invalid_arguments"
    assert field in error["message"]


def test_cancel_refunds_every_payment(env: RetailEnv) -> None:
    order = ok(env, "cancel_pending_order", order_id=PENDING, reason="ordered by mistake")
    assert order["status"] == "cancelled" and order["cancel_reason"] == "ordered by mistake"
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 1463.7,
        "payment_method_id": "credit_card_5051208",
    }
    assert env.call("cancel_pending_order", {"order_id": PENDING, "reason": "no longer needed"})[1]["message"] == (
        "Non-pending order cannot be cancelled"
    )


def test_return_to_a_gift_card_is_recorded_not_refunded(env: RetailEnv) -> None:
    order = ok(
        env,
        "return_delivered_order_items",
        order_id=DELIVERED,
        item_ids=["6777246137"],
        payment_method_id="gift_card_8168843",
    )
    assert order["status"] == "return requested" and order["return_items"] == ["6777246137"]


def test_modified_items_take_the_last_new_items_price_as_in_tau2(env: RetailEnv) -> None:
    """τ² prices every modified item at the last new variant's price; grading compares with τ², so do we."""
    order = ok(
        env,
        "modify_pending_order_items",
        order_id=PENDING,
        item_ids=["1586641416", "1725100896"],
        new_item_ids=["5925362855", "1325156478"],
        payment_method_id="credit_card_5051208",
    )
    prices = {item["item_id"]: item["price"] for item in order["items"]}
    assert prices["5925362855"] == prices["1325156478"] == 298.52
    assert order["status"] == "pending (item modified)"


def test_modify_address_and_payment_of_a_pending_order(env: RetailEnv) -> None:
    address = {
        "address1": "1 Main St",
        "address2": "",
        "city": "Austin",
        "state": "TX",
        "country": "USA",
        "zip": "78701",
    }
    assert ok(env, "modify_pending_order_address", order_id=PENDING, **address)["address"] == address
    assert ok(env, "modify_user_address", user_id=PENDING_USER, **address)["address"] == address
    error = refused(env, "modify_pending_order_payment", order_id="#W2974929", payment_method_id="credit_card_1")
    assert error["message"] == "Payment method not found"
