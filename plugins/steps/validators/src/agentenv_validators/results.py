"""Rows and verdicts, in the shape every verifier step returns.

A verdict is `{"score": 0..1, "rows": [...], "passed": bool}`; each row is one criterion
`{"criterion", "passed", "score", "weight", "detail"}`. The score is the weighted mean of the rows'
scores and `passed` means every weighted row passed. No rows is an error, never a pass.
"""

from __future__ import annotations

from typing import Any

from agentenv.contracts import StepFailed

Row = dict[str, Any]


def row(criterion: str, passed: bool, detail: str = "", *, weight: float = 1.0) -> Row:
    """One criterion: score 1.0 when it passed, 0.0 when not."""
    return {
        "criterion": criterion,
        "passed": bool(passed),
        "score": 1.0 if passed else 0.0,
        "weight": float(weight),
        "detail": detail,
    }


def verdict(rows: list[Row], **extra: Any) -> dict[str, Any]:
    """The verifier output for `rows`; rows of weight 0 are shown but neither score nor decide `passed`."""
    if not rows:
        raise StepFailed("the validator found nothing to check; point it at a world with tools or data")
    total = sum(r["weight"] for r in rows)
    if total <= 0:
        raise StepFailed("every criterion has weight 0, so there is nothing to score")
    score = sum(r["score"] * r["weight"] for r in rows) / total
    passed = all(r["passed"] for r in rows if r["weight"] > 0)
    return {"score": score, "rows": rows, "passed": passed, **extra}


def failures(rows: list[Row]) -> list[Row]:
    """The rows that failed and count (weight above 0)."""
    return [r for r in rows if not r["passed"] and r["weight"] > 0]
