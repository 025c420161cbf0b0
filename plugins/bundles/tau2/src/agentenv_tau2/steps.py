"""`tau2_grade`: the verifier step of every tau2-retail task (τ²'s grade, see `grading`).

It reads the world the agent acted in: the retail env's final state, the agent's tool calls from the
trajectory, and the conversation from the recorded agent turns (and user messages, when a simulated user
spoke). The score is τ²'s reward; each component is a row, a component that could not be graded is a row that
neither passes nor counts.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field

from agentenv_tau2.grading import grade
from agentenv_tau2.tasks import TaskDataError, retail_task


class Tau2GradeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Id of the deploy_env step whose world holds the retail env.")
    task: str = Field(description="The τ² retail task id, e.g. '0'.")


def conversation_of(world: World) -> list[dict[str, str]]:
    """The episode's messages in order: each recorded turn's user text and agent answer."""
    messages: list[dict[str, str]] = []
    for event in world.trajectory.events:
        if event.get("kind") != "agent_turn":
            continue
        if event.get("user"):
            messages.append({"role": "user", "content": str(event["user"])})
        if event.get("agent"):
            messages.append({"role": "assistant", "content": str(event["agent"])})
    return messages


def agent_calls(world: World) -> list[tuple[str, dict[str, Any]]]:
    """Every tool call the agent made (refused ones too: τ² matches actions on calls, not on results)."""
    return [
        (str(e["tool"]), dict(e.get("args") or {}))
        for e in world.trajectory.events
        if e.get("kind") == "tool_call" and e.get("role") != "system"
    ]


MAX_ERRORS = 10
"""τ²'s default cap on tool errors: its orchestrator ends a simulation at the tenth (`TOO_MANY_ERRORS`)."""
AGENT_STOP = "###STOP###"


def premature_end(ctx: StepContext, world: World) -> str | None:
    """τ²'s termination reason when the episode did not end by the user or the agent stopping (τ² then scores
    0 whatever the database holds): `max_steps` when the conversation hit its turn limit, `too_many_errors`
    at ten failed tool calls. None for an episode τ² would grade. An episode with no `prompt_agent` step (an
    RL episode, which ends with the agent's answer) is an agent stop."""
    errors = sum(
        1
        for e in world.trajectory.events
        if e.get("kind") == "tool_call" and e.get("role") != "system" and e.get("error")
    )
    if errors >= MAX_ERRORS:
        return "too_many_errors"
    ends = [out["ended"] for out in ctx.outputs.values() if isinstance(out, dict) and "ended" in out]
    conversation = conversation_of(world)
    agent_stopped = bool(conversation) and AGENT_STOP in conversation[-1]["content"]
    if ends and ends[-1] == "max_turns" and not agent_stopped:
        return "max_steps"
    return None


def task_problems(task_id: str) -> list[tuple[str, str]]:
    """Preflight of a step's `task` field: an unknown τ² id or a malformed task file."""
    try:
        retail_task(task_id)
    except TaskDataError as exc:
        return [("task", str(exc))]
    return []


def model_settings(ctx: StepContext) -> dict[str, Any] | None:
    """The config's `[model]` (with --model), for the llm customer and the judge; None when none is set."""
    model = {
        "base_url": ctx.setting("model.base_url"),
        "api_key": ctx.setting("model.api_key"),
        "model": ctx.overrides.get("model") or ctx.setting("model.model"),
    }
    return model if model["base_url"] and model["model"] else None


class Tau2Grade(Step[Tau2GradeSettings]):
    name: ClassVar[str] = "tau2_grade"
    description = "Grade a τ²-bench retail episode as τ² does: db, communicate, action, nl_assertion."
    Settings = Tau2GradeSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: Tau2GradeSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        missing = [] if settings.env in step_ids else [("env", f"no step {settings.env!r} in this task")]
        return task_problems(settings.task) + missing

    async def execute(self, settings: Tau2GradeSettings, ctx: StepContext) -> dict[str, Any]:
        from agentenv_retail.api import RetailEnv

        world = ctx.resource(settings.env, World)
        env = world.env("retail")
        if not isinstance(env, RetailEnv):
            raise StepFailed(f"field `env`: world {world.name!r} has no retail env")
        task, conversation = retail_task(settings.task), conversation_of(world)
        cut_off = premature_end(ctx, world)
        if cut_off is not None:  # τ²'s evaluate_simulation: reward 0 before any component is looked at
            note = f"Simulation terminated prematurely. Termination reason: {cut_off}"
            return {
                "score": 0.0,
                "rows": [{"criterion": "termination", "passed": False, "score": 0.0, "weight": 1.0, "detail": note}],
                "passed": False,
                "tau2": {"reward": 0.0, "components": {}, "not_graded": [], "note": note},
            }
        assertions = task.evaluation_criteria.nl_assertions if task.evaluation_criteria else None
        verdicts, why = None, "not graded: no judge model configured ([model] base_url and model)"
        model = model_settings(ctx)
        if assertions and model is not None:
            from agentenv_tau2.judge import JudgeError, judge

            try:
                verdicts = await judge(model, conversation, list(assertions))
            except JudgeError as exc:
                why = f"not graded: {exc}"
        result = grade(task, env, agent_calls(world), conversation, verdicts)
        rows = [
            {
                "criterion": name,
                "passed": value == 1.0,
                "score": 0.0 if value is None else value,
                "weight": 1.0,
                "detail": why if value is None else "",
            }
            for name, value in result.components.items()
        ]
        return {
            "score": result.reward,
            "rows": rows,
            "passed": result.reward == 1.0 and not result.not_graded,
            # A component that could not be graded (NL assertions with no judge) leaves the task not graded: the
            # engine then records no score and never a pass, whatever the graded components multiply to.
            "graded": not result.not_graded,
            "tau2": result.to_dict(),
        }


class Tau2UserSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str = Field(description="The τ² retail task whose user_scenario the customer plays.")
    kind: Literal["scripted", "llm"] | None = Field(
        None,
        description="`scripted` (offline, deterministic) or `llm` (a chat model plays the customer); default: "
        "[plugins.agentenv-tau2] user in the config, else scripted.",
    )
    model: str | None = Field(None, description="Model of the llm customer (default: [model] model, or --model).")


class Tau2User(Step[Tau2UserSettings]):
    """Deploy the simulated customer of a τ² task; `prompt_agent`'s `simulated_user` names this step."""

    name: ClassVar[str] = "tau2_user"
    description = "A simulated τ² customer (scripted offline, or llm) for prompt_agent and RL `say` actions."
    Settings = Tau2UserSettings
    creates_resources: ClassVar[bool] = True

    def preflight(self, settings: Tau2UserSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return task_problems(settings.task)

    def needs_model(self, settings: Tau2UserSettings) -> tuple[str, str] | None:
        return ("kind", "an `llm` simulated user") if settings.kind == "llm" and not settings.model else None

    @staticmethod
    def kind_of(settings: Tau2UserSettings, ctx: StepContext) -> str:
        kind = settings.kind or ctx.setting("plugins.agentenv-tau2.user") or "scripted"
        if kind not in ("scripted", "llm"):
            raise StepFailed(f'[plugins.agentenv-tau2] user = {kind!r}: give "scripted" or "llm"')
        return str(kind)

    async def execute(self, settings: Tau2UserSettings, ctx: StepContext) -> dict[str, Any]:
        from agentenv_tau2.usersim import SimulatedUser

        kind = self.kind_of(settings, ctx)
        model = model_settings(ctx) if kind == "llm" else {}
        if model is None:
            raise StepFailed("field `kind`: an llm simulated user needs [model] base_url and model in the config")
        if settings.model and not ctx.overrides.get("model"):
            model["model"] = settings.model
        ctx.add_resource(ctx.step_id, SimulatedUser(retail_task(settings.task), kind, model))
        return {"kind": kind, "task": settings.task}
