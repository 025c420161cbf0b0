"""The retail database as documents in SQLite: one row per user, order and product, its JSON in `doc`.

Documents keep the exact shape τ²-bench's pydantic models dump (see `scripts/generate_artifact.py`), written
back as canonical JSON (sorted keys, no spaces), so two states are equal exactly when τ² would hash them equal,
and the runtime's row digest, forks and savepoints work on them unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from agentenv_runtime import Env, ToolError

SCHEMA = """
CREATE TABLE products (product_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE users (user_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE orders (order_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE INDEX users_by_zip ON users (json_extract(doc, '$.address.zip'));
CREATE INDEX users_by_email ON users (lower(json_extract(doc, '$.email')));
"""
"""The indexes serve the two user look-ups, which would otherwise parse all 500 users' JSON on every call."""

KEYS = {"products": "product_id", "users": "user_id", "orders": "order_id"}


def canonical(doc: Any) -> str:
    """The one text a document is stored as: equal documents, equal rows, equal digests."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


class DocumentStore(Env):
    """Reads and writes of whole documents; the tools (`env.py`) keep τ²'s rules and error texts."""

    schema = SCHEMA

    def document(self, table: str, key: str) -> dict[str, Any] | None:
        row = self.db.execute(f"SELECT doc FROM {table} WHERE {KEYS[table]} = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def save(self, table: str, doc: dict[str, Any]) -> None:
        self.db.execute(f"UPDATE {table} SET doc = ? WHERE {KEYS[table]} = ?", (canonical(doc), doc[KEYS[table]]))

    def documents(self, table: str) -> list[dict[str, Any]]:
        """Every document in the database's order (τ²'s dict order, which its look-up scans follow)."""
        return [json.loads(row[0]) for row in self.db.execute(f"SELECT doc FROM {table} ORDER BY rowid")]

    # ---- τ²'s look-ups, with its error texts ---------------------------------------------------------------
    def order(self, order_id: str) -> dict[str, Any]:
        doc = self.document("orders", order_id)
        if doc is None:
            raise ToolError("Order not found", code="not_found", field="order_id")
        return doc

    def user(self, user_id: str) -> dict[str, Any]:
        doc = self.document("users", user_id)
        if doc is None:
            raise ToolError("User not found", code="not_found", field="user_id")
        return doc

    def product(self, product_id: str) -> dict[str, Any]:
        doc = self.document("products", product_id)
        if doc is None:
            raise ToolError("Product not found", code="not_found", field="product_id")
        return doc

    def variant(self, product_id: str, item_id: str) -> dict[str, Any]:
        variants = self.product(product_id)["variants"]
        if item_id not in variants:
            raise ToolError("Variant not found", code="not_found", field="new_item_ids")
        return dict(variants[item_id])

    def payment_method(self, user: dict[str, Any], payment_method_id: str) -> dict[str, Any]:
        methods = user["payment_methods"]
        if payment_method_id not in methods:
            raise ToolError("Payment method not found", code="not_found", field="payment_method_id")
        return dict(methods[payment_method_id])

    def dump(self) -> dict[str, dict[str, Any]]:
        """The whole database as τ²'s `RetailDB.model_dump()` would give it (for its hash, and for tests)."""
        return {table: {doc[key]: doc for doc in self.documents(table)} for table, key in KEYS.items()}
