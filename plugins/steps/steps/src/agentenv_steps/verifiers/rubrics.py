"""`rubrics_verifier`: grade a response and a trajectory against weighted, named criteria.

A criterion has a `name`, a `weight`, a `description`, `negative = true` when it describes a mistake (the
row passes when the agent did not make it; its weight is a penalty), and, optionally, a deterministic
`check`: `{response_contains}`, `{response_regex}`, `{tool_called, args, result, role}` (a successful call in
the world's trajectory whose arguments/result satisfy the trigger predicates) or `{sql, env, equals}` (the
world's state). `judge` says who decides:

- `auto` (default): the `check` when there is one, the judge for description-only criteria;
- `deterministic`: checks only; preflight refuses a criterion without one;
- `llm`: the judge decides every criterion from its description.

The judge is the LLM judge (`judge_model`, else `[model]` and `--model`) or, with `judge_agent`, an agent of
any installed kind. It answers `pass_fail` or `partial_credit`, with evidence per criterion and a list of
mistakes when asked, under the task's grading `policy` and `facts`. `up_to_turn` grades the conversation as
it stood after that turn; `trajectory_filter` narrows the tool calls the judge reads; `aggregator` makes the
score. An LLM judge with no model configured grades nothing: its rows are "not graded", the result is not
graded and never passes, and the engine records the run as not graded.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_steps.verifiers.graded_view import TrajectoryFilter, events_up_to_turn, response_at_turn
from agentenv_steps.verifiers.judge import JudgeModelSettings, ask_judge, configured_model, evidence
from agentenv_steps.verifiers.judge_agent import JudgeAgentSettings, ask_judge_agent
from agentenv_steps.verifiers.judging import Ask, JudgeAnswer, JudgeBrief, OutputFormat
from agentenv_steps.verifiers.response import response_of, text_holds
from agentenv_steps.verifiers.results import Row, duplicate_names, make_row
from agentenv_steps.verifiers.rubric_score import Aggregator, rubric_verdict
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
    check: RubricCheck | None = Field(None, description="A deterministic check; without one the judge decides.")
    negative: bool = Field(
        False, description="The criterion describes a mistake: the row passes when it did not happen (a penalty)."
    )


class RubricsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_step: str | None = Field(None, description="Id of the prompt_agent step whose response is graded.")
    env: str | None = Field(None, description="Id of the deploy_env step whose trajectory and state are graded.")
    criteria: list[Criterion] = Field(description="Weighted criteria: `{name, weight, description, check}`.")
    judge: Literal["auto", "deterministic", "llm"] = Field(
        "auto", description="auto: check if given, else the judge; deterministic: checks only; llm: the judge for all."
    )
    timeout: float = Field(120.0, gt=0, description="Seconds to wait for the LLM judge's answer.")
    judge_model: JudgeModelSettings | None = Field(
        None, description="This step's judge model and endpoint `{model, base_url, api_key}`, over [model]."
    )
    judge_agent: JudgeAgentSettings | None = Field(
        None, description="An agent `{kind, settings, model}` as the judge, instead of the LLM judge."
    )
    output: OutputFormat = Field("pass_fail", description="pass_fail, or partial_credit (a 0..1 score each).")
    pass_at: float = Field(1.0, gt=0, le=1, description="A row passes when its score is at least this.")
    evidence: bool = Field(False, description="The judge must quote the evidence for each criterion.")
    mistakes: bool = Field(False, description="The judge also lists the agent's mistakes (output `mistakes`).")
    policy: str | None = Field(None, description="The task's grading policy, given to the judge.")
    facts: list[str] = Field(default_factory=list, description="Context facts the judge may rely on.")
    up_to_turn: int | None = Field(None, ge=1, description="Grade the conversation as it stood after this turn.")
    trajectory_filter: TrajectoryFilter = Field(
        default_factory=TrajectoryFilter, description="Which tool calls the judge reads."
    )
    aggregator: Aggregator = Field("weighted_mean", description="weighted_mean, mean, all_pass or min.")


class RubricsVerifier(Step[RubricsSettings]):
    """Weighted criteria over response and trajectory, decided by deterministic checks, an LLM judge or an agent."""

    name = "rubrics_verifier"
    description = "Grade a response and trajectory against weighted criteria: checks, an LLM judge or an agent judge."
    Settings = RubricsSettings
    verifier: ClassVar[bool] = True

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
            if c.check is not None and c.check.kind == "sql" and settings.up_to_turn is not None:
                problems.append(
                    (
                        f"{where}.check",
                        f"criterion {c.name!r} reads the world's state, which is the final state: it cannot be "
                        "graded at an earlier turn; drop `up_to_turn` or use a `tool_called` check",
                    )
                )
            if c.check is None or settings.judge == "llm":
                continue
            if c.check.kind.startswith("response_") and settings.prompt_step is None:
                problems.append(("prompt_step", f"criterion {c.name!r} checks the response; set `prompt_step`"))
            if c.check.kind in ("tool_called", "sql") and settings.env is None:
                problems.append(("env", f"criterion {c.name!r} checks the world; set `env` to the deploy_env step"))
        if settings.up_to_turn is not None and settings.prompt_step is None and settings.env is None:
            problems.append(("up_to_turn", "there is no conversation to cut: set `prompt_step` and/or `env`"))
        if settings.judge_model is not None and settings.judge_agent is not None:
            problems.append(("judge_agent", "give `judge_model` (the LLM judge) or `judge_agent`, not both"))
        return problems

    async def execute(self, settings: RubricsSettings, ctx: StepContext) -> dict[str, Any]:
        by_judge = [
            c for c in settings.criteria if settings.judge == "llm" or (settings.judge == "auto" and c.check is None)
        ]
        prompt_output = ctx.outputs.get(settings.prompt_step or "", {})
        response = response_of(ctx, settings.prompt_step) if settings.prompt_step else None
        response = response_at_turn(prompt_output, settings.up_to_turn, response) if settings.prompt_step else None
        world = ctx.resource(settings.env, World) if settings.env else None
        events = None if world is None else events_up_to_turn(list(world.trajectory.events), settings.up_to_turn)
        rows: dict[str, Row] = {}
        judged = {c.name for c in by_judge}
        for c in settings.criteria:
            if c.check is not None and c.name not in judged:
                rows[c.name] = self._scored(c, self._check_row(c, c.check, response, world, events), settings)
        extra: dict[str, Any] = {}
        if by_judge:
            extra = await self._judge(settings, ctx, by_judge, rows, prompt_output, response, events)
        return rubric_verdict([rows[c.name] for c in settings.criteria], settings.aggregator, **extra)

    async def _judge(
        self,
        settings: RubricsSettings,
        ctx: StepContext,
        criteria: list[Criterion],
        rows: dict[str, Row],
        prompt_output: dict[str, Any],
        response: str | None,
        events: list[dict[str, Any]] | None,
    ) -> dict[str, Any]:
        """Ask the judge about `criteria` and fill their rows; without a judge model, rows that say not graded."""
        brief = JudgeBrief(
            settings.output, settings.evidence, settings.mistakes, settings.policy, tuple(settings.facts)
        )
        asks = [Ask(c.name, c.description, c.negative) for c in criteria]
        calls = None
        if events is not None:
            calls = [e for e in events if e.get("kind") == "tool_call" and settings.trajectory_filter.keeps(e)]
        material = evidence(prompt_of(prompt_output), response, calls)
        answer: JudgeAnswer | str
        if settings.judge_agent is not None:
            answer = await ask_judge_agent(settings.judge_agent, ctx, asks, material, brief)
            who = f"{settings.judge_agent.kind} judge agent"
            judge_info: dict[str, Any] = {"agent": settings.judge_agent.kind}
            fix = "configure [model] base_url and model, pass --model, or give `judge_agent.settings` a model"
        else:
            model, missing = configured_model(ctx, settings.judge_model)
            fix = "configure [model] base_url and model, pass --model, or give the step `judge_model`"
            answer = missing if model is None else await ask_judge(model, asks, material, brief, settings.timeout)
            who = f"LLM judge ({model.model})" if model else "LLM judge"
            judge_info = {"model": model.model if model else None}
        if isinstance(answer, str):  # never passed: no score, `graded = false`, and the output says not graded
            for c in criteria:
                detail = f"not graded: no judge model ({answer} not set); {fix}"
                row = make_row(c.name, False, weight=c.weight, detail=detail)
                rows[c.name] = self._scored(c, {**row, "graded": False}, settings)
            return {"judge": {**judge_info, "criteria": [c.name for c in criteria]}}
        for c in criteria:
            found = answer.verdicts[c.name]
            met = found.score
            row = make_row(
                c.name, False, weight=c.weight, detail=f"{who}: {found.reason}", score=1.0 - met if c.negative else met
            )
            if found.evidence is not None:
                row["evidence"] = found.evidence
            rows[c.name] = self._scored(c, row, settings)
        extra: dict[str, Any] = {"judge": {**judge_info, "criteria": [c.name for c in criteria]}}
        if settings.mistakes:
            extra["mistakes"] = answer.mistakes
        return extra

    @staticmethod
    def _scored(c: Criterion, row: Row, settings: RubricsSettings) -> Row:
        """`passed` from the row's score and `pass_at`; negative criteria marked."""
        row["passed"] = row["score"] >= settings.pass_at - 1e-9
        if c.negative:
            row["negative"] = True
        return row

    @staticmethod
    def _check_row(
        c: Criterion, check: RubricCheck, response: str | None, world: World | None, events: list[dict[str, Any]] | None
    ) -> Row:
        """The check's row; for a negative criterion the check finds the mistake, so the row's score is inverted."""
        row = RubricsVerifier._check_holds(c, check, response, world, events)
        if c.negative:
            row["score"] = 1.0 - row["score"]
            row["detail"] = f"mistake {'made' if row['score'] == 0 else 'not made'}: {row['detail']}"
        return row

    @staticmethod
    def _check_holds(
        c: Criterion, check: RubricCheck, response: str | None, world: World | None, events: list[dict[str, Any]] | None
    ) -> Row:
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
        found = matching_calls(world, tool, check.args, check.result, check.role, events)
        if found:
            detail = (
                f"{len(found)} matching call(s) of {tool} (trajectory seq {', '.join(str(e['seq']) for e in found)})"
            )
        else:
            count = calls_of(world, tool, events)
            detail = f"no successful call of {tool} matched ({count} successful call(s) of it in all)"
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
