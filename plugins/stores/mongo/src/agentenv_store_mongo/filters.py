"""`query(where=…)` as a MongoDB filter with the JSON equality every agentenv document store shares.

MongoDB's own equality differs from JSON's in three ways, and the filter closes each gap:

- `{field: value}` also matches an array that *contains* the value; JSON equality does not, so every condition
  adds `$not: {$type: "array"}` (for a list value, `$size` narrows instead and the array is compared exactly);
- `{field: null}` also matches a missing field; JSON's `null` matches only an explicit null, so it becomes
  `$type: "null"`;
- embedded documents compare with their keys in order; JSON objects do not, so object and list values are only
  narrowed by MongoDB (their type, a list's length) and compared exactly in Python (`rest`).

Booleans never equal numbers in MongoDB either (a different BSON type), and `1` equals `1.0` in both. A field
name that is no MongoDB path (empty, with a `.`, starting with `$`) and an integer beyond 64 bits are left to
Python entirely: no stored document can hold such an integer, but a float may equal it.
"""

from __future__ import annotations

from typing import Any

INT64 = (-(2**63), 2**63 - 1)
NOT_AN_ARRAY: dict[str, Any] = {"$not": {"$type": "array"}}


def mongo_filter(collection: str, where: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the MongoDB filter for the stored layout, the conditions Python must still check on what it returns)."""
    server: dict[str, Any] = {"_id.c": collection}
    rest: dict[str, Any] = {}
    for field, value in where.items():
        condition = _condition(value) if _is_path(field) else None
        if condition is None or isinstance(value, dict | list):
            rest[field] = value
        if condition is not None:
            server[f"doc.{field}"] = condition
    return server, rest


def _is_path(field: str) -> bool:
    """Whether `doc.<field>` names exactly this top-level field (MongoDB splits paths at dots)."""
    return bool(field) and "." not in field and not field.startswith("$") and "\x00" not in field


def _condition(value: Any) -> dict[str, Any] | None:
    """The MongoDB condition on one field; None when MongoDB cannot express or narrow it."""
    if value is None:
        return {"$type": "null", **NOT_AN_ARRAY}
    if isinstance(value, bool):
        return {"$eq": value, **NOT_AN_ARRAY}
    if isinstance(value, int):
        return {"$eq": value, **NOT_AN_ARRAY} if INT64[0] <= value <= INT64[1] else None
    if isinstance(value, float):
        return {"$eq": value, **NOT_AN_ARRAY}
    if isinstance(value, str):
        return {"$eq": value, **NOT_AN_ARRAY} if _encodable(value) else None
    if isinstance(value, list):
        return {"$size": len(value)}
    if isinstance(value, dict):
        return {"$type": "object", **NOT_AN_ARRAY}
    return None


def _encodable(text: str) -> bool:
    """Whether BSON can hold `text` (UTF-8: no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
