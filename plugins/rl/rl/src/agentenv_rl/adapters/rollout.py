"""A plain async rollout function for verl/SkyRL-style loops: `await rollout(policy, task, seed)`.

`policy(messages, tools)` is any callable (sync or async) that returns the next assistant message in OpenAI's
chat format; a model server call in training, a scripted policy in tests. Each rollout runs in a fresh
copy-on-write fork of the task's start for that seed; the task's setup runs once per (task, seed) per process.
The conversation opens with the agent's system prompt (if the task sets one) and the task's prompt; on a task with
a simulated user, the user's opening, and the policy's text goes to the user (its replies are user messages)
until the user ends the conversation.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentenv_runtime import openai_tools

from agentenv_rl.adapters.chat import aapply_assistant, first_messages
from agentenv_rl.adapters.starts import afresh_episode
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
    episode = await afresh_episode(task, seed, tools=tools)
    functions = openai_tools(episode.tools())
    messages = first_messages(episode)
    final: StepResult | None = None
    for _ in range(max_turns):
        reply = policy(messages, functions)
        message = await reply if inspect.isawaitable(reply) else reply
        messages.append(dict(message))
        added, final = await aapply_assistant(episode, message)  # grading and the user's reply: on this loop
        messages.extend(added)
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
