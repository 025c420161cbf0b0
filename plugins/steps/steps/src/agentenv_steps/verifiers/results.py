"""Rows and scores: the shape every verifier step returns.

A verifier's output is `{"score": 0..1, "rows": [...], "passed": bool}`. Each row is one criterion:
`{"criterion", "passed", "score", "weight", "detail"}`. The score is the weighted mean of the rows'
scores; `passed` means every row passed. An empty list of rows is never a pass: it is an error.
"""

from __future__ import annotations

from typing import Any

from agentenv.contracts import StepFailed
from pydantic import BaseModel, Field

Row = dict[str, Any]


class Weighted(BaseModel):
    """Fields every criterion shares: an optional display name and a weight."""

    name: str | None = Field(None, description="Criterion name shown in the rows (default: derived from the check).")
    weight: float = Field(1.0, gt=0, description="Relative weight of this criterion in the score.")


def make_row(criterion: str, passed: bool, *, weight: float = 1.0, detail: str = "", score: float | None = None) -> Row:
    """One row; `score` defaults to 1.0 for a pass and 0.0 for a failure."""
    value = (1.0 if passed else 0.0) if score is None else float(score)
    return {"criterion": criterion, "passed": bool(passed), "score": value, "weight": float(weight), "detail": detail}


def verdict(rows: list[Row], **extra: Any) -> dict[str, Any]:
    """The verifier output for `rows`: weighted score, all-passed flag, plus any extra fields."""
    if not rows:
        raise StepFailed("the verifier produced no criteria to grade; add at least one check")
    total = sum(r["weight"] for r in rows)
    if total <= 0:
        raise StepFailed("every criterion has weight 0, so there is nothing to score; give one a positive weight")
    score = sum(r["score"] * r["weight"] for r in rows) / total
    return {"score": score, "rows": rows, "passed": all(r["passed"] for r in rows), **extra}


def duplicate_names(names: list[str]) -> list[str]:
    """Names given more than once (rows must be told apart)."""
    seen: set[str] = set()
    return sorted({n for n in names if n in seen or seen.add(n)})  # type: ignore[func-returns-value]
