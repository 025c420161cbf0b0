"""What a verifier step returns, checked by the engine before its score counts.

A verifier (a step type with `verifier = True`) returns `{"score": 0..1, "passed": bool, "rows": [...]}`, each row
one criterion with its evidence (`{"criterion", "passed", "score", "weight", "detail"}`); fields beyond these are
kept as they are. `graded = false` says the verifier could not grade (an LLM judge with no model): the run is then
recorded as not graded, which is never a pass, whatever the score. A result that does not fit fails that step
with the reason instead of crashing the run at the end (a score of "high"), passing out of range (7.5) or
silently becoming 0.0 (no score).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, ValidationError, model_validator

Fraction = Annotated[StrictFloat, Field(ge=0, le=1, allow_inf_nan=False)]


class Criterion(BaseModel):
    """One graded criterion of a verifier's result: what was checked, whether it held, and the evidence."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    criterion: str | None = None
    passed: StrictBool | None = None
    score: Fraction | None = None
    weight: Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)] | None = None
    detail: Any = Field(None, description="The evidence: what was seen that decided the criterion.")


class VerifierResult(BaseModel):
    """A verifier step's output. Return it (or the same fields as a dict) from `execute`."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    score: Fraction
    passed: StrictBool | None = None
    rows: list[Criterion] | None = None
    graded: StrictBool | None = Field(None, description="False: the verifier could not grade (never a pass).")

    @model_validator(mode="after")
    def _not_graded_never_passes(self) -> VerifierResult:
        if self.graded is False and self.passed is True:
            raise ValueError("`passed` is true but `graded` is false: a result that was not graded cannot pass")
        return self


def verifier_result_problem(output: Any) -> str | None:
    """Why `output` is not a verifier result (every bad field, named), or None when it is one."""
    try:
        VerifierResult.model_validate(output)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            field = ".".join(str(part) for part in error["loc"]) or "(result)"
            got = f" (got {error['input']!r})" if error["type"] != "missing" else ""
            problems.append(f"field `{field}`: {error['msg']}{got}")
        fix = 'return {"score": a number from 0 to 1, "passed": true or false, "rows": [one per criterion]}'
        return f"verifier result: {'; '.join(problems)}; fix: {fix}"
    return None


def verifier_score(output: Any) -> float | None:
    """The score of a verifier's output, or None when it is not a valid result (a record stored before the check)."""
    try:
        return VerifierResult.model_validate(output).score
    except ValidationError:
        return None


def all_graded(outputs: Iterable[Any]) -> bool:
    """False when any verifier output says it was not graded (`graded = false`)."""
    return not any(isinstance(output, dict) and output.get("graded") is False for output in outputs)
