"""An agent as the rubric's judge: any installed agent kind, given the trajectory as context and no tools.

The judge agent is made for the one question (its settings filled from the config like deploy_agent's, so an
`llm` judge agent uses `[model]` or its own settings) and answers through `respond`: its text is the JSON
verdicts, read as strictly as the LLM judge's. It gets no world tools, so grading cannot change the world
it grades. A scripted judge agent runs offline; its policy's `say` is the answer. A kind that needs a model
(`base_url`, `model`) that neither the step, `--model` nor the config gives is not made at all: like the
LLM judge with no model, its criteria are not graded (never passed, never failed as a broken step).
"""

from __future__ import annotations

from typing import Any

from agentenv.contracts import AgentKind, StepContext, StepFailed, kinds
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentenv_steps._common import validation_message
from agentenv_steps.agents import MODEL_FIELDS, DeployAgentSettings, agent_options
from agentenv_steps.verifiers.judging import Ask, JudgeAnswer, JudgeBrief, parse_answer, system_prompt, user_message


class JudgeAgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = Field(
        "scripted", min_length=1, description="The agent kind of the judge (scripted, the default: offline; llm, …)."
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="The kind's settings, as in deploy_agent.")
    model: str | None = Field(None, description="Model name, for kinds that take one.")


class NoTools:
    """The judge's tool access: none (it reads the trajectory in its prompt)."""

    def list_tools(self) -> list[dict[str, Any]]:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"error": {"message": f"the judge has no tools; {name} is not available to it"}}


def make_judge_agent(spec: JudgeAgentSettings, ctx: StepContext) -> AgentKind[Any] | str:
    """The judge agent, or (a string) which of its model settings nothing configures."""
    try:
        kind_cls = ctx.host.get(kinds.AGENT_KINDS, spec.kind)
    except LookupError as exc:
        raise StepFailed(f"field `judge_agent.kind`: {exc}") from None
    as_deployed = DeployAgentSettings(env="judge", kind=spec.kind, settings=spec.settings, model=spec.model)
    options = agent_options(as_deployed, ctx, kind_cls, None, implicit=False)
    fields = kind_cls.Settings.model_fields
    unset = [f for f in MODEL_FIELDS if f in fields and fields[f].is_required() and options.get(f) in (None, "")]
    if unset:
        return " and ".join(f"judge_agent.settings.{f}" for f in unset)
    try:
        validated = kind_cls.Settings.model_validate(options)
        return kind_cls(validated)
    except ValidationError as exc:
        raise StepFailed(f"field `judge_agent.settings`: {validation_message(exc, '')}") from None
    except Exception as exc:  # the kind's own checks (a policy that does not parse, …)
        raise StepFailed(f"field `judge_agent`: the {spec.kind} judge agent could not be made: {exc}") from None


async def ask_judge_agent(
    spec: JudgeAgentSettings, ctx: StepContext, asks: list[Ask], material: str, brief: JudgeBrief
) -> JudgeAnswer | str:
    """One prompt to a fresh judge agent; its reply parsed as the verdicts (or what model setting is missing)."""
    agent = make_judge_agent(spec, ctx)
    if isinstance(agent, str):
        return agent
    prompt = f"{system_prompt(brief)}\n\n{user_message(asks, material, brief)}"
    who = f"{spec.kind} judge agent"
    try:
        response = await agent.respond(prompt, NoTools())
    except Exception as exc:
        raise StepFailed(f"the {who} failed: {type(exc).__name__}: {exc}") from None
    finally:
        closing = getattr(agent, "close", None)
        if callable(closing):
            closing()
    return parse_answer(_json_of(response.text), [a.name for a in asks], brief, who)


def _json_of(text: str) -> str:
    """The reply's JSON object: agents often wrap it in a ```json fence or a sentence."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text
