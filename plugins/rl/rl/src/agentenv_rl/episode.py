"""Episodes: a task's start state kept as a checkpoint, reset in microseconds, stepped by a policy, graded by
the task's own verifiers.

`make()` runs the task's setup once per seed (see `split`), then every `reset()` restores that checkpoint
instead of running setup again. `step()` takes a tool call or a final answer and returns Gymnasium's five
values. The final answer's reward is the score `agentenv run` would give the same trajectory: the same
verifier steps run against the same world, with the answer in the place of `prompt_agent`'s output.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv import PluginHost, get_host
from agentenv.config import Config, load_config
from agentenv_runtime import (
    CURRENT_STEP,
    Engine,
    Planned,
    RunContext,
    StepRecord,
    TaskFile,
    TaskRunner,
    Trajectory,
    World,
    WorldCheckpoint,
    new_run_id,
    score_of,
    short_descriptions,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentenv_rl.split import EpisodeError, TaskSplit, find_task, split_task

DEFAULT_MAX_STEPS = 100


class Action(BaseModel):
    """What a policy does in one step: call a tool (`tool`, `arguments`), `say` something to the task's simulated
    user (its reply is the observation), or give the final `answer`.

    Its JSON Schema is titled `AgentEnvAction`: clients such as verifiers' OpenEnv taskset treat a schema titled
    plain `Action` as OpenEnv's own generic action and would send the wrong shape."""

    model_config = ConfigDict(extra="forbid", title="AgentEnvAction")

    tool: str | None = Field(None, min_length=1, description="The tool to call, as the task's agent role.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")
    answer: str | None = Field(None, description="The final answer: ends the episode and is graded.")
    say: str | None = Field(None, description="A message to the simulated user; the observation is its reply.")

    @model_validator(mode="after")
    def _one_kind(self) -> Action:
        if sum(value is not None for value in (self.tool, self.answer, self.say)) != 1:
            raise ValueError("give exactly one of `tool` (with `arguments`), `say` or `answer`")
        if self.tool is None and "arguments" in self.model_fields_set:
            raise ValueError("`arguments` go with `tool`, not with `answer` or `say`")
        return self


def parse_action(action: Action | Mapping[str, Any]) -> Action:
    if isinstance(action, Action):
        return action
    try:
        return Action.model_validate(dict(action))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'action'}: {e['msg']}" for e in exc.errors())
        raise EpisodeError(f"bad action {dict(action)!r}: {problems}") from None


@dataclass
class StepResult:
    """Gymnasium's step values; unpacks as `obs, reward, terminated, truncated, info`."""

    observation: dict[str, Any]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.observation, self.reward, self.terminated, self.truncated, self.info))


@dataclass
class Start:
    """One seed's start point: the setup's context and world, and what reset puts back."""

    seed: int
    ctx: RunContext
    world: World
    checkpoint: WorldCheckpoint
    trajectory: Trajectory
    outputs: dict[str, dict[str, Any]]
    prompt: str
    tools: list[dict[str, Any]]
    digest: str


class Template:
    """A task prepared once (pins, preflight, split); starts are made per seed and kept."""

    def __init__(
        self,
        target: str | TaskFile,
        *,
        host: PluginHost | None = None,
        config: Config | None = None,
        bundle_dir: Path | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        shaping: bool = False,
        record: bool = False,
        tools: Sequence[str] | None = None,
        short_descriptions: bool = False,
    ) -> None:
        self.host = host or get_host()
        self.config = config or load_config()
        self.bundle: str | None = None
        if isinstance(target, TaskFile):
            self.task, self.bundle_dir = target, bundle_dir
        else:
            self.task, self.bundle_dir, self.bundle = find_task(target, self.host)
        self.runner = TaskRunner(self.host, self.config)
        self.planned: dict[str, Planned] = self.runner.prepare(self.task, bundle_dir=self.bundle_dir)
        self.split: TaskSplit = split_task(self.task, self.planned)
        self.role = self.split.role
        """The agent's role, which every tool call acts as."""
        user_step = self.split.prompt.fields.get("simulated_user")
        self.user_step: str | None = str(user_step) if user_step else None
        """The setup step whose resource plays the user (prompt_agent's `simulated_user`), if any."""
        self.max_steps, self.shaping, self.record = max_steps, shaping, record
        self.offered: frozenset[str] | None = None if tools is None else frozenset(tools)
        """The tools episodes offer (None: all of the role's); a call to another is refused and changes nothing."""
        self.short_descriptions = short_descriptions
        self.loop = asyncio.new_event_loop()
        self.loop_lock = threading.Lock()
        self.starts: dict[int, Start] = {}

    def default_seed(self) -> int:
        return int(self.task.seed if self.task.seed is not None else self.config.get("run.seed", 0))

    def start(self, seed: int) -> Start:
        if seed not in self.starts:
            self.starts[seed] = self._run_setup(seed)
        return self.starts[seed]

    def _run_setup(self, seed: int) -> Start:
        ctx = RunContext(
            new_run_id(),
            seed,
            self.task.name,
            self.task.path,
            self.bundle_dir,
            self.config,
            self.host,
            self.runner.records.objects,
            artifact_pins=dict(self.task.pins.artifacts),
        )
        setup_task = self.task.model_copy(update={"steps": self.split.setup})
        planned = {decl.id: self.planned[decl.id] for decl in self.split.setup}
        try:
            with self.loop_lock:
                records = self.loop.run_until_complete(Engine(setup_task, planned, ctx).run())
        except BaseException:
            ctx.teardown_all()
            raise
        failed = [f"{r.id} ({r.type}): {r.error}" for r in records.values() if r.status != "succeeded"]
        world = ctx.resources.get(self.split.world_step)
        if failed or not isinstance(world, World) or type(world) is not World:
            ctx.teardown_all()
            if failed:
                raise EpisodeError(f"{self.task.path}: the task's setup failed: {'; '.join(failed)}")
            raise EpisodeError(
                f"{self.task.path}: step {self.split.agent.id!r}: field `env`: {self.split.world_step!r} did not "
                "deploy an in-process world; episodes need one (run with the inline sandbox)"
            )
        role = self.role
        ctx.outputs[self.split.agent.id] = {"kind": "policy", "role": role, "env": self.split.world_step}
        prompt = str(self.split.prompt.fields["prompt"]).replace("{seed}", str(seed)).replace("{run_id}", ctx.run_id)
        digest = world.state_digest()  # first: the checkpoint then carries the digest's machinery
        tools = self._offer(world.list_tools(role))
        return Start(
            seed, ctx, world, world.checkpoint(), world.trajectory.copy(), dict(ctx.outputs), prompt, tools, digest
        )

    def _offer(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The role's tools trimmed to `tools=[…]`, descriptions cut to their first sentence if asked."""
        if self.offered is not None:
            missing = sorted(self.offered - {t["name"] for t in tools})
            if missing:
                known = ", ".join(sorted(t["name"] for t in tools))
                raise EpisodeError(
                    f"{self.task.path}: tools={missing} are not tools of role {self.role!r}; choose from: {known}"
                )
            tools = [t for t in tools if t["name"] in self.offered]
        if self.short_descriptions:
            tools = short_descriptions(tools)
        return tools

    async def agrade(self, ctx: RunContext, answer: str, user: str) -> tuple[float | None, dict[str, Any]]:
        """Run the verifiers on the world as it is, with `answer` as the agent's response."""
        split = self.split
        ctx.outputs[split.prompt.id] = {
            "response": answer,
            "structured": None,
            "turns": [{"user": user, "agent": answer}],
            "files": {},
        }
        records = {decl.id: StepRecord(decl.id, decl.type, "succeeded") for decl in self.task.steps}
        for decl in split.verifiers:
            plan = self.planned[decl.id]
            token = CURRENT_STEP.set(decl.id)
            try:
                output = await plan.step.execute(plan.settings, ctx) or {}
                records[decl.id] = StepRecord(decl.id, decl.type, "succeeded", 1, output=output)
                ctx.outputs[decl.id] = output
            except Exception as exc:
                records[decl.id] = StepRecord(decl.id, decl.type, "failed", 1, error=f"{type(exc).__name__}: {exc}")
            finally:
                CURRENT_STEP.reset(token)
        verifiers = {d.id: records[d.id].output or {"error": records[d.id].error} for d in split.verifiers}
        return score_of(self.task, self.planned, records), verifiers

    def close(self) -> None:
        for start in self.starts.values():
            start.ctx.teardown_all()
        self.starts.clear()
        if not self.loop.is_closed():
            self.loop.close()


class Episode:
    """One episode of a task. `reset()` first; then `step()` until terminated or truncated."""

    def __init__(self, template: Template, seed: int | None = None, *, owner: bool = True) -> None:
        self.template = template
        self.owner = owner
        self.seed = template.default_seed() if seed is None else seed
        self._bind(template.start(self.seed))

    def _bind(self, start: Start) -> None:
        self._start = start
        self.world = start.world
        self.ctx = start.ctx
        self.episode_id = ""
        self.step_count = 0
        self.done = True
        self.score: float | None = None
        self._shaped = 0.0
        self._session: Any = None
        self._last_user = start.prompt
        """What the user said last: the prompt, or the simulated user's latest reply."""
        self._opening = start.prompt

    @property
    def role(self) -> str:
        return self.template.role

    @property
    def has_user(self) -> bool:
        """Whether the task has a simulated user (prompt_agent's `simulated_user`): the agent's text goes to it
        with `say`, and the user's stop ends the episode."""
        return self.template.user_step is not None

    def system_prompt(self) -> str | None:
        """The agent's system prompt (deploy_agent's `system_prompt`), which a run gives the agent; None if unset."""
        value = self.template.split.agent.fields.get("system_prompt")
        return str(value) if value else None

    def opening(self) -> str:
        """The first user message of this episode: the task's prompt, or with a simulated user the user's opening
        of this conversation (known after `reset()`; the prompt is then the user's scenario, never shown)."""
        return self._opening

    def tools(self) -> list[dict[str, Any]]:
        """The tools this episode offers (MCP-style: name, description, inputSchema); known before `reset()`."""
        return self._start.tools

    def prompt(self) -> str:
        """The task's prompt for this episode's seed (what `reset()` observes); known before `reset()`."""
        return self._start.prompt

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Back to the task's start state (restored, not set up again); returns (observation, info)."""
        if seed is not None and seed != self.seed:
            if not self.owner:
                raise EpisodeError("a fork cannot change its seed; reset the episode it was forked from")
            self.seed = seed
            self._bind(self.template.start(seed))
        start = self._start
        self.world.restore_checkpoint(start.checkpoint, hold=True)
        self.world.trajectory = start.trajectory.copy()
        self.ctx.outputs = dict(start.outputs)
        self.episode_id = uuid.uuid4().hex
        self.world.episode = self.episode_id  # what its tools see as `ToolContext.episode`
        self.step_count, self.done, self.score, self._shaped = 0, False, None, 0.0
        self._last_user = start.prompt
        if self.template.user_step is not None:
            source = self.ctx.resources.get(self.template.user_step)
            if not callable(getattr(source, "session", None)):
                raise EpisodeError(
                    f"{self.template.task.path}: field `simulated_user`: step {self.template.user_step!r} left no "
                    "simulated user (an object with `session()`)"
                )
            self._session = source.session()  # type: ignore[union-attr]
            self._last_user = str(self._run(self._session.opening()))
        self._opening = self._last_user
        observation = {"type": "prompt", "prompt": self._last_user, "tools": start.tools}
        return observation, {"episode_id": self.episode_id, "seed": self.seed, "task": self.template.task.name}

    def step(self, action: Action | Mapping[str, Any]) -> StepResult:
        """A tool call (reward 0, or the score's change with shaping) or the final answer (reward = score)."""
        chosen = self._accept(action)
        quick = self._ungraded(chosen)
        if quick is not None:
            return quick
        result: StepResult = self._run(self._astep(chosen))
        return result

    def _run(self, coro: Any) -> Any:
        """Run `coro` to its end from synchronous code: on the template's loop when it is free, else a fresh one."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self.template.loop_lock.acquire(blocking=False):
                try:
                    return self.template.loop.run_until_complete(coro)
                finally:
                    self.template.loop_lock.release()
            return asyncio.run(coro)  # another thread is using the template's loop
        # called from async code that cannot await (an agent's synchronous tool access): grade on a thread's loop
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()

    async def astep(self, action: Action | Mapping[str, Any]) -> StepResult:
        """`step()` from async code: the verifiers run on the caller's event loop."""
        return await self._astep(self._accept(action))

    def step_now(self, action: Action | Mapping[str, Any]) -> StepResult | None:
        """`step()` when nothing needs grading (a tool call without shaping, before the step limit); None, with
        nothing done, when the step must be awaited with `astep`. For servers that answer on the spot."""
        return self._ungraded(self._accept(action))

    def _ungraded(self, chosen: Action) -> StepResult | None:
        if chosen.tool is not None and not self.template.shaping and self.step_count + 1 < self.template.max_steps:
            return StepResult(self._tool(chosen), 0.0, False, False, {"step": self.step_count})
        return None

    def _accept(self, action: Action | Mapping[str, Any]) -> Action:
        if self.done:
            raise EpisodeError("the episode is over (or was never reset); call reset() first")
        return parse_action(action)

    async def _astep(self, chosen: Action) -> StepResult:
        template = self.template
        if chosen.answer is not None:
            self.step_count += 1
            return await self._afinish(chosen.answer, {"type": "final", "answer": chosen.answer}, truncated=False)
        if chosen.say is not None:
            return await self._asay(chosen.say)
        observation = self._tool(chosen)
        if self.step_count >= template.max_steps:
            return await self._afinish("", observation, truncated=True)
        reward = 0.0
        if template.shaping:
            score, _ = await template.agrade(self._grading_ctx(), "", self._start.prompt)
            reward, self._shaped = (score or 0.0) - self._shaped, score or 0.0
        return StepResult(observation, reward, False, False, {"step": self.step_count})

    async def _asay(self, text: str) -> StepResult:
        """The agent's message goes into the trajectory as a turn and to the simulated user; its reply is the
        observation. When the user ends the conversation (τ²'s ###STOP### and the like) the episode is graded."""
        session = self._session
        if session is None:
            raise EpisodeError(
                f"{self.template.task.path}: this task has no simulated user (prompt_agent's `simulated_user`); "
                "use `tool` and `answer` actions"
            )
        self.step_count += 1
        world = self.world
        world.trajectory.record(
            "agent_turn", world.clock.now().isoformat(), role=self.role, persona=None, user=self._last_user, agent=text
        )
        reply = str(await session.reply(text))
        self._last_user = reply
        observation = {"type": "user_message", "text": reply, "done": bool(session.done)}
        if session.done or self.step_count >= self.template.max_steps:
            graded = await self.template.agrade(self.ctx, text, self._start.prompt)
            return self._result(observation, graded, truncated=not session.done)
        return StepResult(observation, 0.0, False, False, {"step": self.step_count})

    def _tool(self, chosen: Action) -> dict[str, Any]:
        assert chosen.tool is not None
        self.step_count += 1
        offered = self.template.offered
        if offered is not None and chosen.tool not in offered:
            message = f"{chosen.tool!r} is not offered in this episode; its tools are {', '.join(sorted(offered))}"
            return {
                "type": "tool_result",
                "tool": chosen.tool,
                "ok": False,
                "error": {"code": "forbidden", "message": message},
            }
        outcome = self.world.call(chosen.tool, chosen.arguments, role=self.role)
        return {"type": "tool_result", "tool": chosen.tool, **outcome.to_dict()}

    def _grading_ctx(self) -> RunContext:
        """Shaping grades a scratch copy of the outputs, so the real answer's grading starts clean."""
        return dataclasses.replace(self.ctx, outputs=dict(self.ctx.outputs))

    async def _afinish(self, answer: str, observation: dict[str, Any], *, truncated: bool) -> StepResult:
        """The answer enters the trajectory as `prompt_agent` records an agent's turn (same digest as a run),
        then the verifiers grade it."""
        world = self.world
        now = world.clock.now().isoformat()
        world.trajectory.record("agent_turn", now, role=self.role, persona=None, user=self._last_user, agent=answer)
        graded = await self.template.agrade(self.ctx, answer, self._start.prompt)
        return self._result(observation, graded, truncated=truncated)

    def _result(
        self, observation: dict[str, Any], graded: tuple[float | None, dict[str, Any]], *, truncated: bool
    ) -> StepResult:
        score, verifiers = graded
        world = self.world
        self.done, self.score = True, score
        reward = (score or 0.0) - self._shaped
        info = {
            "score": score,
            "passed": score is not None and score >= self.template.task.pass_threshold,
            "verifiers": verifiers,
            "trajectory_digest": world.trajectory.digest(),
            "step": self.step_count,
        }
        if self.template.record:
            info["run_id"] = self._save(info, truncated)
        return StepResult(observation, reward, not truncated, truncated, info)

    def _save(self, info: dict[str, Any], truncated: bool) -> str:
        """A finished episode as a run record with its trajectory, so `agentenv runs export` reads it."""
        template = self.template
        records = template.runner.records
        run_id = f"{new_run_id()}-{self.episode_id[:8]}"
        key = f"runs/{run_id}/{template.split.world_step}.trajectory.jsonl"
        records.objects.put(key, self.world.trajectory.to_jsonl())
        records.save(
            {
                "id": run_id,
                "task": template.task.name,
                "task_file": str(template.task.path),
                "bundle": template.bundle,
                "seed": self.seed,
                "status": "truncated" if truncated else "succeeded",
                "passed": info["passed"],
                "score": info["score"],
                "trajectory_digest": info["trajectory_digest"],
                "trajectories": {template.split.world_step: key},
                "verifiers": info["verifiers"],
                "plugin_versions": template.runner.plugin_versions,
                "episode_id": self.episode_id,
                "started_at": time.time(),
                "steps": [],
            }
        )
        return run_id

    def state(self) -> dict[str, Any]:
        """OpenEnv-style state: the episode id and step count, plus the world's state digest."""
        return {
            "episode_id": self.episode_id,
            "step_count": self.step_count,
            "done": self.done,
            "seed": self.seed,
            "task": self.template.task.name,
            "state_digest": self.world.state_digest(),
        }

    def trajectory_digest(self) -> str:
        return self.world.trajectory.digest()

    def fork(self) -> Episode:
        """An independent episode in exactly this state (world forked copy-on-write, step count kept)."""
        clone = Episode.__new__(Episode)
        clone.__dict__.update(self.__dict__)
        clone.owner = False
        world = self.world.fork()
        resources = {k: (world if v is self.world else v) for k, v in self.ctx.resources.items()}
        clone.world = world
        clone._session = copy.deepcopy(self._session)  # the conversation so far, its own from here on
        clone.ctx = dataclasses.replace(self.ctx, outputs=dict(self.ctx.outputs), resources=resources, teardowns=[])
        forked_start = dataclasses.replace(self._start, world=world, ctx=clone.ctx)
        clone._start = forked_start
        return clone

    def close(self) -> None:
        """Tear down what the task's setup started (the episode that made the template owns it)."""
        if self.owner:
            self.template.close()


def make(
    target: str | TaskFile,
    *,
    seed: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    shaping: bool = False,
    record: bool = False,
    tools: Sequence[str] | None = None,
    short_descriptions: bool = False,
    host: PluginHost | None = None,
    config: Config | None = None,
) -> Episode:
    """An episode of `BUNDLE[:TASK]`, a bundle folder or a task file; runs the task's setup for `seed` once.

    With `record`, every finished episode is saved as a run (record and trajectory) for `agentenv runs export`.
    `tools=[…]` offers only those of the role's tools (for training: fewer prompt tokens); `short_descriptions`
    cuts each description to its first sentence."""
    template = Template(
        target,
        host=host,
        config=config,
        max_steps=max_steps,
        shaping=shaping,
        record=record,
        tools=tools,
        short_descriptions=short_descriptions,
    )
    try:
        return Episode(template, seed)
    except BaseException:
        template.close()
        raise
