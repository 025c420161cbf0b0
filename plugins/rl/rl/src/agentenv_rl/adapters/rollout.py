"""A plain async rollout function for verl/SkyRL-style loops: `await rollout(policy, task, seed)`.

`policy(messages, tools)` is any callable (sync or async) that returns the next assistant message in OpenAI's
chat format; a model server call in training, a scripted policy in tests. Each rollout runs in a fresh
copy-on-write fork of the task's start for that seed; the task's setup runs once per (task, seed) per process.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from agentenv_rl.adapters.chat import apply_assistant, openai_tools
from agentenv_rl.adapters.starts import base_episode, ready_base
from agentenv_rl.episode import StepResult, Template

Policy = Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any] | Awaitable[dict[str, Any]]]


@dataclass
class Trajectory:
    """One rollout: the conversation, the reward (the task's verifiers' score) and what graded it."""

    messages: list[dict[str, Any]]
    reward: float
    score: float | None
    terminated: bool
    truncated: bool
    trajectory_digest: str
    info: dict[str, Any] = field(default_factory=dict)


async def rollout(
    policy: Policy,
    task: str | Template,
    seed: int | None = None,
    *,
    max_turns: int = 64,
    tools: Sequence[str] | None = None,
) -> Trajectory:
    """Play one episode of `task` (BUNDLE[:TASK], a folder, a file, or a prepared Template) with `policy`;
    `tools=[…]` offers only those tools."""
    base = ready_base(task, seed, tools=tools)
    if base is None:  # the task's setup runs: off the caller's loop
        base = await asyncio.to_thread(partial(base_episode, task, seed, tools=tools))
    episode = base.fork()
    observation, _ = episode.reset()
    functions = openai_tools(observation["tools"])
    messages: list[dict[str, Any]] = [{"role": "user", "content": observation["prompt"]}]
    final: StepResult | None = None
    for _ in range(max_turns):
        reply = policy(messages, functions)
        message = await reply if inspect.isawaitable(reply) else reply
        messages.append(dict(message))
        if not message.get("tool_calls"):  # the answer: graded on this loop (a sync step would need a thread)
            final = await episode.astep({"answer": str(message.get("content") or "")})
            break
        tool_messages, final = apply_assistant(episode, message)  # tool calls take microseconds: stay on the loop
        messages.extend(tool_messages)
        if final is not None:
            break
    if final is None:
        final = await episode.astep({"answer": ""})  # out of turns: graded as it stands
        final.truncated, final.terminated = True, False
    return Trajectory(
        messages,
        final.reward,
        final.info.get("score"),
        final.terminated,
        final.truncated,
        episode.trajectory_digest(),
        final.info,
    )
