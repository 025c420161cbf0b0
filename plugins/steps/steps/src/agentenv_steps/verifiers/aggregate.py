"""`aggregate_verifiers`: combine several verifier steps into one score.

- `weighted_average` (default): the weighted mean of the verifiers' scores (`weights`, default 1 each);
- `all_pass`: 1.0 when every verifier passed, else 0.0;
- `any_pass`: 1.0 when at least one verifier passed, else 0.0.

Rows are carried over with the verifier id in front (`outcome/refund issued`). A verifier that did not
produce a result (it failed with `fail_task_on_error = false`) counts as failed with score 0, and says so.
A verifier that was not graded (its judge had no model) makes the combination not graded, which never passes.
Put this step last: the task's score is the last verifier's.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from agentenv.contracts import Step, StepContext, StepFailed
from pydantic import BaseModel, ConfigDict, Field

from agentenv_steps.verifiers.results import Row, duplicate_names, make_row


class AggregateSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verifiers: list[str] = Field(description="Ids of the verifier steps to combine.")
    method: Literal["all_pass", "any_pass", "weighted_average"] = Field(
        "weighted_average", description="How scores combine: all_pass, any_pass or weighted_average."
    )
    weights: dict[str, float] = Field(default_factory=dict, description="Verifier id → weight (default 1).")


class AggregateVerifiers(Step[AggregateSettings]):
    """Combine verifier steps' rows and scores into one (all_pass, any_pass, weighted_average)."""

    name = "aggregate_verifiers"
    description = "Combine several verifiers' rows into one score: all_pass, any_pass or weighted_average."
    Settings = AggregateSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: AggregateSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        if not settings.verifiers:
            problems.append(("verifiers", "the list is empty; name the verifier steps to combine"))
        for vid in settings.verifiers:
            if vid not in step_ids:
                problems.append(("verifiers", f"no step {vid!r} in this task (steps: {', '.join(step_ids)})"))
        if dupes := duplicate_names(list(settings.verifiers)):
            problems.append(("verifiers", f"listed twice: {', '.join(dupes)}"))
        for vid, weight in settings.weights.items():
            if vid not in settings.verifiers:
                problems.append((f"weights.{vid}", f"{vid!r} is not in `verifiers`; weigh only listed verifiers"))
            if weight < 0:
                problems.append((f"weights.{vid}", f"weight {weight} is negative; use 0 or more"))
        if (
            settings.method == "weighted_average"
            and settings.verifiers
            and sum(settings.weights.get(v, 1.0) for v in settings.verifiers) <= 0
        ):
            problems.append(
                ("weights", "every weight is 0, so there is nothing to average; give one a positive weight")
            )
        return problems

    async def execute(self, settings: AggregateSettings, ctx: StepContext) -> dict[str, Any]:
        rows: list[Row] = []
        parts: dict[str, dict[str, Any]] = {}
        for vid in settings.verifiers:
            output = ctx.outputs.get(vid)
            weight = settings.weights.get(vid, 1.0)
            if output is None:
                parts[vid] = {"score": 0.0, "passed": False, "weight": weight, "missing": True}
                rows.append(
                    make_row(
                        f"{vid}",
                        False,
                        weight=weight,
                        detail="the verifier produced no result (it failed or did not run)",
                    )
                )
                continue
            if not isinstance(output.get("score"), int | float) or not isinstance(output.get("rows"), list):
                raise StepFailed(
                    f"field `verifiers`: step {vid!r} is not a verifier (its output has no score and "
                    "rows); list only verifier steps"
                )
            score = float(output["score"])
            passed = bool(output.get("passed", all(r.get("passed") for r in output["rows"])))
            parts[vid] = {"score": score, "passed": passed, "weight": weight}
            if output.get("graded") is False:  # a part that was not graded makes the whole not graded
                parts[vid]["graded"] = False
            for row in output["rows"]:
                rows.append({**row, "criterion": f"{vid}/{row.get('criterion')}"})
        combined = combine(settings.method, parts)
        if any(p.get("graded") is False for p in parts.values()):
            combined |= {"passed": False, "graded": False, "not_graded": [v for v, p in parts.items() if "graded" in p]}
        return {**combined, "rows": rows, "method": settings.method, "verifiers": parts}


def combine(method: str, parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Score and pass flag of the combination."""
    if method == "all_pass":
        passed = all(p["passed"] for p in parts.values())
        return {"score": 1.0 if passed else 0.0, "passed": passed}
    if method == "any_pass":
        passed = any(p["passed"] for p in parts.values())
        return {"score": 1.0 if passed else 0.0, "passed": passed}
    total = sum(p["weight"] for p in parts.values())
    score = sum(p["score"] * p["weight"] for p in parts.values()) / total
    passed = all(p["passed"] for p in parts.values() if p["weight"] > 0)
    return {"score": score, "passed": passed}
