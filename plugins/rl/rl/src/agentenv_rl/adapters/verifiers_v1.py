"""verifiers 0.4 (`verifiers.v1`) over any task: a Taskset of episodes, the world's tools as its Toolset, the task's
own verifiers as its reward.

verifiers runs each rollout's Toolset as an MCP server in a process of its own and scores on the host. So the
Toolset plays the model's tool calls into a fresh fork of the task's start (the world answers them, RBAC and
triggers apply), and the reward replays the trace's assistant messages into another fresh fork of the same start
and grades it with the final reply as the answer: the world is deterministic from its seed, so both see the same
trajectory (the toolset reports its digest through verifiers' rollout state; a replay that differs fails the
scoring instead of giving a score).

`vf-eval agentenv-vf --env.taskset.bundle support-refund` runs it (the `agentenv_vf` module names this Taskset
for verifiers' loader, which imports a taskset id as a top-level module). `verifiers` is imported with this
module, never by `agentenv_rl.api` until it is asked for.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import verifiers.v1 as vf

from agentenv_rl.adapters.chat import apply_assistant
from agentenv_rl.adapters.starts import base_episode, fresh_episode
from agentenv_rl.adapters.typed import keyword_parameters
from agentenv_rl.episode import Episode, StepResult
from agentenv_rl.split import EpisodeError


class AgentEnvData(vf.TaskData):  # type: ignore[misc]
    """One episode: the task (BUNDLE[:TASK], a folder or a file), its seed and the tools it offers."""

    bundle: str
    seed: int
    tools: list[str] | None = None
    short_descriptions: bool = False


class WorldToolsetConfig(vf.ToolsetConfig):  # type: ignore[misc]
    pass


class WorldState(vf.State):  # type: ignore[misc]
    """What the toolset tells the host after each call: the digest of the trajectory it played."""

    trajectory_digest: str = ""


class WorldToolset(vf.Toolset[WorldToolsetConfig, WorldState]):  # type: ignore[misc]
    """The role's tools, each an MCP tool typed from its JSON Schema, played into this rollout's episode."""

    TOOL_PREFIX = None  # the tools keep the world's names

    def __init__(self, config: WorldToolsetConfig) -> None:
        super().__init__(config)
        self.episode: Episode | None = None

    async def setup_task(self, task: AgentEnvData) -> None:
        data = task  # verifiers hands the rollout's task data; the task's setup runs its own event loop: off this one
        self.episode = await asyncio.to_thread(
            fresh_episode, data.bundle, data.seed, tools=data.tools, short_descriptions=data.short_descriptions
        )

    def register(self, mcp: Any) -> None:
        if self.episode is None:
            raise vf.ToolsetError("the world toolset serves one task's episode; it was started without a task")
        for tool in self.episode.tools():
            mcp.add_tool(self._with_state(self._tool(tool)), name=tool["name"], description=tool.get("description"))

    def _tool(self, tool: dict[str, Any]) -> Any:
        name = tool["name"]
        required = set(tool["inputSchema"].get("required", []))
        parameters = keyword_parameters(tool)

        def call(**arguments: Any) -> str:
            episode = self.episode
            assert episode is not None  # register() refused to start without one
            given = {k: v for k, v in arguments.items() if v is not None or k in required}
            stepped = episode.step({"tool": name, "arguments": given})
            self.state.trajectory_digest = episode.trajectory_digest()
            outcome = {k: stepped.observation[k] for k in ("ok", "result", "error") if k in stepped.observation}
            return json.dumps(outcome, default=str)

        call.__name__ = name
        call.__annotations__ = {**{p.name: p.annotation for p in parameters}, "return": str}
        call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
        return call


def _openai_message(message: Any) -> dict[str, Any]:
    """A verifiers assistant message as the OpenAI chat message `apply_assistant` plays."""
    calls = [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        for call in message.tool_calls or []
    ]
    return {"role": "assistant", "content": message.content, "tool_calls": calls}


def replay(data: AgentEnvData, messages: list[Any]) -> tuple[StepResult, str]:
    """A fresh fork of the start, played the assistant messages of `messages` (the last reply is the answer):
    the graded result, and the trajectory's digest before the answer (what the toolset's calls made)."""
    episode = fresh_episode(data.bundle, data.seed, tools=data.tools, short_descriptions=data.short_descriptions)
    final: StepResult | None = None
    digest = episode.trajectory_digest()
    for message in messages:
        if getattr(message, "role", None) != "assistant":
            continue
        digest = episode.trajectory_digest()
        _, final = apply_assistant(episode, _openai_message(message))
        if final is not None:
            break
    if final is None:  # the model stopped without a final reply: graded as it stands
        digest = episode.trajectory_digest()
        final = episode.step({"answer": ""})
    return final, digest


class AgentEnvTask(vf.Task[AgentEnvData, WorldState]):  # type: ignore[misc]
    @classmethod
    def toolsets(cls, config: vf.TaskConfig) -> list[vf.Toolset]:
        return [WorldToolset(WorldToolsetConfig())]

    @vf.reward  # type: ignore[untyped-decorator]
    async def task_score(self, task: vf.TaskData, trace: vf.Trace) -> float:
        """The task's verifiers' score of the rollout."""
        assert isinstance(task, AgentEnvData)
        final, digest = await asyncio.to_thread(replay, task, list(trace.messages))
        played = trace.state.trajectory_digest
        trace.info["agentenv"] = {
            "score": final.info.get("score"),
            "passed": final.info.get("passed"),
            "verifiers": final.info.get("verifiers"),
            "trajectory_digest": final.info.get("trajectory_digest"),
        }
        if played and played != digest:  # the replay did not see what the toolset played: no honest score
            raise vf.TaskError(f"the replayed trajectory ({digest}) differs from the one the toolset played ({played})")
        return float(final.reward)


class AgentEnvTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]
    bundle: str = "support-refund"
    """The task: BUNDLE[:TASK], a bundle folder or a task file (`--env.taskset.bundle`)."""
    seeds: list[int] = []
    """One task per seed; none means the task's own seed."""
    tools: list[str] | None = None
    """Offer only these of the role's tools."""
    short_descriptions: bool = False
    """Cut each tool description to its first sentence (fewer prompt tokens)."""


class AgentEnvTaskset(vf.Taskset[AgentEnvTask, AgentEnvTasksetConfig]):  # type: ignore[misc]
    """One verifiers task per seed of an agentenv task; its prompt is the task's own."""

    def load(self) -> Iterator[AgentEnvTask]:
        config = self.config
        with ThreadPoolExecutor(1) as worker:  # verifiers iterates on its event loop; setup runs one of its own
            starts = [
                worker.submit(base_episode, config.bundle, seed, tools=config.tools).result()
                for seed in config.seeds or [None]
            ]
        for start in starts:
            if start.has_user:  # its prompt is the user's scenario: never the agent's to read
                raise EpisodeError(
                    f"taskset {config.bundle!r}: this task has a simulated user (prompt_agent's `simulated_user`), "
                    "which AgentEnvTaskset does not run yet; train it with another adapter (rollout, TRL, SkyRL, "
                    "ART, Agent Lightning, verl)"
                )
            yield AgentEnvTask(
                AgentEnvData(
                    name=f"{config.bundle}#{start.seed}",
                    prompt=start.prompt(),
                    bundle=config.bundle,
                    seed=start.seed,
                    tools=config.tools,
                    short_descriptions=config.short_descriptions,
                ),
                config.task,
            )


if __name__ == "__main__":  # verifiers starts each rollout's toolset as `python -m <its module>`
    WorldToolset.run()
