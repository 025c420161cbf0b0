"""Money at the edges: tools speak decimal amounts (89.99), the database keeps integer cents.

Floats are only a transport format here. Every amount is turned into cents through `Decimal(str(x))`,
which reads the shortest decimal form of the float, so 89.99 becomes exactly 8999 cents and sums
never drift. Amounts with fractions of a cent are refused by the schema, before a tool runs.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, Field

MAX_AMOUNT = 1_000_000


def _whole_cents(value: float) -> float:
    if Decimal(str(value)).as_tuple().exponent < -2:  # type: ignore[operator]
        raise ValueError(f"{value} has more than 2 decimal places; give the amount in whole cents, e.g. 89.99")
    return value


Money = Annotated[float, Field(gt=0, le=MAX_AMOUNT, strict=True), AfterValidator(_whole_cents)]
"""A positive amount in the desk's currency with at most 2 decimals."""


def to_cents(amount: float) -> int:
    return int(Decimal(str(amount)) * 100)


def from_cents(cents: int) -> float:
    """Cents as a 2-decimal number for JSON (8999 → 89.99)."""
    return float(Decimal(cents) / 100)
