"""Build `artifacts/tau2.json.gz` from τ²-bench's retail `db.json`.

Each user, order and product becomes one row holding its document as canonical JSON, shaped exactly as τ²'s
pydantic models dump it: optional order fields present as null, fields the models do not declare dropped, and
money as floats. Two states are then equal for τ² (its hash is over `model_dump()`) exactly when our rows are.

    python plugins/envs/retail/scripts/generate_artifact.py ../shared/tau2-bench/retail/db.json
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "src" / "agentenv_retail" / "artifacts" / "tau2.json.gz"

ADDRESS = ("address1", "address2", "city", "country", "state", "zip")
ORDER_OPTIONAL = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)
PAYMENT_FIELDS = {
    "credit_card": ("source", "id", "brand", "last_four"),
    "paypal": ("source", "id"),
    "gift_card": ("source", "id", "balance"),
}


def pick(doc: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {field: doc[field] for field in fields}


def product(doc: dict[str, Any]) -> dict[str, Any]:
    variants = {
        key: {
            "item_id": v["item_id"],
            "options": dict(v["options"]),
            "available": bool(v["available"]),
            "price": float(v["price"]),
        }
        for key, v in doc["variants"].items()
    }
    return {"name": doc["name"], "product_id": doc["product_id"], "variants": variants}


def payment_method(doc: dict[str, Any]) -> dict[str, Any]:
    shaped = pick(doc, PAYMENT_FIELDS[doc["source"]])
    if "balance" in shaped:
        shaped["balance"] = float(shaped["balance"])
    return shaped


def user(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_id": doc["user_id"],
        "name": pick(doc["name"], ("first_name", "last_name")),
        "address": pick(doc["address"], ADDRESS),
        "email": doc["email"],
        "payment_methods": {key: payment_method(pm) for key, pm in doc["payment_methods"].items()},
        "orders": list(doc["orders"]),
    }


def order(doc: dict[str, Any]) -> dict[str, Any]:
    shaped = {
        "order_id": doc["order_id"],
        "user_id": doc["user_id"],
        "address": pick(doc["address"], ADDRESS),
        "items": [
            {
                "name": i["name"],
                "product_id": i["product_id"],
                "item_id": i["item_id"],
                "price": float(i["price"]),
                "options": dict(i["options"]),
            }
            for i in doc["items"]
        ],
        "status": doc["status"],
        "fulfillments": [
            {"tracking_id": list(f["tracking_id"]), "item_ids": list(f["item_ids"])} for f in doc["fulfillments"]
        ],
        "payment_history": [
            {
                "transaction_type": p["transaction_type"],
                "amount": float(p["amount"]),
                "payment_method_id": p["payment_method_id"],
            }
            for p in doc["payment_history"]
        ],
    }
    for field in ORDER_OPTIONAL:
        shaped[field] = doc.get(field)
    return shaped


def canonical(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def main(source: str) -> None:
    db = json.loads(Path(source).read_text(encoding="utf-8"))
    data = {
        "products": [{"product_id": k, "doc": canonical(product(v))} for k, v in db["products"].items()],
        "users": [{"user_id": k, "doc": canonical(user(v))} for k, v in db["users"].items()],
        "orders": [{"order_id": k, "doc": canonical(order(v))} for k, v in db["orders"].items()],
    }
    artifact = {
        "name": "tau2",
        "env": "retail",
        "version": "1.0.0",
        "description": "τ²-bench retail database (50 products, 500 users, 1,000 orders), MIT, Sierra Research; "
        "see TAU2-LICENSE beside this file.",
        "data": data,
    }
    raw = json.dumps(artifact, sort_keys=True, separators=(",", ":")).encode()
    OUT.write_bytes(gzip.compress(raw, mtime=0))
    print(f"{OUT}: {len(raw)} bytes of JSON, {OUT.stat().st_size} compressed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/tau2-bench/retail/db.json")
