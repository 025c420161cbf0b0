"""`rubrics_verifier`: grade a response and a trajectory against weighted, named criteria.

A criterion has a `name`, a `weight`, a `description` and, optionally, a deterministic `check`:
`{response_contains}`, `{response_regex}`, `{tool_called, args, result, role}` (a successful call in the
world's trajectory whose arguments/result satisfy the trigger predicates) or `{sql, env, equals}` (the
world's state). `judge` says who decides:

- `auto` (default): the `check` when there is one, the LLM judge for description-only criteria;
- `deterministic`: checks only; preflight refuses a criterion without one;
- `llm`: the LLM judge decides every criterion from its description.

Criteria that need the LLM judge need a configured model (`[model] base_url` and `model`). Preflight
cannot see the run's configuration, so without one the step fails as it starts, naming the criterion:
nothing is ever passed by default.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_steps.verifiers.judge import ask_judge, configured_model, evidence
from agentenv_steps.verifiers.response import response_of, text_holds
from agentenv_steps.verifiers.results import Row, duplicate_names, make_row, verdict
from agentenv_steps.verifiers.state import calls_of, first_value, matching_calls, sql_holds

CHECK_KINDS = ("response_contains", "response_regex", "tool_called", "sql")
_ONLY_WITH = {"args": "tool_called", "result": "tool_called", "role": "tool_called", "env": "sql", "equals": "sql"}


class RubricCheck(BaseModel):
    """A deterministic check: exactly one of response_contains, response_regex, tool_called, sql."""

    model_config = ConfigDict(extra="forbid")

    response_contains: str | None = Field(None, description="The response contains this text (any case).")
    response_regex: str | None = Field(None, description="The response matches this regex (any case).")
    tool_called: str | None = Field(None, description="A successful call of this tool is in the trajectory.")
    args: dict[str, Any] = Field(default_factory=dict, description="Dotted path → predicate on the call's args.")
    result: dict[str, Any] = Field(default_factory=dict, description="Dotted path → predicate on the call's result.")
    role: str | None = Field(None, description="Only calls by this role (default: any role but `system`).")
    sql: str | None = Field(None, description="A read-only query on the world's state; its first value decides.")
    env: str | None = Field(None, description="App whose state `sql` reads (optional with one app).")
    equals: Any = Field(None, description="Expected first value of `sql`; absent = truthy.")

    @model_validator(mode="after")
    def _one_kind(self) -> RubricCheck:
        given = [k for k in CHECK_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(CHECK_KINDS)} (got {', '.join(given) or 'none'})")
        for field, owner in _ONLY_WITH.items():
            if field in self.model_fields_set and given[0] != owner:
                raise ValueError(f"`{field}` belongs with `{owner}`, not `{given[0]}`")
        if self.response_regex is not None:
            try:
                re.compile(self.response_regex)
            except re.error as exc:
                raise ValueError(f"`response_regex` is not a valid regular expression: {exc}") from exc
        return self

    @property
    def kind(self) -> str:
        return next(k for k in CHECK_KINDS if getattr(self, k) is not None)


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Unique criterion name (the row's `criterion`).")
    weight: float = Field(1.0, gt=0, description="Relative weight in the score.")
    description: str = Field("", description="What a good answer does; what the LLM judge reads.")
    check: RubricCheck | None = Field(None, description="A deterministic check; without one the LLM judge decides.")


class RubricsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_step: str | None = Field(None, description="Id of the prompt_agent step whose response is graded.")
    env: str | None = Field(None, description="Id of the deploy_env step whose trajectory and state are graded.")
    criteria: list[Criterion] = Field(description="Weighted criteria: `{name, weight, description, check}`.")
    judge: Literal["auto", "deterministic", "llm"] = Field(
        "auto", description="auto: check if given, else LLM; deterministic: checks only; llm: LLM for all."
    )
    timeout: float = Field(120.0, gt=0, description="Seconds to wait for the LLM judge's answer.")


class RubricsVerifier(Step[RubricsSettings]):
    """Weighted criteria decided by deterministic checks or an LLM judge over response and trajectory."""

    name = "rubrics_verifier"
    description = "Grade a response and trajectory against weighted criteria: deterministic checks or an LLM judge."
    Settings = RubricsSettings
    verifier: ClassVar[bool] = True

    def needs_model(self, settings: RubricsSettings) -> tuple[str, str] | None:
        for i, c in enumerate(settings.criteria):
            if settings.judge == "llm" or (settings.judge == "auto" and c.check is None):
                return (
                    f"criteria.{i}",
                    f"criterion {c.name!r} has no deterministic `check`: the LLM judge deciding it",
                )
        return None

    def preflight(self, settings: RubricsSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        for field in ("prompt_step", "env"):
            value = getattr(settings, field)
            if value is not None and value not in step_ids:
                kind = "prompt_agent" if field == "prompt_step" else "deploy_env"
                problems.append((field, f"no step {value!r} in this task; name a {kind} step"))
        if not settings.criteria:
            problems.append(("criteria", "the list is empty; add at least one `{name, description, check}`"))
        if dupes := duplicate_names([c.name for c in settings.criteria]):
            problems.append(("criteria", f"criterion names repeat ({', '.join(dupes)}); names must be unique"))
        for i, c in enumerate(settings.criteria):
            where = f"criteria.{i}"
            uses_llm = settings.judge == "llm" or (settings.judge == "auto" and c.check is None)
            if settings.judge == "deterministic" and c.check is None:
                problems.append(
                    (
                        f"{where}.check",
                        f"criterion {c.name!r} has no `check`, and judge = "
                        '"deterministic"; add a check or use judge = "auto" with a configured [model]',
                    )
                )
            if uses_llm and not c.description.strip():
                problems.append(
                    (
                        f"{where}.description",
                        f"criterion {c.name!r} is decided by the LLM judge, which "
                        "needs a `description` of what a good answer does",
                    )
                )
            if uses_llm and settings.prompt_step is None and settings.env is None:
                problems.append(
                    (
                        "prompt_step",
                        f"criterion {c.name!r} is decided by the LLM judge, which needs "
                        "evidence: set `prompt_step` (the response) and/or `env` (the trajectory)",
                    )
                )
            if c.check is None or settings.judge == "llm":
                continue
            if c.check.kind.startswith("response_") and settings.prompt_step is None:
                problems.append(("prompt_step", f"criterion {c.name!r} checks the response; set `prompt_step`"))
            if c.check.kind in ("tool_called", "sql") and settings.env is None:
                problems.append(("env", f"criterion {c.name!r} checks the world; set `env` to the deploy_env step"))
        return problems

    async def execute(self, settings: RubricsSettings, ctx: StepContext) -> dict[str, Any]:
        by_llm = [
            c for c in settings.criteria if settings.judge == "llm" or (settings.judge == "auto" and c.check is None)
        ]
        model = None
        if by_llm:
            model, missing = configured_model(ctx)
            if model is None:
                raise StepFailed(
                    f"criterion {by_llm[0].name!r} has no deterministic check and no model is "
                    f"configured ({missing} not set); add `check` to the criterion or configure "
                    "[model] base_url and model in .agentenv/config.toml (or pass --model)"
                )
        response = response_of(ctx, settings.prompt_step) if settings.prompt_step else None
        world = ctx.resource(settings.env, World) if settings.env else None
        rows: dict[str, Row] = {}
        llm_names = {c.name for c in by_llm}
        for c in settings.criteria:
            if c.check is not None and c.name not in llm_names:
                rows[c.name] = self._check_row(c, c.check, response, world)
        if by_llm and model is not None:
            calls = None if world is None else [e for e in world.trajectory.events if e.get("kind") == "tool_call"]
            material = evidence(prompt_of(ctx.outputs.get(settings.prompt_step or "", {})), response, calls)
            answers = await ask_judge(model, [(c.name, c.description) for c in by_llm], material, settings.timeout)
            for c in by_llm:
                passed, reason = answers[c.name]
                rows[c.name] = make_row(c.name, passed, weight=c.weight, detail=f"LLM judge ({model.model}): {reason}")
        extra: dict[str, Any] = {"judge": {"model": model.model, "criteria": [c.name for c in by_llm]}} if model else {}
        return verdict([rows[c.name] for c in settings.criteria], **extra)

    @staticmethod
    def _check_row(c: Criterion, check: RubricCheck, response: str | None, world: World | None) -> Row:
        where = f"criterion {c.name!r}"
        if check.kind.startswith("response_"):
            if response is None:
                raise StepFailed(f"{where} checks the response; set `prompt_step`")
            op, value = (
                ("contains", check.response_contains)
                if check.response_contains is not None
                else ("regex", check.response_regex)
            )
            passed = text_holds(response, op, value or "", case_sensitive=False)
            return make_row(
                c.name,
                passed,
                weight=c.weight,
                detail=f"response {'matches' if passed else 'does not match'} {op} {value!r}",
            )
        if world is None:
            raise StepFailed(f"{where} checks the world; set `env` to the deploy_env step")
        if check.kind == "sql":
            value = first_value(world, check.env, check.sql or "", where)
            has_equals = "equals" in check.model_fields_set
            passed = sql_holds(value, check.equals, has_equals)
            wanted = f"expected {check.equals!r}" if has_equals else "expected a truthy value"
            return make_row(c.name, passed, weight=c.weight, detail=f"got {value!r}, {wanted}")
        tool = check.tool_called or ""
        found = matching_calls(world, tool, check.args, check.result, check.role)
        if found:
            detail = (
                f"{len(found)} matching call(s) of {tool} (trajectory seq {', '.join(str(e['seq']) for e in found)})"
            )
        else:
            detail = f"no successful call of {tool} matched ({calls_of(world, tool)} successful call(s) of it in all)"
        return make_row(c.name, bool(found), weight=c.weight, detail=detail)


def prompt_of(output: dict[str, Any]) -> str | None:
    """The prompt a prompt step sent: its `prompt` output, or the user side of its first turn."""
    prompt = output.get("prompt")
    if isinstance(prompt, str):
        return prompt
    turns = output.get("turns")
    if isinstance(turns, list) and turns and isinstance(turns[0], dict) and isinstance(turns[0].get("user"), str):
        return str(turns[0]["user"])
    return None
