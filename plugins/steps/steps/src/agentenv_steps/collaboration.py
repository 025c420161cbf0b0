"""Working with agents: give them skills, script how the simulated person reacts to them, and gate a run on a
human's approval."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any, Literal

from agentenv.contracts import StepContext, StepFailed
from pydantic import Field, field_validator, model_validator

from agentenv_steps._common import CoreStep, StepSettings, missing_step
from agentenv_steps._refs import deployed_agent
from agentenv_steps.agents import fill
from agentenv_steps.reactions import AgentReactions, Reaction


# ---- add_skills -------------------------------------------------------------------------------------
class Skill(StepSettings):
    name: str = Field(min_length=1, description="The skill's name (a heading in the system prompt).")
    text: str | None = Field(None, description="The skill's instructions, inline.")
    store: str | None = Field(
        None, description="Object-store key of a stored skill (`store:KEY` or `KEY`): UTF-8 text or JSON."
    )
    cli: str | None = Field(None, description="A build_mcp_cli step: the generated CLI's usage becomes the skill.")

    @model_validator(mode="after")
    def _one_source(self) -> Skill:
        if sum(source is not None for source in (self.text, self.store, self.cli)) != 1:
            raise ValueError("give exactly one of `text`, `store` or `cli`")
        return self


class AddSkillsSettings(StepSettings):
    agent: str = Field(description="The deploy_agent step whose agent gets the skills.")
    skills: list[Skill] = Field(min_length=1, description="Skills: {name, text | store | cli}.")


class AddSkills(CoreStep[AddSkillsSettings]):
    name = "add_skills"
    description = "Give a deployed agent skills (inline, stored, or a generated CLI's usage)."
    Settings = AddSkillsSettings

    def check(self, settings: AddSkillsSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("agent", settings.agent, step_ids, "deploy_agent")
        for i, skill in enumerate(settings.skills):
            problems += missing_step(f"skills[{i}].cli", skill.cli, step_ids, "build_mcp_cli")
        return problems

    async def execute(self, settings: AddSkillsSettings, ctx: StepContext) -> dict[str, Any]:
        deployed = deployed_agent(ctx, settings.agent)
        added = [{"name": skill.name, "text": skill_text(skill, i, ctx)} for i, skill in enumerate(settings.skills)]
        agent = deployed.agent
        skills = list(getattr(agent, "skills", None) or []) + added
        agent.skills = skills  # every kind: what it was given, for kinds (and snapshots) that read it
        applied = "recorded"
        options = getattr(agent, "options", None)
        if options is not None and "system_prompt" in type(options).model_fields:
            base = getattr(agent, "_prompt_before_skills", None)
            if base is None:
                base = options.system_prompt or ""
                agent._prompt_before_skills = base
            options.system_prompt = with_skills(base, skills)
            messages = getattr(agent, "messages", None)
            if isinstance(messages, list) and messages:  # the conversation has begun: update its system message
                if messages[0].get("role") == "system":
                    messages[0]["content"] = options.system_prompt
                else:
                    messages.insert(0, {"role": "system", "content": options.system_prompt})
            applied = "system_prompt"
        return {"skills": [s["name"] for s in skills], "added": [s["name"] for s in added], "applied": applied}


def skill_text(skill: Skill, index: int, ctx: StepContext) -> str:
    if skill.text is not None:
        return fill(skill.text, ctx)
    if skill.cli is not None:
        output = ctx.outputs.get(skill.cli) or {}
        if "usage" not in output:
            raise StepFailed(
                f"field `skills[{index}].cli`: step {skill.cli!r} produced no CLI usage; name a build_mcp_cli step"
            )
        return str(output["usage"])
    key = str(skill.store).removeprefix("store:")
    try:
        raw = ctx.objects.get(key)
    except (KeyError, FileNotFoundError, ValueError) as exc:
        raise StepFailed(f"field `skills[{index}].store`: no object {key!r} in the object store ({exc})") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict):
        for field in ("instructions", "text", "content", "description"):
            value = data.get(field)
            if isinstance(value, str):
                return value
    return text


def with_skills(prompt: str, skills: list[dict[str, str]]) -> str:
    section = "\n\n".join(f"### {skill['name']}\n{skill['text'].strip()}" for skill in skills)
    return (prompt.rstrip() + "\n\n" if prompt.strip() else "") + "## Skills\n\n" + section


# ---- register_agent_triggers ------------------------------------------------------------------------
class AgentTrigger(StepSettings):
    id: str = Field(min_length=1, description="Unique per agent; recorded on the turn it starts.")
    turn: int | None = Field(None, ge=1, description="After the agent's Nth answer of a prompt_agent conversation.")
    match: str | None = Field(None, description="When the agent's answer matches this regex (case-insensitive).")
    trigger: str | None = Field(None, description="When this world trigger fired since the agent's previous answer.")
    reply: str = Field(min_length=1, description="What the simulated person says next ({seed}, {run_id} filled in).")
    repeat: bool = Field(False, description="React every time the conditions hold, not only once.")

    @model_validator(mode="after")
    def _some_condition(self) -> AgentTrigger:
        if self.turn is None and self.match is None and self.trigger is None:
            raise ValueError("give at least one of `turn`, `match` or `trigger` (all given must hold)")
        if self.match is not None:
            try:
                re.compile(self.match)
            except re.error as exc:
                raise ValueError(f"`match` is not a regular expression: {exc}") from None
        return self


class RegisterAgentTriggersSettings(StepSettings):
    agent: str = Field(description="The deploy_agent step whose simulated user reacts.")
    triggers: list[AgentTrigger] = Field(min_length=1, description="Reactions: {id, turn|match|trigger, reply}.")

    @field_validator("triggers")
    @classmethod
    def _unique(cls, value: list[AgentTrigger]) -> list[AgentTrigger]:
        ids = [t.id for t in value]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"trigger ids must be unique; repeated: {', '.join(twice)}")
        return value


class RegisterAgentTriggers(CoreStep[RegisterAgentTriggersSettings]):
    name = "register_agent_triggers"
    description = "Script how the simulated person reacts to an agent: on turn N, a matching answer, a world trigger."
    Settings = RegisterAgentTriggersSettings

    def check(self, settings: RegisterAgentTriggersSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("agent", settings.agent, step_ids, "deploy_agent")

    async def execute(self, settings: RegisterAgentTriggersSettings, ctx: StepContext) -> dict[str, Any]:
        deployed = deployed_agent(ctx, settings.agent)
        reactions = deployed.reactions
        if reactions is None:
            reactions = AgentReactions(seen=len(deployed.world.trajectory.events))
        known = set(deployed.world.triggers)
        for definition in settings.triggers:
            if definition.trigger is not None and definition.trigger not in known:
                ctx.log(f"{self.name}: world trigger {definition.trigger!r} is not registered (yet)")
        staged = AgentReactions(list(reactions.reactions), reactions.seen)
        for definition in settings.triggers:  # all or nothing
            try:
                staged.add(Reaction(**definition.model_dump()))
            except ValueError as exc:
                raise StepFailed(f"field `triggers`: {exc}") from None
        deployed.reactions = staged
        return {"registered": [t.id for t in settings.triggers], "agent": settings.agent}


# ---- review -----------------------------------------------------------------------------------------
Decision = Literal["approve", "abort"]


class ReviewSettings(StepSettings):
    decision_file: str | None = Field(
        None,
        description="Path of a JSON file {decision: approve|abort, note} a human writes; relative = bundle folder; "
        "{run_id} is filled in.",
    )
    auto: Decision | None = Field(None, description="Decide without waiting (unattended runs).")
    message: str = Field("", description="What the reviewer should look at (logged while waiting).")
    timeout: float = Field(3600.0, gt=0, description="Seconds to wait for the decision file.")
    on_timeout: Decision = Field("abort", description="The decision when nobody decided in time.")
    poll_seconds: float = Field(0.5, gt=0, le=60, description="How often to look for the file.")


class Review(CoreStep[ReviewSettings]):
    name = "review"
    description = "Human-in-the-loop gate: wait for approve/abort (a decision file, or `auto`); abort fails the task."
    Settings = ReviewSettings

    def check(self, settings: ReviewSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        if settings.decision_file is None and settings.auto is None:
            return [("decision_file", "give `decision_file` (where the reviewer writes) or `auto` (approve|abort)")]
        return []

    async def execute(self, settings: ReviewSettings, ctx: StepContext) -> dict[str, Any]:
        if settings.auto is not None:
            decision, note, source = settings.auto, "decided by `auto`", "auto"
        else:
            path = ctx.resolve_path(fill(str(settings.decision_file), ctx))
            ctx.log(f"review: waiting for {path} ({settings.message or 'approve or abort'})")
            decision, note, source = await wait_decision(path, settings)
        if decision == "abort":
            raise StepFailed(f"review aborted the run ({source}): {note or 'no note'}")
        return {"decision": decision, "note": note, "source": source}


async def wait_decision(path: Path, settings: ReviewSettings) -> tuple[Decision, str, str]:
    deadline = time.monotonic() + settings.timeout
    problem = ""
    while True:
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                decision = data.get("decision") if isinstance(data, dict) else None
                if decision in ("approve", "abort"):
                    return decision, str(data.get("note") or ""), "file"
                problem = f'{path}: "decision" must be "approve" or "abort", not {decision!r}'
            except (OSError, ValueError) as exc:  # maybe half written: look again
                problem = f"{path}: not JSON yet ({exc})"
        if time.monotonic() >= deadline:
            if settings.on_timeout == "approve":
                return "approve", f"no decision within {settings.timeout:g} s; on_timeout = approve", "timeout"
            raise StepFailed(
                f"field `timeout`: no decision in {path} within {settings.timeout:g} s"
                + (f" ({problem})" if problem else "")
                + '; write {"decision": "approve"} or {"decision": "abort", "note": "…"} there'
            )
        await asyncio.sleep(settings.poll_seconds)
