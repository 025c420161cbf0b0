"""The two steps of every miniwob task: `miniwob_task` sets the instance up, `miniwob_reward` grades it.

`miniwob_task` (setup) puts one task with the run's seed into the world's `miniwob` env and opens its page, so
the run record shows the instruction; `miniwob_reward` (verifier) reads the reward the page computed, as
BrowserGym's MiniWoB tasks read it: 1.0 when the page's raw reward is above 0, else 0.0 (a page that was never
finished, or that the agent navigated away from, is 0.0). The page's own numbers (raw reward, the
time-discounted reward, the reason) stay in the output.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import ToolError, World
from pydantic import BaseModel, ConfigDict, Field

from agentenv_miniwob.env import DEFAULT_MAX_TIME_MS, MiniwobEnv
from agentenv_miniwob.pages import PagesMissing, unknown_task


class MiniwobTaskSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Id of the deploy_env step whose world has the `miniwob` env.")
    task: str = Field(min_length=1, description="The MiniWoB++ task, e.g. click-test (a page of the miniwob wheel).")
    seed: int | None = Field(
        None, ge=0, lt=2**32, description="Seed of the random instance (default: the run's seed, BrowserGym's way)."
    )
    episode_max_time_ms: int = Field(
        DEFAULT_MAX_TIME_MS, ge=1, description="The page's time limit in ms (BrowserGym's default: 1,000,000)."
    )


class MiniwobRewardSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Id of the deploy_env step whose world has the `miniwob` env.")


def miniwob_env(ctx: StepContext, step: str) -> MiniwobEnv:
    world = ctx.resource(step, World)
    env = world.envs.get(MiniwobEnv.name)
    if not isinstance(env, MiniwobEnv):
        raise StepFailed(
            f"field `env`: the world of step {step!r} has no miniwob env (it has {', '.join(world.envs)}); "
            'deploy it with envs = ["miniwob"]'
        )
    return env


def missing_env_step(env: str, step_ids: list[str]) -> list[tuple[str, str]]:
    return [] if env in step_ids else [("env", f"no step {env!r} in this task; name the deploy_env step")]


class MiniwobTask(Step[MiniwobTaskSettings]):
    name: ClassVar[str] = "miniwob_task"
    description = "Put one seeded instance of a MiniWoB++ task in the world's miniwob env and open its page."
    Settings = MiniwobTaskSettings
    creates_resources: ClassVar[bool] = True  # the run's browser context, closed at teardown

    def preflight(self, settings: MiniwobTaskSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        try:
            problem = unknown_task(settings.task)
        except PagesMissing as exc:
            problem = str(exc)
        return missing_env_step(settings.env, step_ids) + ([("task", problem)] if problem else [])

    async def execute(self, settings: MiniwobTaskSettings, ctx: StepContext) -> dict[str, Any]:
        env = miniwob_env(ctx, settings.env)
        seed = ctx.seed if settings.seed is None else settings.seed
        try:
            instance = env.begin(settings.task, seed, settings.episode_max_time_ms)
            goal = env.instruction()
        except (ValueError, ToolError) as exc:
            raise StepFailed(f"field `task`: {exc}") from None
        ctx.add_resource(ctx.step_id, env, env.close)  # the run's browser context closes with the run
        return {
            "task": instance.task,
            "seed": instance.seed,
            "page_seed": instance.page_seed,
            "url": instance.url,
            "goal": goal,
        }


class MiniwobReward(Step[MiniwobRewardSettings]):
    name: ClassVar[str] = "miniwob_reward"
    description = "Grade a MiniWoB++ episode by its page's reward, as BrowserGym reads it (1.0 if raw reward > 0)."
    Settings = MiniwobRewardSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: MiniwobRewardSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_env_step(settings.env, step_ids)

    async def execute(self, settings: MiniwobRewardSettings, ctx: StepContext) -> dict[str, Any]:
        env = miniwob_env(ctx, settings.env)
        try:
            status = env.status()
        except ToolError as exc:
            raise StepFailed(f"the miniwob page could not be read: {exc}") from None
        passed = status["reward"] == 1.0
        if not status["on_task"]:
            detail = f"the page left the task ({status['url']})"
        elif not status["done"]:
            detail = "the page did not end the episode"
        else:
            detail = f"raw reward {status['raw_reward']}" + (f" ({status['reason']})" if status["reason"] else "")
        row = {"criterion": f"{status['task']}: the page's reward", "passed": passed, "score": status["reward"],
               "weight": 1.0, "detail": detail}  # fmt: skip
        return {"score": status["reward"], "passed": passed, "rows": [row], "miniwob": status}
