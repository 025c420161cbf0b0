"""ART (OpenPipe's Agent Reinforcement Trainer) rollouts over a task: `await art_rollout(model, task)` returns an
`art.Trajectory`, the unit ART's `gather_trajectory_groups` and `model.train` take.

The episode is played by `rollout` with `model.openai_client()` as the policy (the task's tools offered as
OpenAI function tools); each of the model's turns is kept as the `Choice` ART trains on, the tool results as
tool messages between them, and the reward is the task's verifiers' score. `art` is imported with this module,
never by `agentenv_rl.api` until it is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import art

from agentenv_rl.adapters.rollout import rollout
from agentenv_rl.episode import Template


async def art_rollout(
    model: art.Model,
    task: str | Template,
    seed: int | None = None,
    *,
    max_turns: int = 64,
    tools: Sequence[str] | None = None,
    **completion: Any,
) -> art.Trajectory:
    """One episode of `task` played by `model` (its OpenAI client; `completion` goes to each request)."""
    client = model.openai_client()
    choices: list[Any] = []
    offered: list[dict[str, Any]] = []

    async def policy(messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> dict[str, Any]:
        offered[:] = functions
        reply = await client.chat.completions.create(
            model=model.get_inference_name(), messages=messages, tools=functions, **completion
        )
        choice = reply.choices[0]
        choices.append(choice)
        message: dict[str, Any] = choice.message.model_dump(exclude_none=True)
        return message

    played = await rollout(policy, task, seed, max_turns=max_turns, tools=tools)
    turns = iter(choices)
    mixed = [next(turns) if message["role"] == "assistant" else message for message in played.messages]
    return art.Trajectory(
        messages_and_choices=mixed,
        tools=offered,
        reward=played.reward,
        metrics={
            "score": played.score or 0.0,
            "passed": bool(played.info.get("passed")),
            "truncated": played.truncated,
        },
        metadata={"trajectory_digest": played.trajectory_digest},
    )
