"""`agent_prompt_response_verifier`: deterministic checks on an agent's final response.

Each check is one of `contains`, `not_contains`, `regex` or `equals` (whitespace at both ends of the
response is ignored for `equals`), case-insensitive unless `case_sensitive = true`.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from agentenv.contracts import Step, StepContext, StepFailed
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_steps.verifiers.results import Row, Weighted, duplicate_names, make_row, verdict

TEXT_OPS = ("contains", "not_contains", "regex", "equals")


class TextCheck(Weighted):
    model_config = ConfigDict(extra="forbid")

    contains: str | None = Field(None, description="The response must contain this text.")
    not_contains: str | None = Field(None, description="The response must not contain this text.")
    regex: str | None = Field(None, description="The response must match this regular expression (re.search).")
    equals: str | None = Field(None, description="The whole response (trimmed) must be this text.")
    case_sensitive: bool = Field(False, description="Compare case-sensitively.")

    @model_validator(mode="after")
    def _one_op(self) -> TextCheck:
        given = [op for op in TEXT_OPS if getattr(self, op) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(TEXT_OPS)} (got {', '.join(given) or 'none'})")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"`regex` {self.regex!r} is not a valid regular expression: {exc}") from exc
        return self

    @property
    def op(self) -> tuple[str, str]:
        return next((op, getattr(self, op)) for op in TEXT_OPS if getattr(self, op) is not None)

    def label(self) -> str:
        op, value = self.op
        return self.name or f"{op} {value!r}"


def text_holds(text: str, op: str, value: str, case_sensitive: bool) -> bool:
    """Whether `text` satisfies one text check."""
    if op == "regex":
        return re.search(value, text, 0 if case_sensitive else re.IGNORECASE) is not None
    have, want = (text, value) if case_sensitive else (text.casefold(), value.casefold())
    if op == "contains":
        return want in have
    if op == "not_contains":
        return want not in have
    return have.strip() == want.strip()


def response_of(ctx: StepContext, step_id: str, field: str = "prompt_step") -> str:
    """The `response` a prompt_agent step recorded; a clear failure when it has none."""
    if step_id not in ctx.outputs:
        raise StepFailed(f"field `{field}`: step {step_id!r} has not produced output (did it run and succeed?)")
    output = ctx.outputs[step_id]
    if "response" not in output:
        raise StepFailed(
            f"field `{field}`: step {step_id!r} recorded no `response` (its outputs: "
            f"{', '.join(output) or 'none'}); point `{field}` at a prompt_agent step"
        )
    response = output["response"]
    return "" if response is None else str(response)


class ResponseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_step: str = Field(description="Id of the prompt_agent step whose `response` is checked.")
    checks: list[TextCheck] = Field(description="Checks: `{contains|not_contains|regex|equals, name, weight}`.")


class AgentPromptResponseVerifier(Step[ResponseSettings]):
    """Deterministic checks (contains, not_contains, regex, equals) on an agent's final response."""

    name = "agent_prompt_response_verifier"
    description = "Deterministic checks on an agent's final response: contains, not_contains, regex, equals."
    Settings = ResponseSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: ResponseSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        if settings.prompt_step not in step_ids:
            problems.append(("prompt_step", f"no step {settings.prompt_step!r} in this task; name a prompt_agent step"))
        if not settings.checks:
            problems.append(("checks", 'the list is empty; add at least one check, e.g. {contains = "refund"}'))
        if dupes := duplicate_names([c.label() for c in settings.checks]):
            problems.append(("checks", f"criterion names repeat ({', '.join(dupes)}); give each check its own `name`"))
        return problems

    async def execute(self, settings: ResponseSettings, ctx: StepContext) -> dict[str, Any]:
        response = response_of(ctx, settings.prompt_step)
        rows = [self._row(response, check) for check in settings.checks]
        return verdict(rows, prompt_step=settings.prompt_step)

    @staticmethod
    def _row(response: str, check: TextCheck) -> Row:
        op, value = check.op
        passed = text_holds(response, op, value, check.case_sensitive)
        excerpt = response if len(response) <= 160 else response[:157] + "…"
        return make_row(
            check.label(),
            passed,
            weight=check.weight,
            detail=f"{'ok' if passed else 'failed'}: {op} {value!r} on response {excerpt!r}",
        )
