"""How a rubric's rows become one score, with negative criteria and rows that were not graded.

- `weighted_mean` (default): the weighted mean of the positive criteria's scores, minus the weight of every
  negative criterion the agent fell into (as a share of the positive weight), clipped to 0..1; with only
  negative criteria, 1 minus the share of their weight that was incurred;
- `mean`: the same with every criterion weighing 1 (the weights are ignored);
- `all_pass`: 1 when every graded row passed, else 0;
- `min`: the lowest row score.

A row that was not graded (its judge had no model) is left out of the score and makes the whole result not
graded: `passed` is then false whatever the score, and the engine records the run as not graded.
"""

from __future__ import annotations

from typing import Any, Literal

from agentenv.contracts import StepFailed

from agentenv_steps.verifiers.results import Row

Aggregator = Literal["weighted_mean", "mean", "all_pass", "min"]


def rubric_score(rows: list[Row], method: Aggregator) -> float:
    """The score of the graded rows (0.0 when none was graded)."""
    graded = [r for r in rows if r.get("graded") is not False]
    if not graded:
        return 0.0
    if method == "all_pass":
        return 1.0 if all(r["passed"] for r in graded) else 0.0
    if method == "min":
        return min(float(r["score"]) for r in graded)

    def weight(row: Row) -> float:
        return 1.0 if method == "mean" else float(row["weight"])

    positive = [r for r in graded if not r.get("negative")]
    negative = [r for r in graded if r.get("negative")]
    incurred = sum(weight(r) * (1.0 - r["score"]) for r in negative)
    if positive:
        total = sum(weight(r) for r in positive)
        value = (sum(weight(r) * r["score"] for r in positive) - incurred) / total
    else:
        value = 1.0 - incurred / sum(weight(r) for r in negative)
    return float(min(1.0, max(0.0, value)))


def rubric_verdict(rows: list[Row], method: Aggregator, **extra: Any) -> dict[str, Any]:
    """The rubric's output: score, passed (every row passed and all were graded), `graded`, the rows."""
    if not rows:
        raise StepFailed("the rubric produced no criteria to grade; add at least one criterion")
    not_graded = [r["criterion"] for r in rows if r.get("graded") is False]
    passed = not not_graded and all(r["passed"] for r in rows)
    result: dict[str, Any] = {"score": rubric_score(rows, method), "passed": passed, "rows": rows}
    result["graded"] = not not_graded
    if not_graded:
        result["not_graded"] = not_graded
    return {**result, "aggregator": method, **extra}
