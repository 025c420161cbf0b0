"""`RetailEnv`: τ²-bench's retail domain, every tool with τ²'s name, parameters, result and error text.

Each rule is checked in τ²'s order, so the first refusal an agent sees is τ²'s first; a refusal raises
`ToolError` with τ²'s message and the runtime rolls the call back, so a refused call changes nothing. One
quirk is kept on purpose because grading compares final databases with τ²'s: `modify_pending_order_items`
gives every modified item the price and options of the *last* new item in the call, as τ² does.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, ClassVar

from agentenv_runtime import ToolError, tool

from agentenv_retail.store import DocumentStore

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
CALC_CHARACTERS = frozenset("0123456789+-*/(). ")
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def policy() -> str:
    """τ²'s retail policy: the agent's instructions, in the card's prompt and every task's prompt."""
    return resources.files("agentenv_retail").joinpath("policy.md").read_text(encoding="utf-8")


def arithmetic(node: ast.AST) -> Any:
    """Evaluate numbers and + - * / // ** with parentheses; nothing else is reachable from τ²'s characters."""
    if isinstance(node, ast.Expression):
        return arithmetic(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](arithmetic(node.left), arithmetic(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](arithmetic(node.operand))
    raise ToolError("Invalid expression", code="invalid_arguments", field="expression")


@dataclass(frozen=True)
class SwapRules:
    """What differs between τ²'s exchange of delivered items and its modification of pending ones: the status
    required, the error texts, whether an item may be swapped for itself, and whether the difference is rounded."""

    status: str
    status_error: str
    count_error: str
    length_error: str
    balance_error: str
    refuse_same: bool
    rounded: bool


EXCHANGE = SwapRules(
    "delivered",
    "Non-delivered order cannot be exchanged",
    "Number of {item_id} not found.",
    "The number of items to be exchanged should match.",
    "Insufficient gift card balance to pay for the price difference",
    refuse_same=False,
    rounded=True,
)
MODIFY = SwapRules(
    "pending",
    "Non-pending order cannot be modified",
    "{item_id} not found",
    "The number of items to be exchanged should match",
    "Insufficient gift card balance to pay for the new item",
    refuse_same=True,
    rounded=False,
)


def address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, str]:
    return {"address1": address1, "address2": address2, "city": city, "country": country, "state": state, "zip": zip}


def is_gift_card(method: dict[str, Any]) -> bool:
    return bool(method.get("source") == "gift_card")


def check_counts(order: dict[str, Any], item_ids: list[str], message: str) -> None:
    """Every id asked for (duplicates included) must be in the order at least as many times."""
    present = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > present.count(item_id):
            raise ToolError(message.format(item_id=item_id), code="not_found", field="item_ids")


def first_item(order: dict[str, Any], item_id: str) -> dict[str, Any]:
    item = next((item for item in order["items"] if item["item_id"] == item_id), None)
    if item is None:
        raise ToolError(f"Item {item_id} not found", code="not_found", field="item_ids")
    return dict(item)


class RetailEnv(DocumentStore):
    """τ²-bench retail store: users, orders and products; look-ups, cancellations, returns, exchanges and
    modifications under τ²'s retail policy."""

    name: ClassVar[str] = "retail"
    description: ClassVar[str] = (
        "τ²-bench retail customer service: find users, read orders and products, cancel or modify pending "
        "orders, return or exchange delivered items, transfer to a human agent."
    )

    # ---- helpers that write ------------------------------------------------------------------------------
    def _swap(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str, rules: SwapRules
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], Any, dict[str, Any] | None]:
        """τ²'s checks before swapping items, in τ²'s order: (order, user, payment method, price difference, the
        last new variant). The difference is τ²'s running sum of new minus old prices, an int 0 without items."""
        order = self.order(order_id)
        if order["status"] != rules.status:
            raise ToolError(rules.status_error, field="order_id")
        check_counts(order, item_ids, rules.count_error)
        if len(item_ids) != len(new_item_ids):
            raise ToolError(rules.length_error, field="new_item_ids")
        difference: Any = 0
        variant = None
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            if rules.refuse_same and item_id == new_item_id:
                raise ToolError("The new item id should be different from the old item id", field="new_item_ids")
            item = first_item(order, item_id)
            variant = self.variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ToolError(
                    f"New item {new_item_id} not found or available", code="not_found", field="new_item_ids"
                )
            difference += variant["price"] - item["price"]
        if rules.rounded:
            difference = round(difference, 2)
        user = self.user(order["user_id"])
        method = self.payment_method(user, payment_method_id)
        if is_gift_card(method) and method["balance"] < difference:
            raise ToolError(rules.balance_error, field="payment_method_id")
        return order, user, method, difference, variant

    def _add_to_balance(self, user: dict[str, Any], payment_method_id: str, amount: float) -> None:
        method = user["payment_methods"][payment_method_id]
        method["balance"] = round(method["balance"] + amount, 2)

    # ---- generic -----------------------------------------------------------------------------------------
    @tool(read_only=True)
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and return the result rounded to 2 decimals, as text.

        Args:
            expression: Numbers, + - * /, parentheses and spaces, e.g. '(19.99 + 5) * 2'.
        """
        if not all(char in CALC_CHARACTERS for char in expression):
            raise ToolError("Invalid characters in expression", code="invalid_arguments", field="expression")
        try:
            tree = ast.parse(expression, mode="eval")
            return str(round(float(arithmetic(tree)), 2))
        except (SyntaxError, ArithmeticError, ValueError) as exc:
            raise ToolError(str(exc), code="invalid_arguments", field="expression") from None

    @tool(read_only=True)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the customer over to a human agent with a summary of their issue; only when the customer asks
        for a human, or when the policy and these tools cannot solve the issue.

        Args:
            summary: What the customer needs and what was done so far.
        """
        return "Transfer successful"

    # ---- reads -------------------------------------------------------------------------------------------
    @tool(read_only=True)
    def find_user_id_by_email(self, email: str) -> str:
        """The user id of the customer with this email (case-insensitive). Try this first.

        Args:
            email: The customer's email, e.g. 'something@example.com'.
        """
        wanted = email.lower()
        # SQLite's lower() folds ASCII only: the index finds ASCII input; other input is compared in Python.
        rows = (
            self.db.execute(
                "SELECT user_id, json_extract(doc, '$.email') FROM users "
                "WHERE lower(json_extract(doc, '$.email')) = lower(?) ORDER BY rowid",
                (email,),
            )
            if email.isascii()
            else self.db.execute("SELECT user_id, json_extract(doc, '$.email') FROM users ORDER BY rowid")
        )
        for user_id, address in rows:
            if address.lower() == wanted:
                return str(user_id)
        raise ToolError("User not found", code="not_found", field="email")

    @tool(read_only=True)
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """The user id of the customer with this first and last name (case-insensitive) and zip code; for
        customers who cannot give their email.

        Args:
            first_name: e.g. 'John'.
            last_name: e.g. 'Doe'.
            zip: The zip code of the customer's address, e.g. '12345'.
        """
        first, last = first_name.lower(), last_name.lower()
        rows = self.db.execute(
            "SELECT user_id, json_extract(doc, '$.name.first_name'), json_extract(doc, '$.name.last_name') "
            "FROM users WHERE json_extract(doc, '$.address.zip') = ? ORDER BY rowid",
            (zip,),
        )
        for user_id, first_found, last_found in rows:
            if first_found.lower() == first and last_found.lower() == last:
                return str(user_id)
        raise ToolError("User not found", code="not_found", field="first_name")

    @tool(read_only=True)
    def get_order_details(self, order_id: str) -> dict[str, Any]:
        """An order: items, status, address, fulfillments and payment history.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
        """
        return self.order(order_id)

    @tool(read_only=True)
    def get_product_details(self, product_id: str) -> dict[str, Any]:
        """A product and all its variants (item ids, options, availability, price).

        Args:
            product_id: The product id, e.g. '6086499569' (not an item id).
        """
        return self.product(product_id)

    @tool(read_only=True)
    def get_item_details(self, item_id: str) -> dict[str, Any]:
        """One variant (item) of any product: its options, availability and price.

        Args:
            item_id: The item id, e.g. '1008292230' (not a product id).
        """
        row = self.db.execute(
            "SELECT v.value FROM products, json_each(products.doc, '$.variants') AS v WHERE v.key = ? "
            "ORDER BY products.rowid LIMIT 1",
            (item_id,),
        ).fetchone()
        if row is None:
            raise ToolError("Item not found", code="not_found", field="item_id")
        return dict(json.loads(row[0]))

    @tool(read_only=True)
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """A user: name, address, email, payment methods (gift card balances included) and order ids.

        Args:
            user_id: The user id, e.g. 'sara_doe_496'.
        """
        return self.user(user_id)

    @tool(read_only=True)
    def list_all_product_types(self) -> str:
        """Every product type's name and product id, as JSON text sorted by name (there are 50)."""
        rows = self.db.execute("SELECT json_extract(doc, '$.name'), product_id FROM products ORDER BY rowid")
        names = dict(rows.fetchall())
        return json.dumps(names, sort_keys=True)

    # ---- writes ------------------------------------------------------------------------------------------
    @tool
    def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order and refund every payment: to a gift card at once, otherwise in 5-7 business
        days. Explain the details and get the customer's explicit yes first.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
            reason: 'no longer needed' or 'ordered by mistake'.
        """
        order = self.order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled", field="order_id")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason", code="invalid_arguments", field="reason")
        refunds = []
        for payment in order["payment_history"]:
            method_id = payment["payment_method_id"]
            refunds.append(
                {"transaction_type": "refund", "amount": float(payment["amount"]), "payment_method_id": method_id}
            )
            user = self.user(order["user_id"])
            if is_gift_card(self.payment_method(user, method_id)):
                self._add_to_balance(user, method_id, payment["amount"])
                self.save("users", user)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        self.save("orders", order)
        return order

    @tool
    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Exchange delivered items for other variants of the same products; once per delivered order. The price
        difference is paid from or refunded to the payment method. Explain and get an explicit yes first.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
            item_ids: The item ids to exchange (an id may repeat).
            new_item_ids: The new item ids, position by position of the same product as item_ids.
            payment_method_id: Pays or receives the difference, e.g. 'gift_card_0000000'.
        """
        order, _, _, difference, _ = self._swap(order_id, item_ids, new_item_ids, payment_method_id, EXCHANGE)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = difference
        self.save("orders", order)
        return order

    @tool
    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Change the shipping address of a pending order. Explain and get an explicit yes first.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
            address1: First address line, e.g. '123 Main St'.
            address2: Second address line, e.g. 'Apt 1', or ''.
            city: e.g. 'San Francisco'.
            state: e.g. 'CA'.
            country: e.g. 'USA'.
            zip: e.g. '12345'.
        """
        order = self.order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified", field="order_id")
        order["address"] = address(address1, address2, city, state, country, zip)
        self.save("orders", order)
        return order

    @tool
    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Change items of a pending order to other variants of the same products; once per order. The price
        difference is paid from or refunded to the payment method. Explain and get an explicit yes first.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
            item_ids: The item ids to change (an id may repeat).
            new_item_ids: The new item ids, position by position of the same product as item_ids.
            payment_method_id: Pays or receives the difference, e.g. 'credit_card_0000000'.
        """
        order, user, method, difference, last_variant = self._swap(
            order_id, item_ids, new_item_ids, payment_method_id, MODIFY
        )
        order["payment_history"].append(
            {
                "transaction_type": "payment" if difference > 0 else "refund",
                "amount": float(abs(difference)),
                "payment_method_id": payment_method_id,
            }
        )
        if is_gift_card(method):
            self._add_to_balance(user, payment_method_id, -difference)
            self.save("users", user)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = next(item for item in order["items"] if item["item_id"] == item_id)
            assert last_variant is not None
            item["item_id"] = new_item_id
            item["price"] = last_variant["price"]  # τ²'s quirk: the last variant's, for every item
            item["options"] = dict(last_variant["options"])
        order["status"] = "pending (item modified)"
        self.save("orders", order)
        return order

    @tool
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict[str, Any]:
        """Pay a pending order with another of the customer's payment methods; the old one is refunded.
        Explain and get an explicit yes first.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
            payment_method_id: The new payment method, e.g. 'gift_card_0000000'.
        """
        order = self.order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified", field="order_id")
        user = self.user(order["user_id"])
        method = self.payment_method(user, payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order", field="order_id")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ToolError(
                "The new payment method should be different from the current one", field="payment_method_id"
            )
        amount = history[0]["amount"]
        if is_gift_card(method) and method["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order", field="payment_method_id")
        history.append({"transaction_type": "payment", "amount": float(amount), "payment_method_id": payment_method_id})
        history.append({"transaction_type": "refund", "amount": float(amount), "payment_method_id": old_id})
        if is_gift_card(method):
            self._add_to_balance(user, payment_method_id, -amount)
        if is_gift_card(self.payment_method(user, old_id)):
            self._add_to_balance(user, old_id, amount)
        self.save("users", user)
        self.save("orders", order)
        return order

    @tool
    def modify_user_address(
        self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Change a user's default address. Explain and get an explicit yes first.

        Args:
            user_id: The user id, e.g. 'sara_doe_496'.
            address1: First address line, e.g. '123 Main St'.
            address2: Second address line, e.g. 'Apt 1', or ''.
            city: e.g. 'San Francisco'.
            state: e.g. 'CA'.
            country: e.g. 'USA'.
            zip: e.g. '12345'.
        """
        user = self.user(user_id)
        user["address"] = address(address1, address2, city, state, country, zip)
        self.save("users", user)
        return user

    @tool
    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Request the return of delivered items; the refund goes to the original payment method or a gift card,
        and the customer gets an email on how to send them back. Explain and get an explicit yes first.

        Args:
            order_id: The order id, with its leading '#', e.g. '#W0000000'.
            item_ids: The item ids to return (an id may repeat).
            payment_method_id: The original payment method or a gift card of the customer.
        """
        order = self.order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned", field="order_id")
        method = self.payment_method(self.user(order["user_id"]), payment_method_id)
        if not is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
            raise ToolError("Payment method should be the original payment method", field="payment_method_id")
        check_counts(order, item_ids, "Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        self.save("orders", order)
        return order
